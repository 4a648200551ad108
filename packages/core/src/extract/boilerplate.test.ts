// The boilerplate step on real pages of ../shared/corpus, each case named by the kind of block it is about; the pages
// are read at test time. Each case compares the text with the step (the default) and without (`boilerplate: false`).
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { decodeHtml } from '../warc';
import { WITHIN_CELL, WITHIN_FIGURE, WITHIN_HEADER, WITHIN_NAV, blockLines, blockText, type TextLine } from './block-text';
import { dropBoilerplate } from './boilerplate';
import { extractDocument } from './extract-document';
import { parseDom } from './parse-dom';

const CORPUS = resolve(__dirname, '../../../../../shared/corpus');
const SH = join(CORPUS, 'scrapinghub-article-extraction-benchmark');
const TE = join(CORPUS, 'adbar-trafilatura-eval');
const gt = JSON.parse(readFileSync(join(SH, 'ground-truth.json'), 'utf8')) as Record<string, { url: string }>;
const evaldata = JSON.parse(readFileSync(join(TE, 'evaldata.json'), 'utf8')) as Record<string, { file: string }>;

/** A benchmark page by the start of its id. */
function benchmarkPage(prefix: string): { url: string; html: string } {
  const id = Object.keys(gt).find((k) => k.startsWith(prefix))!;
  return { url: gt[id]!.url, html: gunzipSync(readFileSync(join(SH, 'html', `${id}.html.gz`))).toString('utf8') };
}

/** A trafilatura evaluation page by its URL. */
function evaluationPage(url: string): { url: string; html: string } {
  const file = join(TE, 'eval', `${evaldata[url]!.file}.gz`);
  return { url, html: decodeHtml(gunzipSync(readFileSync(file))).text };
}

/** The page's text with the step and without. */
function both(page: { url: string; html: string }): { on: string[]; off: string[] } {
  const on = extractDocument(page.html, { url: page.url }).text.split('\n');
  const off = extractDocument(page.html, { url: page.url, boilerplate: false }).text.split('\n');
  return { on, off };
}

describe('dropBoilerplate on real pages', () => {
  it('drops a whole-site menu ahead of the article (a <header> of short link lines)', () => {
    const { on, off } = both(benchmarkPage('db6b0816c612')); // chron.com
    expect(off.slice(0, 3)).toEqual(['Sign In', 'Home', 'Subscribe']);
    expect(on).not.toContain('Place a Classified Ad');
    expect(on).not.toContain('Sign In');
    expect(on.some((l) => l.startsWith('HANOI, Vietnam (AP) — U.S. Defense Secretary Mark Esper'))).toBe(true);
  });

  it('drops "related" teasers after the article, keeps the article', () => {
    const { on, off } = both(benchmarkPage('35b158918c67')); // cleveland.com
    expect(off).toContain('25 worst Rock and Roll Hall of Fame Inductees ever');
    expect(on).not.toContain('25 worst Rock and Roll Hall of Fame Inductees ever');
    expect(on).not.toContain('Who will make the Rock Hall in 2020?');
    expect(on.filter((l) => l.startsWith('CLEVELAND, Ohio'))).toHaveLength(1);
  });

  it('drops a tag list, keeps a written-out web address that is a link', () => {
    const { on, off } = both(benchmarkPage('cc03ddb5ef7d')); // autoracing.com.br
    const tags = (l: string) => l.includes('stock car cascavel');
    expect(off.some(tags)).toBe(true);
    expect(on.some(tags)).toBe(false);
    expect(on).toContain('12a etapa: 9 de dezembro – Interlagos');
    expect(on).toContain('www.autoracing.com.br');
  });

  it('drops a one-link insert inside the article ("Related: …")', () => {
    const { on, off } = both(benchmarkPage('c50845a7158a')); // space.com
    const related = "Related: SpaceX's Starship and Super Heavy Mars Rocket in Pictures";
    expect(off).toContain(related);
    expect(on).not.toContain(related);
    expect(on).toContain('The newly selected five are:');
  });

  it('drops image captions', () => {
    const { on, off } = both(benchmarkPage('8b1945303082')); // thesun.co.uk
    const caption = (l: string) => l.startsWith('Beijing Chaoyang Hospital in Beijing');
    expect(off.some(caption)).toBe(true);
    expect(on.some(caption)).toBe(false);
    expect(on).toContain('Nowadays, plague is easily treated with antibiotics.');
  });

  it('keeps short link lines inside the article (a source cited after each quote)', () => {
    const { on } = both(benchmarkPage('680c2848e94a')); // digg.com
    expect(on.filter((l) => l === '[Engadget]')).toHaveLength(2);
  });

  it('keeps table cells that are links', () => {
    const { on } = both(benchmarkPage('51374560f400')); // foxbusiness.com, a stock table
    expect(on).toEqual(expect.arrayContaining(['HD', 'THE HOME DEPOT INC.', 'LOW']));
  });

  it('keeps a table inside a figure', () => {
    const { on } = both(evaluationPage('https://www.thebalance.com/coinbase-vs-coinbase-pro-5116733'));
    expect(on).toEqual(expect.arrayContaining(['SWIFT (GBP)', 'Free deposit, 1 GBP withdrawal']));
  });

  it('leaves a page alone when the rules would take most of it (a slideshow whose captions are the article)', () => {
    const url = 'https://www.popsugar.co.uk/smart-living/Cheap-Homemade-Halloween-Costumes-42432483/amp';
    const page = evaluationPage(url);
    const { on, off } = both(page);
    expect(on).toEqual(off);
    expect(on.some((l) => l.startsWith('What you need: Timberland boots and a grey sweatsuit'))).toBe(true);
  });
});

describe('blockLines', () => {
  it('breaks lines at blocks only, skips script and style, and counts link text and the elements around it', () => {
    const html = `<html><body><p>a\n  first</p><p>b <a href="/x">c d</a><a>e</a></p><script>var x;</script>
      <figure><figcaption>cap</figcaption></figure><nav><a href="/">home</a></nav>
      <header><span>by</span> me</header><table><tr><td>1</td><td>2 <b>two</b></td></tr></table>
      <div> </div><p>f<br>g</p></body></html>`;
    const parsed = parseDom(html, 'linkedom');
    try {
      const lines = blockLines(parsed.document.body!);
      expect(lines.map((l) => [l.text, l.linkChars, l.within])).toEqual([
        ['a first', 0, 0],
        ['b c de', 3, 0],
        ['cap', 0, WITHIN_FIGURE],
        ['home', 4, WITHIN_NAV],
        ['by me', 0, WITHIN_HEADER],
        ['1', 0, WITHIN_CELL],
        ['2 two', 0, WITHIN_CELL],
        ['f', 0, 0],
        ['g', 0, 0],
      ]);
      expect(blockText(parsed.document.body!)).toBe(lines.map((l) => l.text).join('\n'));
    } finally {
      parsed.dispose();
    }
  });
});

describe('dropBoilerplate', () => {
  const line = (text: string, linkChars = 0, within = 0): TextLine => ({ text, linkChars, within });

  it('returns its input when nothing is boilerplate', () => {
    const lines = [line('One paragraph of the article, long enough.'), line('Another one.')];
    expect(dropBoilerplate(lines)).toBe(lines);
  });

  it('returns its input when every line would go', () => {
    const lines = [line('Home', 4), line('News', 4)];
    expect(dropBoilerplate(lines)).toBe(lines);
  });
});
