import { spawnSync } from 'node:child_process';
import { cdataAsHtmlParsesIt, dropInterBlockWhitespace, stripInert } from './html-prep';

// The regex stripInert was until #24: right, but a page of 40,000 `<!--` took it 2 s and one of `<script `
// 17 s (every `<` searched again to the end for a terminator that was not there). It stays the reference.
const INERT_RE = /<!--[\s\S]*?-->|<(script|style|noscript)\b([^>]*)>[\s\S]*?<\/\1\s*>/gi;
const regexStripInert = (html: string): string =>
  html.replace(INERT_RE, (m: string, tag: string | undefined, attrs: string | undefined) =>
    tag !== undefined && tag.toLowerCase() === 'script' && /ld\+json/i.test(attrs ?? '') ? m : '');

/** A small seeded generator (mulberry32): the same strings on every run. */
function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % n);
  };
}

describe('stripInert', () => {
  it('ends an element at an end tag with attributes or whitespace before its ">", as the HTML tokenizer does (#21)', () => {
    // a real page: `</script` then a comment before any '>' — the script ended there, not at the page's next </script>
    const html = '<body><script>a()</script\n\n <!--plugin--><p>article</p><a href="/x">x</a><script>b()</script><p>end</p>'
      + '<style>.c{}</style/><p>kept</p><script>c()</scriptx>d()</script><p>last</p>';
    expect(stripInert(html)).toBe('<body><p>article</p><a href="/x">x</a><p>end</p><p>kept</p><p>last</p>');
  });

  it('removes comments, scripts, styles and noscripts, keeping JSON-LD and the text', () => {
    const html = '<p>a<!-- c --></p><script>x()</script><STYLE a=1>.b{}</style ><noscript><img></noscript>'
      + '<script type="application/ld+json">{"@type":"NewsArticle"}</script><p>b</p>';
    expect(stripInert(html)).toBe('<p>a</p><script type="application/ld+json">{"@type":"NewsArticle"}</script><p>b</p>');
  });

  it('leaves unterminated comments and elements as they are, however many there are', () => {
    for (const [unit, count] of [['<!--', 40_000], ['<script>', 20_000], ['<script ', 40_000], ['<style x="', 20_000]] as const) {
      const html = `<p>kept</p><!-- gone -->${unit.repeat(count)}`;
      expect(stripInert(html)).toBe(`<p>kept</p>${unit.repeat(count)}`);
    }
  });

  it('gives what the regex gave on 50,000 seeded token strings', () => {
    const tokens = [
      '<!--', '-->', '<!-->', '<script>', '<SCRIPT type="application/ld+json">', '</script>', '</SCRIPT >', '<style>',
      '</style>', '<noscript>', '</noscript\n>', '<scriptx>', '<script-a>', '<script', '<s', '<n', 'a', ' ', '>', '<',
      '<p>', '</p>', 'x>',
    ];
    const next = rng(24);
    const differ: string[] = [];
    for (let k = 0; k < 50_000; k++) {
      let s = '';
      for (let j = next(14); j > 0; j--) s += tokens[next(tokens.length)];
      if (stripInert(s) !== regexStripInert(s)) differ.push(s);
    }
    expect(differ).toEqual([]);
  });
});

describe('dropInterBlockWhitespace', () => {
  it('drops whitespace between block tags only', () => {
    expect(dropInterBlockWhitespace('<div>\n  <p>a</p>\n  <p>b <b>c</b> <i>d</i></p>\n</div>')).toBe('<div><p>a</p><p>b <b>c</b> <i>d</i></p></div>');
  });

  it('handles tags without a closing ">" (each used to rescan the rest of the input)', () => {
    const html = `<div> <p>x</p>${'<div '.repeat(40_000)}`;
    expect(dropInterBlockWhitespace(html)).toBe(`<div><p>x</p>${'<div '.repeat(40_000)}`);
  });
});

describe('cdataAsHtmlParsesIt', () => {
  it('makes a bogus comment to the next > of a CDATA start in HTML content, and text of a CDATA section in SVG and MathML, as the HTML parser does', () => {
    expect(cdataAsHtmlParsesIt('<p><![CDATA[x]]>y</p>')).toBe('<p><!--[CDATA[x]]-->y</p>');
    expect(cdataAsHtmlParsesIt('<li><![CDATA[-->lorem')).toBe('<li><!--[CDATA[---->lorem');
    expect(cdataAsHtmlParsesIt('<li><![CDATA[ no end')).toBe('<li><!--[CDATA[ no end-->');
    const svg = '<svg><text><![CDATA[ a > b & <c> ]]></text></svg><p><![CDATA[c]]>d</p>';
    expect(cdataAsHtmlParsesIt(svg)).toBe('<svg><text> a > b &amp; &lt;c> </text></svg><p><!--[CDATA[c]]-->d</p>');
    expect(cdataAsHtmlParsesIt('<MATH><![CDATA[x]]></MATH><![CDATA[y]]>')).toBe('<MATH>x</MATH><!--[CDATA[y]]-->');
    expect(cdataAsHtmlParsesIt('<SVG>--><![CDATA[<li>--> <!DOCTYPE html>')).toBe('<SVG>-->&lt;li>--> &lt;!DOCTYPE html>');
    const plain = '<p>nothing to do</p>';
    expect(cdataAsHtmlParsesIt(plain)).toBe(plain);
  });

  it('is linear in the number of CDATA starts (it searched back from each one: 440 KB took 32 s)', () => {
    const comments = '<![CDATA[x>'.repeat(40_000);
    expect(cdataAsHtmlParsesIt(comments)).toBe('<!--[CDATA[x-->'.repeat(40_000));
    const sections = `<svg>${'<![CDATA[x]]></svg><svg>'.repeat(20_000)}`;
    expect(cdataAsHtmlParsesIt(sections)).toBe(`<svg>${'x</svg><svg>'.repeat(20_000)}`);
  });

  // Each with the text jsdom gives it.
  it.each([
    ['the 73-byte page', "<html><body><li><![CDATA[-->lorem ipsum dolor lorem ipsum dolor '<!DOCTYPE html>", "lorem ipsum dolor lorem ipsum dolor '"],
    ['its SVG variant', "<html><body><SVG>--><![CDATA[<li>--> href='/x'&amp;<!DOCTYPE html>", "--><li>--> href='/x'&amp;<!DOCTYPE html>"],
  ])('%s on which Readability on linkedom never returned now extracts, in a process of its own with a time limit', (_, page, text) => {
    // in a child: an in-thread loop cannot be interrupted, and a regression must fail this test, not hang the run
    const script = `const { extractDocument } = require(${JSON.stringify(require.resolve('../../dist/extract/extract-document.js'))});
      const r = extractDocument(${JSON.stringify(page)}, { url: 'https://example.com/', dom: 'linkedom' });
      process.stdout.write(JSON.stringify({ text: r.text }));`;
    const run = spawnSync(process.execPath, ['-e', script], { timeout: 30_000, encoding: 'utf8' });
    expect({ signal: run.signal, status: run.status, stderr: run.stderr }).toEqual({ signal: null, status: 0, stderr: '' });
    expect((JSON.parse(run.stdout) as { text: string | null }).text).toBe(text);
  });
});
