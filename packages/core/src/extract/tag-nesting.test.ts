import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { dropInterBlockWhitespace, stripInert } from './html-prep';
import { parseDom, type DomImpl } from './parse-dom';
import { scanTagNesting } from './tag-nesting';
import { measureTree } from './tree-stats';

const SH = resolve(__dirname, '../../../../../shared/corpus/scrapinghub-article-extraction-benchmark');
const NO_LIMIT = 1e9;

/** Depth and element count of the DOM `dom` builds (html and body included). */
function domStats(html: string, dom: DomImpl): { depth: number; elements: number } {
  const parsed = parseDom(html, dom);
  try {
    const s = measureTree(parsed.document.documentElement!, NO_LIMIT, NO_LIMIT);
    return { depth: s.depth, elements: s.elements };
  } finally {
    parsed.dispose();
  }
}

const scan = (html: string) => scanTagNesting(html, NO_LIMIT, NO_LIMIT);

describe('scanTagNesting', () => {
  // Each case: markup the parsers close or move by themselves, and the depth the scan must not exceed.
  const cases: Array<[string, string, number]> = [
    ['plain nesting', '<div><div><p>x</p></div></div>', 3],
    ['unclosed <p>, <li>, <td>, <option>', '<p>a<p>b<p>c<ul><li>1<li>2<li>3</ul><table><tr><td>1<td>2<td>3</table><select><option>a<option>b</select>', 3],
    ['block start closes an open <p>', '<p>a<div>b<p>c<div>d<p>e<div>f</div></div></div>', 3],
    ['void and self-closed tags', '<br><img src=x><input><hr><svg><path/><path/></svg><wbr>', 2],
    ['end tag closes what is open above its match', '<div><span><b><i>x</div><div>y</div>', 4],
    ['quoted ">" and tags inside attributes are not tags', `<div data-x='{"a": "<b><i><u>"}' title="a>b"><p>x</p></div>`, 2],
    ['raw text is skipped', '<title><div><div></title><textarea><div><div><div></textarea><p>x</p>', 1],
    ['an element misplaced in a table goes beside it', '<table><div><div><div>x</div></div></div><tr><td>y</td></tr></table>', 3],
    ['a table opened in a table closes it', '<table><table><table><tr><td>x</table></table></table>', 4],
    ['a new <a> closes the open one', '<a href=1><span>x<a href=2><span>y<a href=3>z', 2],
    ['unterminated comment ends the markup', '<div><!-- <div><div><div><div>', 1],
    ['a tag cut off by the end makes nothing', '<div><div data-x="<div><div><div>', 2],
  ];
  test.each(cases)('%s: estimate <= depth on both DOMs', (_name, body, atMost) => {
    const bare = scan(body);
    expect(bare.depth).toBeLessThanOrEqual(atMost);
    for (const html of [body, `<html><body>${body}</body></html>`]) {
      const s = scan(html);
      expect(s.depth).toBe(bare.depth);
      for (const dom of ['linkedom', 'jsdom'] as const) {
        const d = domStats(html, dom);
        expect(s.depth).toBeLessThanOrEqual(d.depth);
        expect(s.elements).toBeLessThanOrEqual(d.elements);
      }
      const h5 = scanTagNesting(html, NO_LIMIT, NO_LIMIT, { html5: true });
      expect(h5.depth).toBeLessThanOrEqual(domStats(html, 'jsdom').depth);
    }
  });

  it('with html5, keeps a block open past a formatting end tag as HTML\'s adoption agency does (jsdom), not htmlparser2 (linkedom)', () => {
    const html = '<a><div></a>'.repeat(300); // found by the fuzz suite: jsdom nests these 300 deep
    expect(scan(html).depth).toBe(2);
    expect(scanTagNesting(html, NO_LIMIT, NO_LIMIT, { html5: true }).depth).toBeGreaterThanOrEqual(300);
    expect(scanTagNesting(html, NO_LIMIT, NO_LIMIT, { html5: true }).depth).toBeLessThanOrEqual(domStats(html, 'jsdom').depth);
    expect(domStats(`<html><body>${html}</body></html>`, 'linkedom').depth).toBeLessThan(10);
    // without a block inside, the formatting element simply closes
    expect(scanTagNesting('<b><i>x</b>'.repeat(300), NO_LIMIT, NO_LIMIT, { html5: true }).depth).toBe(2);
  });

  it('measures nesting that is really there, and stops at the first limit passed', () => {
    expect(scan('<table><td>'.repeat(1_000)).depth).toBeGreaterThanOrEqual(1_000);
    expect(scan('<div>'.repeat(300)).depth).toBe(300);
    expect(scanTagNesting('<div>'.repeat(300), NO_LIMIT, 256)).toEqual({ elements: 257, depth: 257, overElements: false, overDepth: true });
    expect(scanTagNesting('<p>x</p>'.repeat(50), 10, 128)).toEqual({ elements: 11, depth: 1, overElements: true, overDepth: false });
  });

  it('errs low on real pages: every 4th scrapinghub page on linkedom (all 1,171 corpus pages on both DOMs: docs/extraction.md)', () => {
    const gt = JSON.parse(readFileSync(join(SH, 'ground-truth.json'), 'utf8')) as Record<string, unknown>;
    const ids = Object.keys(gt).sort().filter((_, i) => i % 4 === 0);
    let deepest = 0;
    for (const id of ids) {
      const html = dropInterBlockWhitespace(stripInert(gunzipSync(readFileSync(join(SH, 'html', `${id}.html.gz`))).toString('utf8')));
      const s = scan(html);
      deepest = Math.max(deepest, s.depth);
      const d = domStats(html, 'linkedom');
      expect(s.depth).toBeLessThanOrEqual(d.depth);
      expect(s.elements).toBeLessThanOrEqual(d.elements);
    }
    expect(deepest).toBeGreaterThan(10);
    expect(deepest).toBeLessThan(100); // under the default cap of 128
  }, 60_000);
});
