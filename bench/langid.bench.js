'use strict';
// Language identification of the extracted text (#quality): JavaScript libraries compared on the labels the corpus
// really has, then timed. Nothing of the corpus is copied into the repo; the extracted texts are cached under the OS
// temp dir (the first run extracts ~3,100 pages, ~1 minute).
//
// Label sources (each text is what extractDocument gives for the page, as the worker would store it):
//  - html-lang: the 181 scrapinghub + 990 trafilatura-eval pages whose `<html lang>` is set; its primary subtag as
//    ISO 639-3 (`en-US` → eng, `zh-CN` → zho). A site's template language, not a judgement of the text.
//  - cdx-real / cdx-bulk: cc-mirror-dev (both crawls), every status-200 capture whose CDX line has `languages`; the
//    first code is the label; the WARC record at the line's offset/length is read, decoded and extracted. Its labels
//    are the mirror generator's (not CLD2's); `bulk` are the three synthetic bulk hosts (*.bulk-3.*), which wrap real
//    German/Korean/Norwegian pages and label them all `eng` (docs/mirror.md), so `cdx-real` is the meaningful half.
//  - cld2: Common Crawl's own CLD2 result for real CC records, from the `languages-cld2` line of the WARC metadata
//    record next to each response (chatnoir-resiliparse: 16 records of CC-MAIN-2020-34, whirlwind: 1 of 2024-22).
// Agreement = the library's code equals the label, after folding individual languages into the macrolanguage CC
// writes (cmn → zho, nob → nor, ...); a null answer counts as a miss.
//
// Speed: each (library, page set) pass is a process of its own, libraries alternated in a rotating order, ROUNDS
// rounds; docs per CPU-second of the identification calls alone (text already extracted), median over rounds.
// Candidates not installed in the repo are looked up in LANGID_CANDIDATES (a folder where they were installed with
// `npm install --prefix DIR --ignore-scripts eld tinyld ...`); missing ones are skipped and said so.
//   node bench/langid.bench.js [--rounds N]          env: BENCH_ROUNDS (default 5), LANGID_CANDIDATES
// Needs `npx tsc -b` first.
const { readFileSync, readdirSync, writeFileSync, existsSync, mkdirSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { gunzipSync } = require('node:zlib');
const { tmpdir, loadavg } = require('node:os');
const { childOf, median, loadAvg } = require('./lib/proc');

const REPO = resolve(__dirname, '..');
const CORPUS = resolve(REPO, '../shared/corpus');
const CACHE_VERSION = 1;
const CACHE = join(tmpdir(), 'ccpipe-langid-bench', `texts-v${CACHE_VERSION}.json`);

// ---------------------------------------------------------------------------------------------------------------
// The labelled texts

/** ISO 639-1/-2B/-3 → the ISO 639-3 code CC writes; individual languages folded into CC's macrolanguage. */
function codeMapper() {
  const { iso6393 } = require('iso-639-3');
  const to3 = new Map();
  for (const l of iso6393) {
    to3.set(l.iso6393, l.iso6393);
    if (l.iso6391) to3.set(l.iso6391, l.iso6393);
    if (l.iso6392B) to3.set(l.iso6392B, l.iso6393);
  }
  const { MACROLANGUAGE_OF } = require("@ccpipe/core");
  return (code) => {
    if (!code) return null;
    const c = to3.get(String(code).toLowerCase()) ?? null;
    return c === null ? null : (MACROLANGUAGE_OF[c] ?? c);
  };
}

function extractText(core, html, url) {
  try {
    const e = core.extractDocument(html, { url });
    return { text: e.text, lang: e.lang };
  } catch {
    return null;
  }
}

/** [{set, id, label, text}] for every labelled page of the corpus (label null: unlabelled, speed only). */
function loadTexts() {
  if (existsSync(CACHE)) return JSON.parse(readFileSync(CACHE, 'utf8'));
  const core = require('@ccpipe/core');
  const to3 = codeMapper();
  const out = [];
  const t0 = Date.now();
  // html-lang: both page sets of the extraction benchmarks.
  const sh = join(CORPUS, 'scrapinghub-article-extraction-benchmark');
  const gt = JSON.parse(readFileSync(join(sh, 'ground-truth.json'), 'utf8'));
  for (const id of Object.keys(gt).sort()) {
    const html = core.decodeHtml(gunzipSync(readFileSync(join(sh, 'html', `${id}.html.gz`)))).text;
    const e = extractText(core, html, gt[id].url);
    if (e) out.push({ set: 'articles', id, label: to3(e.lang?.split('-')[0]), text: e.text });
  }
  const tr = join(CORPUS, 'adbar-trafilatura-eval');
  const urlOf = new Map(
    readFileSync(join(tr, 'source_paths.tsv'), 'utf8').split('\n').slice(1).filter(Boolean).map((l) => l.split('\t')).map(([u, f]) => [f, u]),
  );
  for (const f of readdirSync(join(tr, 'eval')).sort()) {
    const u = urlOf.get(`eval/${f}`);
    const html = core.decodeHtml(gunzipSync(readFileSync(join(tr, 'eval', f)))).text;
    const e = extractText(core, html, /^https?:/.test(u ?? '') ? u : 'https://example.com/page.html');
    if (e) out.push({ set: 'trafilatura', id: f, label: to3(e.lang?.split('-')[0]), text: e.text });
  }
  // cdx-real / cdx-bulk: cc-mirror-dev's CDX lines and the WARC records they point at.
  const mirror = join(CORPUS, 'cc-mirror-dev');
  const warcs = new Map();
  for (const crawl of readdirSync(join(mirror, 'cc-index/collections')).sort()) {
    const dir = join(mirror, 'cc-index/collections', crawl, 'indexes');
    for (const shard of readdirSync(dir).filter((f) => f.startsWith('cdx-')).sort()) {
      for (const line of gunzipSync(readFileSync(join(dir, shard))).toString('utf8').split('\n')) {
        if (!line) continue;
        const j = JSON.parse(line.slice(line.indexOf('{')));
        if (j.status !== '200' || !j.languages) continue;
        if (!warcs.has(j.filename)) warcs.set(j.filename, readFileSync(join(mirror, j.filename)));
        const bytes = warcs.get(j.filename).subarray(Number(j.offset), Number(j.offset) + Number(j.length));
        const rec = core.readWarcRecord(bytes, { lenientHttp: true });
        if (!rec.http) continue;
        const html = core.decodeHtml(rec.http.payload, { contentType: rec.http.headers.get('content-type') }).text;
        const e = extractText(core, html, j.url);
        const host = new URL(j.url).hostname.toLowerCase();
        if (e) out.push({ set: /\.bulk-3\./.test(host) ? 'cdx-bulk' : 'cdx-real', id: `${crawl} ${j.url} ${line.split(' ')[1]}`, label: to3(j.languages.split(',')[0]), text: e.text });
      }
    }
  }
  // cld2: CC's own language result in the metadata record of real CC responses.
  for (const f of ['chatnoir-resiliparse/warcfile.warc.gz', 'commoncrawl-whirlwind-python/whirlwind.warc.gz']) {
    const byResponse = new Map();
    const pages = [];
    for (const entry of core.iterateWarcFile(readFileSync(join(CORPUS, f)))) {
      const r = entry.record;
      if (r.type === 'metadata') {
        const m = /^languages-cld2: (.*)$/m.exec(Buffer.from(r.block).toString('utf8'));
        const to = r.headers.get('warc-concurrent-to');
        if (m && to) byResponse.set(to.trim(), JSON.parse(m[1]));
      } else if (r.type === 'response' && r.http && r.http.status === 200) {
        pages.push(r);
      }
    }
    for (const r of pages) {
      const cld2 = byResponse.get(r.recordId);
      if (!cld2 || !cld2.languages?.[0]) continue;
      const html = core.decodeHtml(r.http.payload, { contentType: r.http.headers.get('content-type') }).text;
      const e = extractText(core, html, r.targetUri);
      if (e) out.push({ set: 'cld2', id: `${f} ${r.targetUri}`, label: to3(cld2.languages[0]['code-iso-639-3']), text: e.text });
    }
  }
  mkdirSync(join(tmpdir(), 'ccpipe-langid-bench'), { recursive: true });
  writeFileSync(CACHE, JSON.stringify(out));
  process.stderr.write(`extracted ${out.length} texts in ${((Date.now() - t0) / 1000).toFixed(1)} s (cached in ${CACHE})\n`);
  return out;
}

module.exports = { loadTexts, codeMapper };

if (require.main === module) {
  const texts = loadTexts();
  const by = {};
  for (const t of texts) {
    by[t.set] ??= { n: 0, labelled: 0, labels: {} };
    by[t.set].n++;
    if (t.label) {
      by[t.set].labelled++;
      by[t.set].labels[t.label] = (by[t.set].labels[t.label] ?? 0) + 1;
    }
  }
  console.log(JSON.stringify(by, null, 1));
}
