'use strict';
// The quality step's cost against extraction's, as the issue asks ("quality filters add ≤ 15% to the worker's
// per-document CPU on the corpus pages"): in each pass (a process of its own) every page of both corpus sets is
// extracted with extractDocument (timed), then the extracted texts go through the quality step — identifyLanguage
// (eld), qualitySignals, applyQualityFilters with every filter on — timed per part. Before timing, 20 pages are run
// through both untimed (warm-up; this also loads eld's model, whose one-off cost is reported apart). BENCH_ROUNDS
// passes (default 5); per part the median over passes of CPU ms per document, and the ratio quality / extraction.
// Then, once, what each filter alone would drop of the corpus pages at the default thresholds, and the first-failing
// counts with all on. The load average is printed before and after. Needs `npx tsc -b` first.
//   node bench/quality.bench.js            env: BENCH_ROUNDS, BENCH_TRAF_PAGES (default: all 990)
const { readFileSync, readdirSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { gunzipSync } = require('node:zlib');
const { childOf, median, loadAvg } = require('./lib/proc');

const CORPUS = resolve(__dirname, '../../shared/corpus');
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TRAF_PAGES = Number(process.env.BENCH_TRAF_PAGES || 990);

/** Both page sets: [{url, html}], decoded by their charset. */
function pages(core) {
  const out = [];
  const sh = join(CORPUS, 'scrapinghub-article-extraction-benchmark');
  const gt = JSON.parse(readFileSync(join(sh, 'ground-truth.json'), 'utf8'));
  for (const id of Object.keys(gt).sort()) out.push({ url: gt[id].url, html: core.decodeHtml(gunzipSync(readFileSync(join(sh, 'html', `${id}.html.gz`)))).text });
  const tr = join(CORPUS, 'adbar-trafilatura-eval');
  const urlOf = new Map(readFileSync(join(tr, 'source_paths.tsv'), 'utf8').split('\n').slice(1).filter(Boolean).map((l) => l.split('\t')).map(([u, f]) => [f, u]));
  for (const f of readdirSync(join(tr, 'eval')).sort().slice(0, TRAF_PAGES)) {
    const u = urlOf.get(`eval/${f}`);
    out.push({ url: /^https?:/.test(u ?? '') ? u : 'https://example.com/page.html', html: core.decodeHtml(gunzipSync(readFileSync(join(tr, 'eval', f)))).text });
  }
  return out;
}

const cpuMs = (c) => (c.user + c.system) / 1000;

/** One timed pass in this process. */
function pass() {
  const core = require('@ccpipe/core');
  const all = pages(core);
  const config = { ...core.DEFAULT_QUALITY_CONFIG, enabled: new Set(core.QUALITY_FILTER_NAMES) };
  const extract = (p) => {
    try {
      return core.extractDocument(p.html, { url: p.url }).text;
    } catch {
      return null; // refused pages cost extraction time but have no text
    }
  };
  const l0 = process.cpuUsage();
  core.identifyLanguage('Dies ist ein Satz, der das Sprachmodell lädt, bevor gemessen wird.');
  const loadMs = cpuMs(process.cpuUsage(l0));
  for (const p of all.slice(0, 20)) {
    const t = extract(p);
    if (t !== null) core.applyQualityFilters({ ...core.qualitySignals(t), ...core.identifyLanguage(t) }, config);
  }
  global.gc?.();
  const e0 = process.cpuUsage();
  const texts = all.map(extract).filter((t) => t !== null);
  const extractMs = cpuMs(process.cpuUsage(e0));
  global.gc?.();
  const g0 = process.cpuUsage();
  const langs = texts.map((t) => core.identifyLanguage(t));
  const langMs = cpuMs(process.cpuUsage(g0));
  const s0 = process.cpuUsage();
  const signals = texts.map((t) => core.qualitySignals(t));
  const signalsMs = cpuMs(process.cpuUsage(s0));
  const f0 = process.cpuUsage();
  const verdicts = signals.map((s, i) => core.applyQualityFilters({ ...s, text_language: langs[i]?.language ?? null, text_language_confidence: langs[i]?.confidence ?? null }, config));
  const filterMs = cpuMs(process.cpuUsage(f0));
  return { pages: all.length, texts: texts.length, extractMs, langMs, signalsMs, filterMs, loadMs, kept: verdicts.filter((v) => v.keep).length };
}

/** What each filter alone drops, and the first-failing counts with all on (one run, not timed). */
function drops() {
  const core = require('@ccpipe/core');
  const rows = [];
  for (const p of pages(core)) {
    let text;
    try {
      text = core.extractDocument(p.html, { url: p.url }).text;
    } catch {
      continue;
    }
    const l = core.identifyLanguage(text);
    rows.push({ ...core.qualitySignals(text), text_language: l?.language ?? null, text_language_confidence: l?.confidence ?? null });
  }
  const alone = {};
  for (const name of core.QUALITY_FILTER_NAMES) {
    const config = { ...core.DEFAULT_QUALITY_CONFIG, enabled: new Set([name]) };
    alone[name] = rows.filter((r) => !core.applyQualityFilters(r, config).keep).length;
  }
  const first = Object.fromEntries(core.QUALITY_FILTER_NAMES.map((n) => [n, 0]));
  const all = { ...core.DEFAULT_QUALITY_CONFIG, enabled: new Set(core.QUALITY_FILTER_NAMES) };
  let kept = 0;
  for (const r of rows) {
    const v = core.applyQualityFilters(r, all);
    if (v.keep) kept++;
    else first[v.droppedBy]++;
  }
  // The sets of filters the three pipelines run (FineWeb runs all three, C4's without the line rules).
  const gopher = core.QUALITY_FILTERS.filter((f) => f.source.startsWith('Gopher')).map((f) => f.name);
  const c4 = core.QUALITY_FILTERS.filter((f) => f.source.startsWith('C4')).map((f) => f.name);
  const fineweb = core.QUALITY_FILTERS.filter((f) => f.source.startsWith('FineWeb')).map((f) => f.name);
  const keptBy = (names) => rows.filter((r) => core.applyQualityFilters(r, { ...core.DEFAULT_QUALITY_CONFIG, enabled: new Set(names) }).keep).length;
  return { docs: rows.length, alone, first, kept, sets: { gopher: keptBy(gopher), c4: keptBy(c4), fineweb: keptBy(fineweb), 'gopher+c4+fineweb': keptBy([...gopher, ...c4, ...fineweb]) } };
}

function main() {
  console.log(`quality step vs extraction: ${ROUNDS} rounds, a process per pass; load average ${loadAvg()}`);
  const child = childOf(__filename, { execArgv: [] });
  const spawn = (args) => {
    const p = require('node:child_process').spawnSync(process.execPath, ['--expose-gc', __filename, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (p.status !== 0) throw new Error(`${args[0]} failed: ${p.stderr}`);
    return JSON.parse(p.stdout.trim().split('\n').pop());
  };
  const runs = [];
  for (let r = 0; r < ROUNDS; r++) {
    const x = spawn(['--pass']);
    runs.push(x);
    const q = x.langMs + x.signalsMs + x.filterMs;
    console.log(`round ${r + 1}: ${x.pages} pages (${x.texts} texts): extraction ${(x.extractMs / x.texts).toFixed(2)} ms/doc; language ${(x.langMs / x.texts).toFixed(3)}, signals ${(x.signalsMs / x.texts).toFixed(3)}, filters ${(x.filterMs / x.texts).toFixed(4)} ms/doc; quality/extraction ${((100 * q) / x.extractMs).toFixed(1)}%; load ${loadAvg()}`);
  }
  const m = (f) => median(runs.map(f));
  const ext = m((x) => x.extractMs / x.texts);
  const lang = m((x) => x.langMs / x.texts);
  const sig = m((x) => x.signalsMs / x.texts);
  const fil = m((x) => x.filterMs / x.texts);
  const ratio = m((x) => (x.langMs + x.signalsMs + x.filterMs) / x.extractMs);
  console.log('\n| part | CPU ms per document (median of passes) | share of extraction |');
  console.log('|---|---|---|');
  console.log(`| extractDocument | ${ext.toFixed(2)} | 100% |`);
  console.log(`| identifyLanguage (eld) | ${lang.toFixed(3)} | ${((100 * lang) / ext).toFixed(1)}% |`);
  console.log(`| qualitySignals | ${sig.toFixed(3)} | ${((100 * sig) / ext).toFixed(1)}% |`);
  console.log(`| applyQualityFilters (all on) | ${fil.toFixed(4)} | ${((100 * fil) / ext).toFixed(2)}% |`);
  console.log(`| quality step (median of the per-pass ratios) | | **${(100 * ratio).toFixed(1)}%** (goal ≤ 15%) |`);
  console.log(`eld model load + first call: ${m((x) => x.loadMs).toFixed(0)} ms CPU once per process`);
  const d = child(['--drops']);
  console.log(`\nwhat the filters drop of the ${d.docs} extracted corpus pages at the default thresholds`);
  console.log('| filter | alone | first failing, all on |');
  console.log('|---|---|---|');
  for (const n of Object.keys(d.alone)) console.log(`| ${n} | ${d.alone[n]} | ${d.first[n]} |`);
  console.log(`kept with all on: ${d.kept}; kept by each rule set: ${Object.entries(d.sets).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  console.log(`load average after: ${loadAvg()}`);
}

if (process.argv[2] === '--pass') console.log(JSON.stringify(pass()));
else if (process.argv[2] === '--drops') console.log(JSON.stringify(drops()));
else main();
