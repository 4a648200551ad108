import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

// The speed work of #25 must not change a result: every corpus page (1,171: the 181 of the scrapinghub benchmark and
// the 990 of trafilatura's evaluation) is extracted twice, in child processes on the compiled code (`npx tsc -b`
// first; jest's module cache cannot load the lean linkedom): as shipped, and on the reference path — linkedom as
// published, Readability's own `_isElementWithoutContent`, and stock Readability started over on a fresh parse
// whenever an attempt needs the page restored. Title, text, lang, outlinks, byline, excerpt, DOM and article flag must
// be identical on every page.
const DIST = resolve(__dirname, '../../dist');
const CORPUS = resolve(__dirname, '../../../../../shared/corpus');

const script = (reference: boolean): string => `
  const { readFileSync, readdirSync } = require('node:fs');
  const { join } = require('node:path');
  const { gunzipSync } = require('node:zlib');
  const { createHash } = require('node:crypto');
  const DIST = ${JSON.stringify(DIST)};
  if (${reference}) {
    const lean = require(DIST + '/extract/lean-linkedom.js');
    const published = require(require.resolve('linkedom', { paths: [DIST] }));
    lean.loadLinkedom = () => ({ linkedom: published, lean: false });
    const { Readability } = require(require.resolve('@mozilla/readability', { paths: [DIST] }));
    require(DIST + '/extract/readability-fast-paths.js').isElementWithoutContent = (n) => Readability.prototype._isElementWithoutContent.call(Readability.prototype, n);
    const rr = require(DIST + '/extract/run-readability.js');
    const run = rr.runReadability;
    rr.runReadability = (doc, reparse) => run(doc, reparse);
  }
  const { extractDocument } = require(DIST + '/extract/extract-document.js');
  const { decodeHtml } = require(DIST + '/warc');
  const CORPUS = ${JSON.stringify(CORPUS)};
  const sh = join(CORPUS, 'scrapinghub-article-extraction-benchmark');
  const te = join(CORPUS, 'adbar-trafilatura-eval');
  const files = [
    ...readdirSync(join(sh, 'html')).sort().map((f) => join(sh, 'html', f)),
    ...readdirSync(join(te, 'eval')).sort().map((f) => join(te, 'eval', f)),
  ];
  const out = {};
  for (const f of files) {
    const html = decodeHtml(gunzipSync(readFileSync(f))).text;
    let r;
    try {
      r = extractDocument(html, { url: 'https://example.com/a/page.html' });
    } catch (err) {
      r = { error: err.code };
    }
    out[f.slice(CORPUS.length)] = createHash('sha256').update(JSON.stringify(r)).digest('hex').slice(0, 16);
  }
  process.stdout.write(JSON.stringify(out));`;

describe('extraction fast paths on all corpus pages', () => {
  it('give the results of the reference path on every page', () => {
    const runs = [false, true].map((reference) => {
      const run = spawnSync(process.execPath, ['-e', script(reference)], { timeout: 600_000, encoding: 'utf8', maxBuffer: 1 << 26 });
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
      return JSON.parse(run.stdout) as Record<string, string>;
    });
    const [shipped, reference] = runs as [Record<string, string>, Record<string, string>];
    expect(Object.keys(shipped)).toHaveLength(1171);
    const differing = Object.keys(reference).filter((page) => shipped[page] !== reference[page]);
    expect(differing).toEqual([]);
  }, 900_000);
});
