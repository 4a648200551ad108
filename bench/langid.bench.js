'use strict';
// Language identification of the extracted text: JavaScript libraries compared on the labels the corpus
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
//  - adjudicated: the 1,171 benchmark pages, labelled by agreement of the libraries or by hand (HAND_LABELS below).
// Agreement = the library's code equals the label, after folding individual languages into the macrolanguage CC
// writes (cmn → zho, nob → nor, ...); a null answer counts as a miss.
//
// Speed: each library's pass is a process of its own, libraries alternated in a rotating order, ROUNDS
// rounds; docs per CPU-second of the identification calls alone (text already extracted), median over rounds.
// Snippets: 15–1,000-character pieces of the pages' prose, to see short-text accuracy and to calibrate
// identifyLanguage's confidence (the table of right answers by evidence is printed next to evidenceConfidence's knots).
// eld and franc-min are the repo's; the other candidates are looked up in LANGID_CANDIDATES, a folder made with
//   npm install --prefix DIR --ignore-scripts franc@6.2.0 tinyld@1.3.4 cld3-asm@4.0.0 fasttext.wasm.js@1.0.0 lande@1.0.10
// and skipped (and named) when missing.
//   node bench/langid.bench.js [--rounds N] [--engines a,b] [--no-speed]     env: BENCH_ROUNDS (default 5), LANGID_CANDIDATES
// Needs `npx tsc -b` first.
const { readFileSync, readdirSync, writeFileSync, existsSync, mkdirSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { gunzipSync } = require('node:zlib');
const { tmpdir, loadavg } = require('node:os');
const { childOf, median, loadAvg } = require('./lib/proc');
const { rng } = require('./lib/search-corpus');

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

// ---------------------------------------------------------------------------------------------------------------
// Adjudicated labels. On 43 of the 1,171 pages the six reference libraries (eld, franc-min, franc, fastText lid.176,
// CLD3, tinyld; each on the whole text and on ccpipe's sample) did not all agree; those were read and labelled by hand
// with the language of the page's prose (null, 4 pages: mixed or too little text to say — left out). On every other
// page the label is the answer all reference libraries of this run agree on (at least 3 of them; html lang is wrong on
// about 20 of those: German text, `lang="en"`), and a page where they disagree without a hand label is counted and
// reported, not scored.
const HAND_LABELS = {
  // scrapinghub ids (first 12 hex digits)
  '21486419bb10': 'ind', '4219d096902d': 'eng', '5f03fc173ebc': 'eng', '6ebac05f637e': 'eng', '7837c9d66c81': 'ind',
  '8cad00dc22de': 'eng', '921019755f4a': 'eng', 'c69e539d689a': 'eng', 'c81e134ed499': 'eng', 'e372e42c0a3d': 'eng',
  // trafilatura-eval files
  '24ora.com-internationalschol.html.gz': 'pap', 'archive.org.swap-stop.org.shuji.html.gz': null,
  'austria.info.radfahren.html.gz': 'deu', 'beyssonmanagement.com.innovation.html.gz': 'deu',
  'blog.gaijinpot.com.chikan.html.gz': 'eng', 'bundesrat.de-erinnerungen.html.gz': 'deu',
  'chineselyrics4u.com.zhineng.html.gz': 'zho', 'colours-of-the-soul.alhelm.net.html.gz': null,
  'couchstyle.de.vintage.html.gz': 'deu', 'cubadebate.cu-sesiona.html.gz': 'spa',
  'd76cf81a74fa4633bd19d7060f5c05ee.html.gz': 'deu', 'dailymail.co.uk.food.html.gz': 'eng',
  'echte-demokratie-jetzt.de.blog.html.gz': null, 'einfachspanien.de.malaga.html.gz': null,
  'exxpress.at-zaehne.html.gz': 'deu', 'german.stackexchange.com.ausgeraubt.html.gz': 'eng',
  'gothamist.com-plagues.html.gz': 'eng', 'harpers.org.justice.html.gz': 'eng', 'hassanchef.com.bhindi.html.gz': 'eng',
  'leichtathletik-ostalbkreis.de.1952007.html.gz': 'deu', 'lemire.me.json.html.gz': 'eng',
  'mesopinions.com.mutilation.html.gz': 'fra', 'nachtkritik.de-Dragqueens.html.gz': 'deu',
  'nestle-family-com-chicken.html.gz': 'eng', 'pointofsail-kiel.de.wilson.html.gz': 'eng',
  'scmp.com.playbook.html.gz': 'eng', 'soundofscience.fr.1927.html.gz': 'fra', 'springer.com-produkte.html.gz': 'deu',
  'thestkittsnevisobserver.com-bvi.html.gz': 'eng', 'tine.no.fotballskole.html.gz': 'nor',
  'tomshardware.com.rtx.html.gz': 'eng', 'uusisuomi.fi.angela.html.gz': 'fin', 'yle.fi.3-11212601.html.gz': 'fin',
};
const handLabel = (t) => {
  const k = t.set === 'articles' ? t.id.slice(0, 12) : t.id;
  return Object.prototype.hasOwnProperty.call(HAND_LABELS, k) ? { label: HAND_LABELS[k] } : undefined;
};

// ---------------------------------------------------------------------------------------------------------------
// Engines: ccpipe's identifyLanguage (sample + engine + calibrated confidence) and the libraries as published, each
// given the whole extracted text (they cut it themselves: eld at 1,000 characters, franc at 2,048).

/** Where a candidate not installed in the repo is looked for. */
function resolveCandidate(name) {
  const paths = [REPO, process.env.LANGID_CANDIDATES].filter(Boolean);
  return require.resolve(name, { paths });
}
/** eld's entries are exported under `import` only; require the file by path (see core's language.ts). */
function requireEld(size) {
  const pkg = [REPO, process.env.LANGID_CANDIDATES].filter(Boolean).map((d) => join(d, 'node_modules/eld')).find((d) => existsSync(d));
  if (!pkg) throw new Error('eld not installed');
  return require(join(pkg, `src/entries/static.${size}.js`)).eld;
}

/** name → async () => ({ run(text) → code|null, snippet(text) → code|null, version }) */
const ENGINES = {
  'ccpipe-eld': async () => {
    const core = require('@ccpipe/core');
    return { run: (t) => core.identifyLanguage(t)?.language ?? null, snippet: (t) => core.guessLanguage(t, 'eld'), version: 'eld 2.1.0 (xs)' };
  },
  'ccpipe-franc-min': async () => {
    const core = require('@ccpipe/core');
    return { run: (t) => core.identifyLanguage(t, { engine: 'franc-min' })?.language ?? null, snippet: (t) => core.guessLanguage(t, 'franc-min'), version: 'franc-min 6.2.0' };
  },
  'eld-xs': async () => {
    const eld = requireEld('extrasmall');
    const f = (t) => eld.detect(t).language || null;
    return { run: f, snippet: f };
  },
  'eld-m': async () => {
    const eld = requireEld('medium');
    const f = (t) => eld.detect(t).language || null;
    return { run: f, snippet: f };
  },
  'franc-min': async () => {
    const { francAll } = require(resolveCandidate('franc-min'));
    const f = (t) => { const r = francAll(t, { minLength: 1 })[0][0]; return r === 'und' ? null : r; };
    return { run: f, snippet: f };
  },
  franc: async () => {
    const { francAll } = require(resolveCandidate('franc'));
    const f = (t) => { const r = francAll(t, { minLength: 1 })[0][0]; return r === 'und' ? null : r; };
    return { run: f, snippet: f };
  },
  tinyld: async () => {
    const { detect } = require(resolveCandidate('tinyld'));
    const f = (t) => detect(t) || null;
    return { run: f, snippet: f };
  },
  cld3: async () => {
    const { loadModule } = require(resolveCandidate('cld3-asm'));
    const id = (await loadModule()).create(0, 1 << 20);
    const f = (t) => { const r = id.findLanguage(t).language; return r === 'und' ? null : ({ iw: 'heb', ji: 'yid', in: 'ind', 'zh-Latn': 'zho' })[r] ?? r; };
    return { run: f, snippet: f };
  },
  fasttext: async () => {
    const { getLIDModel } = require(resolveCandidate('fasttext.wasm.js'));
    const m = await getLIDModel();
    await m.load();
    const f = async (t) => { const r = await m.identify(t.replace(/\n/g, ' ')); return r.alpha3 ?? r.alpha2 ?? null; };
    return { run: f, snippet: f };
  },
  lande: async () => {
    const mod = require(resolveCandidate('lande'));
    const lande = mod.default ?? mod;
    const f = (t) => lande(t)[0]?.[0] ?? null;
    return { run: f, snippet: f };
  },
};
const REFERENCE = ['ccpipe-eld', 'eld-xs', 'franc-min', 'franc', 'fasttext', 'cld3', 'tinyld'];
const SNIPPET_LENGTHS = [15, 30, 60, 120, 250, 500, 1000];

function available(name) {
  try {
    if (name.startsWith('ccpipe-')) return true;
    if (name.startsWith('eld')) return !!requireEld('extrasmall');
    resolveCandidate({ cld3: 'cld3-asm', fasttext: 'fasttext.wasm.js' }[name] ?? name);
    return true;
  } catch {
    return false;
  }
}



/** Snippets of the corpus pages' prose at each length, seeded: [{page, len, text}]. */
function snippetsOf(texts) {
  const rand = rng(20261127);
  const out = [];
  texts.forEach((t, page) => {
    if (t.set !== 'articles' && t.set !== 'trafilatura') return;
    const prose = t.text.split('\n').filter((l) => l.length >= 40).join('\n');
    if (prose.length < 1200) return;
    for (const len of SNIPPET_LENGTHS) {
      let s = Math.floor(rand() * (prose.length - len));
      const sp = prose.indexOf(' ', s);
      if (sp !== -1 && sp - s < 20) s = sp + 1;
      out.push({ page, len, text: prose.slice(s, s + len) });
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Child passes

async function predictPass(name) {
  const texts = loadTexts();
  const to3 = codeMapper();
  const e = await ENGINES[name]();
  const preds = [];
  for (const t of texts) {
    const r = await e.run(t.text);
    preds.push(to3(r));
  }
  const snippets = [];
  for (const s of snippetsOf(texts)) {
    const r = await e.snippet(s.text);
    snippets.push(r && typeof r === 'object' ? [r.language, Math.round(r.margin * 1e4) / 1e4] : [to3(r), null]);
  }
  return { preds, snippets };
}

async function speedPass(name) {
  const texts = loadTexts().filter((t) => t.set === 'articles' || t.set === 'trafilatura');
  if (name.startsWith('ccpipe-')) require('@ccpipe/core'); // core's own load is not the engine's
  global.gc?.();
  const mem = () => { const m = process.memoryUsage(); return { heap: m.heapUsed, ext: m.external }; };
  const m0 = mem();
  const l0 = process.cpuUsage();
  const e = await ENGINES[name]();
  await e.run(texts[0].text); // the first call loads the model
  const l = process.cpuUsage(l0);
  global.gc?.();
  const m1 = mem();
  const heapMB = (m1.heap - m0.heap) / 1e6;
  const extMB = (m1.ext - m0.ext) / 1e6;
  for (const t of texts.slice(0, 50)) await e.run(t.text);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const t of texts) await e.run(t.text);
  const wallS = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { docs: texts.length, cpuS: (c.user + c.system) / 1e6, wallS, loadMs: (l.user + l.system) / 1000, heapMB, extMB };
}

// ---------------------------------------------------------------------------------------------------------------
// Report

const pct = (ok, n) => (n ? `${((100 * ok) / n).toFixed(1)}% (${ok}/${n})` : '—');

function accuracy(texts, names, P) {
  const sets = ['html-lang', 'adjudicated', 'cdx-real', 'cdx-bulk', 'cld2'];
  const rows = Object.fromEntries(names.map((n) => [n, Object.fromEntries(sets.map((s) => [s, { ok: 0, n: 0 }]))]));
  const refs = REFERENCE.filter((r) => names.includes(r));
  let unadjudicated = 0;
  const seen = new Set();
  const adjudicated = texts.map((t, i) => {
    if (t.set !== 'articles' && t.set !== 'trafilatura') return undefined;
    const hand = handLabel(t);
    if (hand) return hand.label;
    // Agreement means something only between several independent libraries.
    const answers = new Set(refs.map((r) => P[r].preds[i]));
    if (refs.length >= 3 && answers.size === 1) return [...answers][0];
    unadjudicated++;
    return null;
  });
  texts.forEach((t, i) => {
    const kinds = [];
    if (t.set === 'articles' || t.set === 'trafilatura') {
      if (t.label) kinds.push(['html-lang', t.label]);
      if (adjudicated[i]) kinds.push(['adjudicated', adjudicated[i]]);
    } else kinds.push([t.set, t.label]);
    for (const [set, label] of kinds) {
      // Distinct texts: the mirror wraps the same page many times.
      const key = `${set}\u0000${label}\u0000${t.text}`;
      if (seen.has(key)) continue;
      seen.add(key);
      for (const n of names) {
        rows[n][set].n++;
        if (P[n].preds[i] === label) rows[n][set].ok++;
      }
    }
  });
  console.log(`\naccuracy (agreement with the label; distinct texts; ${unadjudicated} pages unadjudicated — reference engines here: ${refs.join(', ')}${refs.length < 3 ? ': fewer than 3, so only the hand-labelled pages are adjudicated' : ''})`);
  console.log(`| engine | ${sets.join(' | ')} |`);
  console.log(`|---|${sets.map(() => '---').join('|')}|`);
  for (const n of names) console.log(`| ${n} | ${sets.map((s) => pct(rows[n][s].ok, rows[n][s].n)).join(' | ')} |`);
  return adjudicated;
}

/** P(score of a right answer > score of a wrong one), ties half: the area under the ROC curve. */
function auc(rows) {
  const sorted = [...rows].sort((a, b) => a.e - b.e);
  let wrongBelow = 0;
  let sum = 0;
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    let right = 0;
    let wrong = 0;
    while (j < sorted.length && sorted[j].e === sorted[i].e) {
      if (sorted[j].ok) right++;
      else wrong++;
      j++;
    }
    sum += right * (wrongBelow + wrong / 2);
    wrongBelow += wrong;
    i = j;
  }
  const right = rows.filter((r) => r.ok).length;
  return sum / (right * (rows.length - right));
}

function snippetReport(texts, names, P, adjudicated) {
  const sn = snippetsOf(texts);
  console.log(`\nsnippets of the pages' prose (${sn.length / SNIPPET_LENGTHS.length} pages with ≥ 1,200 characters of prose), right answers by length; label: adjudicated`);
  console.log(`| engine | ${SNIPPET_LENGTHS.map((l) => `${l} ch`).join(' | ')} |`);
  console.log(`|---|${SNIPPET_LENGTHS.map(() => '---').join('|')}|`);
  for (const n of names) {
    const cells = SNIPPET_LENGTHS.map((len) => {
      let ok = 0;
      let all = 0;
      sn.forEach((s, j) => {
        const label = adjudicated[s.page];
        if (s.len !== len || !label) return;
        all++;
        if (P[n].snippets[j][0] === label) ok++;
      });
      return all ? `${((100 * ok) / all).toFixed(1)}%` : '—';
    });
    console.log(`| ${n} | ${cells.join(' | ')} |`);
  }
  // Calibration: the share of right answers by evidence (relative margin × letters), in 20 buckets of equal size.
  const core = require('@ccpipe/core');
  for (const n of names.filter((x) => x.startsWith('ccpipe-'))) {
    const engine = n.slice('ccpipe-'.length);
    const rows = [];
    sn.forEach((s, j) => {
      const label = adjudicated[s.page];
      const [code, margin] = P[n].snippets[j];
      if (label) rows.push({ ok: code === label, e: code === null ? 0 : margin * core.countLetters(s.text) });
    });
    const margins = [];
    sn.forEach((s, j) => {
      if (adjudicated[s.page]) margins.push({ ok: P[n].snippets[j][0] === adjudicated[s.page], e: P[n].snippets[j][0] === null ? 0 : P[n].snippets[j][1] });
    });
    console.log(`\n${n}: area under the ROC curve (right vs wrong answers) of the margin ${auc(margins).toFixed(3)}, of the evidence (margin × letters) ${auc(rows).toFixed(3)}`);
    rows.sort((a, b) => a.e - b.e);
    console.log(`calibration of ${n}: evidence bucket [low, high] (median) → right answers → evidenceConfidence(median)`);
    const k = 20;
    for (let b = 0; b < k; b++) {
      const part = rows.slice(Math.floor((b * rows.length) / k), Math.floor(((b + 1) * rows.length) / k));
      const mid = part[Math.floor(part.length / 2)].e;
      const acc = part.filter((r) => r.ok).length / part.length;
      console.log(`  [${part[0].e.toFixed(2)}, ${part[part.length - 1].e.toFixed(2)}] (${mid.toFixed(2)}): ${acc.toFixed(3)} → ${core.evidenceConfidence(engine, mid).toFixed(3)}`);
    }
  }
}

async function main() {
  const args = process.argv.slice(2);
  const rounds = Number((args.includes('--rounds') ? args[args.indexOf('--rounds') + 1] : process.env.BENCH_ROUNDS) || 5);
  const texts = loadTexts();
  const only = args.includes('--engines') ? args[args.indexOf('--engines') + 1].split(',') : null;
  const names = Object.keys(ENGINES).filter((n) => (only === null || only.includes(n)) && available(n));
  const missing = Object.keys(ENGINES).filter((n) => (only === null || only.includes(n)) && !names.includes(n));
  console.log(`language identification: ${texts.length} extracted texts; engines ${names.join(', ')}${missing.length ? `; not installed (set LANGID_CANDIDATES): ${missing.join(', ')}` : ''}; load average ${loadAvg()}`);
  const child = childOf(__filename, { maxBuffer: 1 << 28 });
  const P = {};
  for (const n of names) P[n] = child(['--predict', n]);
  const adjudicated = accuracy(texts, names, P);
  snippetReport(texts, names, P, adjudicated);
  if (args.includes('--no-speed')) return;
  const speedChild = (n) => {
    const p = require('node:child_process').spawnSync(process.execPath, ['--expose-gc', __filename, '--speed', n], { encoding: 'utf8', maxBuffer: 1 << 24 });
    if (p.status !== 0) throw new Error(`speed ${n}: ${p.stderr}`);
    return JSON.parse(p.stdout.trim().split('\n').pop());
  };
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  console.log(`\nspeed: ${rounds} rounds, a process per pass, engines in rotating order; identification of the 1,171 pages' texts`);
  for (let r = 0; r < rounds; r++) {
    const order = names.map((_, i) => names[(i + r) % names.length]);
    for (const n of order) runs[n].push(speedChild(n));
    console.log(`round ${r + 1}: ${order.map((n) => `${n} ${(runs[n][r].docs / runs[n][r].cpuS).toFixed(0)}`).join(', ')} docs/CPU-s; load ${loadavg()[0].toFixed(2)}`);
  }
  console.log('\n| engine | docs per CPU-s (median) | docs/s wall | ms CPU per doc | load + first call, ms CPU | JS heap after load, MB | external (WASM) after load, MB |');
  console.log('|---|---|---|---|---|---|---|');
  for (const n of names) {
    const m = (f) => median(runs[n].map(f));
    console.log(`| ${n} | ${m((x) => x.docs / x.cpuS).toFixed(0)} | ${m((x) => x.docs / x.wallS).toFixed(0)} | ${(1000 / m((x) => x.docs / x.cpuS)).toFixed(3)} | ${m((x) => x.loadMs).toFixed(0)} | ${m((x) => x.heapMB).toFixed(1)} | ${m((x) => x.extMB).toFixed(1)} |`);
  }
  console.log(`load average after: ${loadAvg()}`);
}

module.exports = { loadTexts, codeMapper };

if (require.main === module) {
  const [mode, name] = process.argv.slice(2);
  if (mode === '--predict') predictPass(name).then((r) => console.log(JSON.stringify(r)));
  else if (mode === '--speed') speedPass(name).then((r) => console.log(JSON.stringify(r)));
  else if (mode === '--texts') {
    const by = {};
    for (const t of loadTexts()) {
      by[t.set] ??= { n: 0, labelled: 0 };
      by[t.set].n++;
      if (t.label) by[t.set].labelled++;
    }
    console.log(by);
  } else main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
