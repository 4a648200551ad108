// The extraction fuzz target (#24): HTML into extractDocument directly (in the test's thread, no pool: a slow input
// must show as slow, not be hidden by the pool's time limit). Inputs: windows of real pages, mutated; tag soup; and
// deep nesting of the shapes that are costly to parse (1,000 nested `<table><td>` held jsdom for seconds). See
// harness.ts for the seed and replay variables. An input costs ~11 ms of CPU on a quiet box (~100× a CDX line), so
// the target's 10,000 inputs are dealt to two test files (extract-0/extract-1.fuzz.test.ts, one jest worker each).
import { extractDocument } from '@ccpipe/core';
import { excerpt, explain, fuzz, fuzzTimeout, mutateString, type Rng } from './harness';
import { htmlPages } from './seeds';

const TAGS = ['div', 'p', 'span', 'a', 'b', 'i', 'table', 'tr', 'td', 'th', 'tbody', 'ul', 'ol', 'li', 'dl', 'dt', 'dd', 'select',
  'option', 'form', 'button', 'h1', 'h3', 'article', 'section', 'nav', 'template', 'svg', 'math', 'title', 'textarea', 'script',
  'style', 'noscript', 'iframe', 'object', 'font', 'center', 'pre', 'br', 'img', 'input', 'html', 'body', 'head', 'frameset', 'plaintext'];
const SNIPPETS = ['<!--', '-->', '<!DOCTYPE html>', '<![CDATA[', ']]>', '&amp;', '&#0;', '&#x110000;', '&nbsp', '<', '>', '</', '/>', '"', "'",
  '=', ' href="', " href='/x'", ' style="display:none"', ' hidden', ' lang="en"', ' class="article content"', ' id="main"',
  '<base href="//">', '<base href="javascript:x">', '<a href="http://[::1">', '<a href="%zz">', '\u0000', '\ud800', '\ufeff', 'text words here. '];
// Shapes that nest when repeated, and so make a DOM costly to build (1,000 `<table><td>` held jsdom 3–5 s): up to
// 3,000 repeats. The caps refuse all but the shallowest in about a millisecond.
const NESTS = ['<table><td>', '<table><tr><td>', '<div>', '<ul><li>', '<span>', '<b>', '<p><div>', '<font>', '<template>',
  '<svg><g>', '<dl><dd>', '<a><div></a>', '<blockquote>', '<i><div></i>'];
/**
 * Shapes that stay flat in at least one parser: they cost per element, not per level, so up to 3,000 repeats (~35 KB).
 * The last two are what this suite found slow while pages without `<html>`/`<body>` went to jsdom (#24,
 * docs/extraction.md "Known slow inputs"): 1,200 flat `<select><option>` or 1,000 `<li>x</li>` took 1–6 s of CPU,
 * `<a href="x">` × 2,000 and `<b><p>` × 1,000–2,000 2–9 s (jsdom's adoption agency and reconstruction of formatting
 * elements). Such pages now get a synthesized skeleton and go to linkedom (0.02–0.6 s).
 */
const FLATS = ['<select><option>', '<li>', '<td>', '<table><div>', '<li>x</li>', '<a href="x">', '<b><p>'];
const MAX_FLAT = 3_000;
const MAX_NEST = 3_000;

function tag(r: Rng): string {
  const name = r.pick(TAGS);
  if (r.chance(0.45)) return `</${name}>`;
  const attrs = r.chance(0.4) ? r.pick(SNIPPETS.filter((s) => s.startsWith(' '))) : '';
  return `<${r.chance(0.1) ? name.toUpperCase() : name}${attrs}${r.chance(0.1) ? '/' : ''}>`;
}

/** Random markup: tags, snippets and words, up to 2,000 tokens. */
function tagSoup(r: Rng): string {
  const parts: string[] = r.chance(0.5) ? ['<html><body>'] : [];
  for (let n = r.next(2_000); n > 0; n--) parts.push(r.chance(0.5) ? tag(r) : r.chance(0.5) ? r.pick(SNIPPETS) : 'lorem ipsum dolor ');
  return parts.join('');
}

/** One shape repeated, nesting or flat, with or without the skeleton, end tags and a page around it. */
function nest(r: Rng): string {
  const flat = r.chance(0.3);
  const shape = r.pick(flat ? FLATS : NESTS);
  const depth = Math.floor(r.float() ** 0.7 * (flat ? MAX_FLAT : MAX_NEST));
  const closeTags = r.chance(0.3) ? [...shape.matchAll(/<(\w+)/g)].map((m) => `</${m[1]}>`).reverse().join('').repeat(depth) : '';
  const inner = `${shape.repeat(depth)}deep text${closeTags}`;
  return r.chance(0.5) ? `<html><body><p>before</p>${inner}<p>after</p></body></html>` : inner;
}

/** A window of a real page (up to 16 KB), mutated; sometimes with a nest inserted in the middle. */
function pageWindow(r: Rng): string {
  const page = r.pick(htmlPages());
  const len = r.next(16 * 1024);
  const from = r.chance(0.5) ? 0 : r.next(page.length);
  let html = page.slice(from, from + len);
  if (from > 0 && r.chance(0.5)) html = `<html><body>${html}`; // a window from the middle has no skeleton: half get one
  if (r.chance(0.7)) html = mutateString(r, html, [...SNIPPETS, ...TAGS.map((t) => `<${t}>`)]);
  if (r.chance(0.1)) {
    const at = r.next(html.length + 1);
    html = html.slice(0, at) + r.pick(NESTS).repeat(r.next(MAX_NEST)) + html.slice(at);
  }
  return html;
}

/** Runs shard `shard` of `shards` of the extraction target (cases i with i % shards === shard) as one jest test. */
export function extractionFuzz(shard: number, shards: number, file: string): void {
  describe(`fuzz: extraction (shard ${shard + 1} of ${shards})`, () => {
    it('HTML into extractDocument (page windows, tag soup, deep nesting)', async () => {
      const report = await fuzz<string>({
        name: 'extract',
        count: 10_000,
        shard: { index: shard, of: shards },
        yieldEvery: 1,
        generate(r) {
          const k = r.next(20);
          return k < 9 ? pageWindow(r) : k < 16 ? tagSoup(r) : nest(r);
        },
        run(html) {
          extractDocument(html, { url: 'https://example.com/a/b.html' });
        },
        describe: (html) => excerpt(html, 300),
      });
      expect(explain(report, file)).toBe('');
    }, fuzzTimeout(600_000 / shards));
  });
}
