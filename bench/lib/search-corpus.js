'use strict';
// The search bench's documents and judged queries, made from ../shared/corpus at run time (nothing of the corpus is
// copied into the repo; extracted texts are cached under the OS temp dir).
//
// Sources: the 181 articles of scrapinghub-article-extraction-benchmark (ground-truth articleBody, <title> from the
// page) and the 990 pages of adbar-trafilatura-eval (English, German, French, … text extracted by ccpipe's own
// extractDocument). Each source's paragraphs (≥ 40 chars) are split in two: every 4th is HELD OUT (used only by the
// real page itself), the others are the material of the synthetic documents.
//
// Documents (seeded, deterministic): every source page once as itself ("real" docs, on its own domain), then
// synthetic docs up to the wanted count. A synthetic doc has a MAIN source (uniform over sources): 2–10 paragraphs,
// about 60% drawn from the main source's non-held-out paragraphs and the rest from random other sources, a title made
// of the main source's title with ~30% of its words dropped; a domain from a Zipf-like draw over DOMAINS names; a ts
// uniform over two years. So a topic (a source) has ~N/sources synthetic docs about it, and a held-out phrase occurs
// in exactly one document.
//
// Judged queries (graded relevance, for nDCG@10 and the reciprocal rank of the real page):
//  - 'phrase': a quoted run of 4 words from a held-out paragraph of a source → relevant: its real page (grade 2);
//  - 'words': 4 of the rarest words (by corpus document frequency, ≥ 4 letters) of a held-out paragraph, unquoted →
//    relevant: its real page (grade 2);
//  - 'title': the real page's title, unquoted → relevant: the real page (grade 2) and the synthetic docs whose main
//    source it is (grade 1).
// Each query also has the real page's domain (for the domain-scoped runs).
const { readFileSync, readdirSync, writeFileSync, existsSync, mkdirSync } = require('node:fs');
const { gunzipSync } = require('node:zlib');
const { createHash } = require('node:crypto');
const { join } = require('node:path');
const { tmpdir } = require('node:os');

const CORPUS = join(__dirname, '..', '..', '..', 'shared', 'corpus');
const CACHE_VERSION = 1;

/** mulberry32: a small seeded PRNG, [0, 1). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function titleOf(html) {
  const m = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  if (!m) return null;
  const t = m[1].replace(/\s+/g, ' ').trim()
    .replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#0?39;|&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>')
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)));
  return t || null;
}

function hostOf(url) {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return 'unknown.example';
  }
}

/** The source pages: {url, domain, title, text}. Trafilatura-eval texts are extracted once and cached. */
function loadSources() {
  const cacheDir = join(tmpdir(), 'ccpipe-search-bench');
  mkdirSync(cacheDir, { recursive: true });
  const cache = join(cacheDir, `sources-v${CACHE_VERSION}.json`);
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8'));
  const out = [];
  const sh = join(CORPUS, 'scrapinghub-article-extraction-benchmark');
  const truth = JSON.parse(readFileSync(join(sh, 'ground-truth.json'), 'utf8'));
  for (const [id, v] of Object.entries(truth)) {
    const html = gunzipSync(readFileSync(join(sh, 'html', `${id}.html.gz`))).toString('utf8');
    out.push({ url: v.url, domain: hostOf(v.url), title: titleOf(html), text: v.articleBody });
  }
  const { extractDocument } = require('../../packages/core/dist/extract');
  const tr = join(CORPUS, 'adbar-trafilatura-eval');
  const paths = readFileSync(join(tr, 'source_paths.tsv'), 'utf8').trim().split('\n').slice(1).map((l) => l.split('\t'));
  for (const [url, file] of paths) {
    if (!url || !file) continue;
    let html;
    try {
      html = gunzipSync(readFileSync(join(tr, file))).toString('utf8');
    } catch {
      continue;
    }
    try {
      const e = extractDocument(html, { url });
      if (e.text.length >= 200) out.push({ url, domain: hostOf(url), title: e.title ?? titleOf(html), text: e.text });
    } catch {
      // a page the extractor refuses is simply not a source
    }
  }
  writeFileSync(cache, JSON.stringify(out));
  return out;
}

const WORD = /[\p{L}\p{N}]+/gu;
const HAS_WORD = /[\p{L}\p{N}]/u;
const fold = (w) => w.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();

/**
 * The bench's corpus: `docs(i)` makes document i (0 ≤ i < n) on demand (strings are not kept: 200k docs of text
 * would hold ~400 MB), `meta[i]` its small fields, and the judged queries.
 */
function makeCorpus({ n, seed = 20261127, domains = 20000, partitions = 256, queriesPerKind = 100 }) {
  const sources = loadSources();
  const paras = sources.map((s) => s.text.split('\n').map((p) => p.trim()).filter((p) => p.length >= 40));
  const pool = []; // [source, paragraph] usable by synthetic docs
  const held = sources.map(() => []);
  paras.forEach((ps, s) => ps.forEach((p, j) => (j % 4 === 3 ? held[s].push(p) : pool.push([s, j]))));
  const bySource = paras.map((ps) => ps.map((_, j) => j).filter((j) => j % 4 !== 3));
  const usable = sources.map((_, s) => s).filter((s) => bySource[s].length > 0);
  const r = rng(seed);
  const T0 = 1_700_000_000;
  const YEAR2 = 2 * 365 * 86400;
  const domainName = (k) => `site${k}.example${k % 7 === 0 ? '.de' : '.com'}`;
  const prefixOf = (domain) => createHash('sha1').update(domain).digest().readUInt16BE(0) % partitions;

  // meta of every doc: [source main (real docs: the source itself), real?, domain, ts, docSeed]
  const meta = new Array(n);
  for (let s = 0; s < sources.length && s < n; s++) {
    meta[s] = { main: s, real: true, domain: sources[s].domain, ts: T0 + Math.floor(r() * YEAR2), docSeed: 0 };
  }
  for (let i = sources.length; i < n; i++) {
    const main = usable[Math.floor(r() * usable.length)];
    const d = Math.floor(Math.pow(r(), 3) * domains); // a few big sites, a long tail
    meta[i] = { main, real: false, domain: domainName(d), ts: T0 + Math.floor(r() * YEAR2), docSeed: Math.floor(r() * 2 ** 31) };
  }
  for (const m of meta) m.prefix = prefixOf(m.domain);

  function doc(i) {
    const m = meta[i];
    const src = sources[m.main];
    if (m.real) return { url: src.url, domain: m.domain, ts: m.ts, title: src.title, text: src.text };
    const dr = rng(m.docSeed);
    const k = 2 + Math.floor(dr() * 9);
    const own = bySource[m.main];
    const parts = [];
    for (let j = 0; j < k; j++) {
      if (dr() < 0.6) parts.push(paras[m.main][own[Math.floor(dr() * own.length)]]);
      else {
        const [s, pj] = pool[Math.floor(dr() * pool.length)];
        parts.push(paras[s][pj]);
      }
    }
    const tw = (src.title ?? '').split(/\s+/).filter((w) => w && dr() >= 0.3);
    return { url: `https://${m.domain}/a/${i}`, domain: m.domain, ts: m.ts, title: tw.length ? tw.join(' ') : null, text: parts.join('\n') };
  }

  // document frequency of folded words over the real pages + a sample of synthetic docs (for 'words' queries)
  const df = new Map();
  const sample = Math.min(n, sources.length + 20000);
  for (let i = 0; i < sample; i++) {
    const d = doc(i);
    for (const w of new Set((`${d.title ?? ''} ${d.text}`.match(WORD) ?? []).map(fold))) df.set(w, (df.get(w) ?? 0) + 1);
  }
  const qr = rng(seed ^ 0x5eed);
  const candidates = sources.map((_, s) => s).filter((s) => s < n && held[s].length > 0);
  const pick = (arr) => arr[Math.floor(qr() * arr.length)];
  const queries = [];
  const used = { phrase: new Set(), words: new Set(), title: new Set() };
  for (let tries = 0; tries < 50 * queriesPerKind && queries.filter((q) => q.kind === 'phrase').length < queriesPerKind; tries++) {
    const s = pick(candidates);
    if (used.phrase.has(s)) continue;
    const words = pick(held[s]).split(/\s+/).filter((w) => HAS_WORD.test(w));
    if (words.length < 8) continue;
    const at = Math.floor(qr() * (words.length - 4));
    const phrase = words.slice(at, at + 4).join(' ').replace(/["”“]/g, '');
    queries.push({ kind: 'phrase', q: `"${phrase}"`, domain: sources[s].domain, relevant: new Map([[s, 2]]) });
    used.phrase.add(s);
  }
  for (let tries = 0; tries < 50 * queriesPerKind && queries.filter((q) => q.kind === 'words').length < queriesPerKind; tries++) {
    const s = pick(candidates);
    if (used.words.has(s)) continue;
    const ws = [...new Set((pick(held[s]).match(WORD) ?? []).filter((w) => w.length >= 4 && !/^\d+$/.test(w)))];
    if (ws.length < 6) continue;
    ws.sort((a, b) => (df.get(fold(a)) ?? 0) - (df.get(fold(b)) ?? 0) || (a < b ? -1 : 1));
    // the 2nd–5th rarest: the very rarest alone would often be a one-document word
    queries.push({ kind: 'words', q: ws.slice(1, 5).join(' '), domain: sources[s].domain, relevant: new Map([[s, 2]]) });
    used.words.add(s);
  }
  const mainOf = new Map();
  for (let i = sources.length; i < n; i++) {
    const list = mainOf.get(meta[i].main) ?? [];
    list.push(i);
    mainOf.set(meta[i].main, list);
  }
  for (let tries = 0; tries < 50 * queriesPerKind && queries.filter((q) => q.kind === 'title').length < queriesPerKind; tries++) {
    const s = pick(candidates);
    const t = sources[s].title;
    if (used.title.has(s) || !t || (t.match(WORD) ?? []).length < 3) continue;
    const rel = new Map([[s, 2]]);
    for (const i of mainOf.get(s) ?? []) rel.set(i, 1);
    queries.push({ kind: 'title', q: t.replace(/["”“]/g, ' '), domain: sources[s].domain, relevant: rel });
    used.title.add(s);
  }
  return { n, sources: sources.length, meta, doc, queries, prefixOf };
}

/** nDCG@k of a ranked list of doc numbers against graded relevance, and the reciprocal rank of the first grade-2 doc. */
function judge(ranked, relevant, k = 10) {
  const gain = (g) => 2 ** g - 1;
  let dcg = 0;
  ranked.slice(0, k).forEach((d, i) => (dcg += gain(relevant.get(d) ?? 0) / Math.log2(i + 2)));
  const ideal = [...relevant.values()].sort((a, b) => b - a).slice(0, k);
  let idcg = 0;
  ideal.forEach((g, i) => (idcg += gain(g) / Math.log2(i + 2)));
  const at = ranked.findIndex((d) => relevant.get(d) === 2);
  return { ndcg: idcg > 0 ? dcg / idcg : 0, rr: at >= 0 && at < k ? 1 / (at + 1) : 0 };
}

module.exports = { makeCorpus, judge, rng, loadSources };
