'use strict';
// `ccpipe import` speed and memory as #22 asks them to be measured. Rows: a CSV of N rows (default 1,000,000) made in
// a temp dir from the real CDX records of ../shared/corpus (URL, capture time as ISO 8601, status, mime and languages
// as two extra columns; a title from the URL's words, some with a comma or quotes, so quoted fields occur). The ≈ 4,700
// records repeat with a path suffix (/pK) or a query parameter (page=K) added, so the URLs stay distinct-ish.
//  A  import:  the real CLI, `node packages/cli/bin/ccpipe.js import rows.csv --dataset bench --data <fresh dir>`;
//  B  canon:   a process reading the same URLs (a pre-extracted list) that calls only canonicalizeUrl + urlId on each:
//              the floor of canonicalization the goal compares with;
//  E  duckdb:  DuckDB's read_csv → COPY TO parquet on one thread, no canonicalization: the best alternative found;
//  C  parse:   a process reading the CSV with the import's own reader (readSource) and nothing else;
//  D  timed:   runImport in a process with the CLI's writer and store, timing each part write (sort excluded) and put.
// Each pass is a whole process, measured from inside by bench/lib/exit-usage.js (CPU of every thread, wall, peak RSS);
// sides alternated (A B E C D, then D C E B A, ...), BENCH_ROUNDS rounds (default 3, 5 when N ≤ 200k); medians; the load
// average before, per pass and after. Goals: A ≥ 150k rows per CPU-second; A / B ≥ 0.6 per CPU-second.
// `--memory [N]` (default 10,000,000): one import of an N-row CSV, its peak RSS (goal ≤ 512 MiB) with a timeline of
// process.memoryUsage() (V8 heap against the rest). Arguments after `--` go to `ccpipe import` (e.g. --batch-rows,
// which D takes too). BENCH_BREAKDOWN=0 leaves out C and D; `--generate N CSV [LIST]` writes the rows (and the URL
// list) alone, to look at one side by hand. Needs `npx tsc -b` first; temp files are removed at the end.
//   node bench/import.bench.js [N] [-- import flags]      node bench/import.bench.js --memory [N] [-- import flags]
const { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeSync } = require('node:fs');
const { tmpdir, loadavg } = require('node:os');
const { join, resolve } = require('node:path');
const { gunzipSync } = require('node:zlib');
const { spawnSync } = require('node:child_process');
const { median, loadAvg: la } = require('./lib/proc');

const REPO = resolve(__dirname, '..');
const CORPUS = resolve(REPO, '../shared/corpus');
const CLI = join(REPO, 'packages/cli/bin/ccpipe.js');
const USAGE = join(__dirname, 'lib/exit-usage.js');
const COLUMNS = { url: 'url', ts: 'ts', status: 'status', title: 'title', text: 'text' };
const SIDES = ['import', 'canon', 'duckdb', 'parse', 'timed'];

/** The corpus's CDX records: {url, ts (14 digits), status, mime, languages}. */
function corpusRecords() {
  const texts = [
    readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'), 'utf8'),
    readFileSync(join(CORPUS, 'preciz-common_crawl/index_snippet'), 'utf8'),
    readFileSync(join(CORPUS, 'preciz-common_crawl/api_response'), 'utf8'),
  ];
  const mirror = join(CORPUS, 'cc-mirror-dev/cc-index/collections');
  for (const c of readdirSync(mirror).sort()) {
    for (const f of readdirSync(join(mirror, c, 'indexes')).filter((x) => x.endsWith('.gz')).sort()) texts.push(gunzipSync(readFileSync(join(mirror, c, 'indexes', f))).toString('utf8'));
  }
  const out = [];
  for (const text of texts) {
    for (const l of text.split('\n')) {
      const i = l.indexOf('{"url": ');
      if (i < 0) continue;
      const head = l.slice(0, i).trimEnd();
      const j = JSON.parse(l.slice(i));
      out.push({ url: j.url, ts: head.slice(head.lastIndexOf(' ') + 1), status: j.status, mime: j.mime ?? '', languages: j.languages ?? '' });
    }
  }
  return out;
}

/** The K-th variant of a URL: itself, then a path suffix (odd K) or a query parameter (even K); fragment dropped. */
function variantOf(url, k) {
  if (k === 0) return url;
  const h = url.indexOf('#');
  const u = h >= 0 ? url.slice(0, h) : url;
  const q = u.indexOf('?');
  if (k % 2 === 0) return `${u}${q >= 0 ? '&' : '?'}page=${k}`;
  const base = q >= 0 ? u.slice(0, q) : u;
  return `${base}${base.endsWith('/') ? '' : '/'}p${k}${q >= 0 ? u.slice(q) : ''}`;
}

/** A page-like title from the URL's last path words and host (non-ASCII dash; a comma or quotes in some). */
function titleOf(url, i) {
  const m = /^[a-z]+:\/\/([^/?#]+)([^?#]*)/i.exec(url);
  const host = (m?.[1] ?? '').replace(/^www\./, '');
  const segs = (m?.[2] ?? '').split('/').filter(Boolean);
  let words = [];
  while (words.length === 0 && segs.length > 0) words = decodeURIComponentSafe(segs.pop()).replace(/\.[a-z0-9]{2,5}$/i, '').split(/[-_+.\s]+/).filter((w) => w && !/^\d+$/.test(w));
  if (words.length === 0) words = ['Home'];
  words = words.slice(0, 9);
  words[0] = words[0][0].toUpperCase() + words[0].slice(1);
  if (words.length > 4) words[2] += ',';
  if (i % 50 === 7) words[words.length - 1] = `"${words[words.length - 1]}"`;
  return `${words.join(' ')} – ${host}`;
}

function decodeURIComponentSafe(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const csvField = (s) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

/** Writes N rows to `csv` (and their URLs, one a line, to `list` unless null); returns the CSV's size in bytes. */
function generate(n, csv, list) {
  const recs = corpusRecords();
  const fd = openSync(csv, 'w');
  const lfd = list === null ? null : openSync(list, 'w');
  let bytes = 0;
  let rows = ['url,ts,status,title,mime,lang'];
  let urls = [];
  const flush = () => {
    const s = rows.join('\n') + '\n';
    bytes += Buffer.byteLength(s);
    writeSync(fd, s);
    if (lfd !== null) writeSync(lfd, urls.join('\n') + '\n');
    rows = [];
    urls = [];
  };
  for (let i = 0; i < n; i++) {
    const r = recs[i % recs.length];
    const k = Math.floor(i / recs.length);
    const url = variantOf(r.url, k);
    const t = r.ts;
    const ms = Date.UTC(+t.slice(0, 4), +t.slice(4, 6) - 1, +t.slice(6, 8), +t.slice(8, 10), +t.slice(10, 12), +t.slice(12, 14)) + k * 3_600_000;
    const ts = new Date(ms).toISOString().slice(0, 19) + 'Z';
    rows.push(`${csvField(url)},${ts},${r.status},${csvField(titleOf(url, i))},${csvField(r.mime)},${csvField(r.languages)}`);
    if (lfd !== null) urls.push(url);
    if (rows.length >= 20_000) flush();
  }
  flush();
  closeSync(fd);
  if (lfd !== null) closeSync(lfd);
  return bytes;
}

/** One pass as a process of its own: its wall (seen from here), CPU and peak RSS (from exit-usage) and last stdout JSON. */
function pass(root, tag, args, env = {}) {
  const usageFile = join(root, `usage-${tag}.json`);
  const t0 = process.hrtime.bigint();
  const p = spawnSync(process.execPath, ['-r', USAGE, ...args], { encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, BENCH_USAGE_FILE: usageFile, ...env } });
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  if (p.status !== 0) throw new Error(`${tag} failed (exit ${p.status}): ${p.stderr.slice(-4000)}`);
  const u = JSON.parse(readFileSync(usageFile, 'utf8'));
  rmSync(usageFile);
  const out = p.stdout.trim() ? JSON.parse(p.stdout.trim().split('\n').pop()) : null;
  return { wallS, cpuS: u.userS + u.sysS, userS: u.userS, sysS: u.sysS, rssMiB: u.maxRssKiB / 1024, samples: u.samples, out };
}

/** Side A: the CLI into a fresh data dir (removed after); checks every row was imported. */
function importPass(root, csv, n, tag, extra, env) {
  const data = join(root, `data-${tag}`);
  try {
    const r = pass(root, tag, [CLI, 'import', csv, '--dataset', 'bench', '--data', data, ...extra], env);
    if (r.out?.outcome !== 'imported' || r.out.rows + r.out.rejects !== n) throw new Error(`import ${tag}: ${JSON.stringify(r.out)}`);
    return { ...r, rows: r.out.rows, rejects: r.out.rejects, batches: r.out.batches };
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

const cpuNow = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};

/** In a child, side B: canonicalizeUrl + urlId on every URL of the list. */
function canonChild(list) {
  const { canonicalizeUrl, urlId } = require('@ccpipe/core');
  const urls = readFileSync(list, 'utf8').split('\n');
  if (urls[urls.length - 1] === '') urls.pop();
  const [c0, t0] = [cpuNow(), performance.now()];
  let bad = 0;
  let odd = 0;
  for (const u of urls) {
    try {
      if (urlId(canonicalizeUrl(u).url) & 1n) odd++;
    } catch {
      bad++;
    }
  }
  return { rows: urls.length, bad, odd, loopCpuS: cpuNow() - c0, loopWallS: (performance.now() - t0) / 1000 };
}

/**
 * In a child, side E: the best alternative found for CSV → Parquet, DuckDB's own reader and writer on one thread
 * (`read_csv` → `COPY … TO parquet`, ZSTD, every column as text), with no URL canonicalization or keys.
 */
async function duckdbChild(csv, out) {
  const { DuckDBInstance } = require('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  const [c0, t0] = [cpuNow(), performance.now()];
  const q = (x) => `'${x.replaceAll("'", "''")}'`;
  try {
    await conn.run(`COPY (SELECT * FROM read_csv(${q(csv)}, header = true, all_varchar = true)) TO ${q(out)} (FORMAT parquet, COMPRESSION zstd)`);
    return { loopCpuS: cpuNow() - c0, loopWallS: (performance.now() - t0) / 1000 };
  } finally {
    conn.closeSync();
    db.closeSync();
    rmSync(out, { force: true });
  }
}

/** In a child, side C: the import's reader over the CSV, nothing else. */
async function parseChild(csv) {
  const { readSource } = require('@ccpipe/import');
  const [c0, t0] = [cpuNow(), performance.now()];
  let rows = 0;
  let bad = 0;
  for await (const r of readSource(csv, { format: 'csv', columns: COLUMNS, explicit: new Set() })) if ('values' in r) rows++; else bad++;
  return { rows, bad, loopCpuS: cpuNow() - c0, loopWallS: (performance.now() - t0) / 1000 };
}

/** In a child, side D: runImport as the CLI wires it, each writePart (checkRow + DuckDB + temp file) and put timed. */
async function timedChild(csv, data, batchRows) {
  const { loadConfig } = require('@ccpipe/core');
  const { closeDuckDbParquetEngine, openObjectStore, writeParquetPart } = require('@ccpipe/adapters');
  const { runImport, DEFAULT_IMPORT_BATCH_ROWS } = require('@ccpipe/import');
  const config = loadConfig(process.env, { data });
  const store = openObjectStore(config.data, config);
  const t = { writeCpuS: 0, writeWallS: 0, putCpuS: 0, putWallS: 0, partBytes: 0, parts: 0 };
  const put = store.put.bind(store);
  store.put = async (key, bytes) => {
    const [c0, t0] = [cpuNow(), performance.now()];
    await put(key, bytes);
    t.putCpuS += cpuNow() - c0;
    t.putWallS += (performance.now() - t0) / 1000;
  };
  const writePart = async (rows) => {
    const [c0, t0] = [cpuNow(), performance.now()];
    const part = await writeParquetPart(rows, { engine: config.parquetEngine, includeText: config.includeText, rowGroupSize: config.rowGroupSize });
    t.writeCpuS += cpuNow() - c0;
    t.writeWallS += (performance.now() - t0) / 1000;
    t.partBytes += part.length;
    t.parts++;
    return part;
  };
  const [c0, t0] = [cpuNow(), performance.now()];
  try {
    const s = await runImport(
      { files: [csv], dataset: 'bench', columns: COLUMNS, explicit: new Set(), batchRows: Number(batchRows ?? DEFAULT_IMPORT_BATCH_ROWS), includeText: config.includeText },
      { store, writePart },
    );
    return { rows: s.rows, rejects: s.rejects, loopCpuS: cpuNow() - c0, loopWallS: (performance.now() - t0) / 1000, ...t };
  } finally {
    await closeDuckDbParquetEngine();
    await store.close();
    rmSync(data, { recursive: true, force: true });
  }
}

const k = (x) => `${(x / 1000).toFixed(1)}k`;
/** `--batch-rows N` among the import flags, as D's argument (none: the default). */
const batchFlag = (extra) => (extra.includes('--batch-rows') ? [extra[extra.indexOf('--batch-rows') + 1]] : []);

function speed(n, extra) {
  const rounds = Number(process.env.BENCH_ROUNDS || (n <= 200_000 ? 5 : 3));
  const sides = process.env.BENCH_BREAKDOWN === '0' ? SIDES.slice(0, 3) : SIDES;
  const { DEFAULT_IMPORT_BATCH_ROWS } = require('@ccpipe/import');
  console.log(`import bench: ${n.toLocaleString('en')} rows, ${rounds} rounds of ${sides.join(' / ')} alternated, a process per pass; batch ${DEFAULT_IMPORT_BATCH_ROWS.toLocaleString('en')} rows${extra.length ? ` (flags: ${extra.join(' ')})` : ''}; load average ${la()}`);
  const root = mkdtempSync(join(tmpdir(), 'ccpipe-import-bench-'));
  try {
    const [csv, list] = [join(root, 'rows.csv'), join(root, 'urls.txt')];
    const g0 = performance.now();
    const bytes = generate(n, csv, list);
    console.log(`generated ${(bytes / 2 ** 20).toFixed(0)} MiB of CSV (${Math.round(bytes / n)} bytes a row) in ${((performance.now() - g0) / 1000).toFixed(1)} s`);
    const runs = Object.fromEntries(sides.map((s) => [s, []]));
    for (let round = 0; round < rounds; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
        const tag = `${side}-${round}`;
        const r = side === 'import' ? importPass(root, csv, n, tag, extra)
          : side === 'timed' ? pass(root, tag, [__filename, '--timed', csv, join(root, `data-${tag}`), ...batchFlag(extra)])
          : side === 'duckdb' ? pass(root, tag, [__filename, '--duckdb', csv, join(root, `duck-${tag}.parquet`)])
          : pass(root, tag, [__filename, `--${side}`, side === 'canon' ? list : csv]);
        const o = r.out ?? r;
        runs[side].push({ ...o, ...r });
        const inner = o.loopCpuS !== undefined ? `; in-process loop ${o.loopCpuS.toFixed(2)} CPU-s` : '';
        const parts = side === 'timed' ? `; part writes ${o.writeCpuS.toFixed(2)} CPU-s (${o.writeWallS.toFixed(2)} s wall), puts ${o.putCpuS.toFixed(2)} CPU-s (${o.putWallS.toFixed(2)} s)` : '';
        console.log(`round ${round + 1} ${side.padEnd(6)} ${r.cpuS.toFixed(2)} CPU-s (user ${r.userS.toFixed(2)}, sys ${r.sysS.toFixed(2)}), ${r.wallS.toFixed(2)} s wall: ${k(n / r.cpuS)} rows/CPU-s, ${k(n / r.wallS)} rows/s wall, peak RSS ${r.rssMiB.toFixed(0)} MiB${inner}${parts}; load ${loadavg()[0].toFixed(2)}`);
      }
    }
    const m = (side, f) => median(runs[side].map(f));
    for (const side of sides) {
      console.log(`${side.padEnd(6)} median ${m(side, (r) => r.cpuS).toFixed(2)} CPU-s, ${m(side, (r) => r.wallS).toFixed(2)} s wall: ${k(m(side, (r) => n / r.cpuS))} rows/CPU-s, ${k(m(side, (r) => n / r.wallS))} rows/s wall, peak RSS ${m(side, (r) => r.rssMiB).toFixed(0)} MiB`);
    }
    const [a, b] = [m('import', (r) => n / r.cpuS), m('canon', (r) => n / r.cpuS)];
    const bLoop = m('canon', (r) => n / r.loopCpuS);
    console.log(`import ${k(a)} rows/CPU-s (goal ≥ 150k); canonicalization alone ${k(b)} rows/CPU-s whole process, ${k(bLoop)} in its loop; ratio ${(a / b).toFixed(2)} whole process, ${(a / bLoop).toFixed(2)} against the loop (goal ≥ 0.6)`);
    const duck = m('duckdb', (r) => n / r.cpuS);
    console.log(`best alternative on the same file, DuckDB read_csv → COPY Parquet on one thread (no canonicalization): ${k(duck)} rows/CPU-s; the import takes ${(duck / a).toFixed(1)}× its CPU`);
    if (sides.length === SIDES.length) {
      const aCpu = m('import', (r) => r.cpuS);
      const parse = m('parse', (r) => r.loopCpuS);
      const total = m('timed', (r) => r.loopCpuS);
      const write = m('timed', (r) => r.writeCpuS);
      const put = m('timed', (r) => r.putCpuS);
      const canon = m('canon', (r) => r.loopCpuS);
      const rest = total - write - put - parse;
      const pc = (x) => `${x.toFixed(2)} CPU-s (${((100 * x) / aCpu).toFixed(0)}%)`;
      console.log(`where the import's ${aCpu.toFixed(2)} CPU-s go (medians): reading + CSV parse ${pc(parse)}; rows (canonicalize + keys ${canon.toFixed(2)} of it, ts, status, extras) + batching + sort ${pc(rest)}; Parquet part writes ${pc(write)}; store puts ${pc(put)}; outside runImport (process start, CLI, DuckDB close) ${pc(aCpu - total)}; parts ${m('timed', (r) => r.parts)}, ${(m('timed', (r) => r.partBytes) / n).toFixed(1)} bytes a row`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
    console.log(`load average after: ${la()}`);
  }
}

function memory(n, extra) {
  console.log(`import memory bench: one import of ${n.toLocaleString('en')} rows${extra.length ? ` (flags: ${extra.join(' ')})` : ''}; load average ${la()}`);
  const root = mkdtempSync(join(tmpdir(), 'ccpipe-import-mem-'));
  try {
    const csv = join(root, 'rows.csv');
    const g0 = performance.now();
    const bytes = generate(n, csv, null);
    console.log(`generated ${(bytes / 2 ** 20).toFixed(0)} MiB of CSV (${Math.round(bytes / n)} bytes a row) in ${((performance.now() - g0) / 1000).toFixed(1)} s`);
    const r = importPass(root, csv, n, 'memory', extra, { BENCH_MEM_SAMPLE_MS: process.env.BENCH_MEM_SAMPLE_MS || '250' });
    const mib = (x) => (x / 2 ** 20).toFixed(0);
    const s = r.samples;
    const peak = s.reduce((p, x) => (x[1] > p[1] ? x : p), s[0]);
    const max = (i) => mib(Math.max(...s.map((x) => x[i])));
    console.log('memoryUsage timeline (MiB): t s, rss, heapTotal, heapUsed, external, arrayBuffers, rss - heapTotal - external');
    const line = (x) => `  ${(x[0] / 1000).toFixed(1).padStart(6)} ${[1, 2, 3, 4, 5].map((i) => mib(x[i]).padStart(5)).join(' ')} ${mib(x[1] - x[2] - x[4]).padStart(5)}`;
    for (let i = 0; i < 12; i++) console.log(line(s[Math.floor((i * (s.length - 1)) / 11)]));
    console.log(`at the highest sampled rss:\n${line(peak)}`);
    console.log(`sampled maxima (MiB): rss ${max(1)}, heapTotal ${max(2)}, heapUsed ${max(3)}, external ${max(4)}, arrayBuffers ${max(5)}, rss - heapTotal - external ${mib(Math.max(...s.map((x) => x[1] - x[2] - x[4])))}`);
    console.log(`${r.rows.toLocaleString('en')} rows, ${r.rejects} rejected, ${r.batches} batches: ${r.cpuS.toFixed(1)} CPU-s, ${r.wallS.toFixed(1)} s wall, ${k(n / r.cpuS)} rows/CPU-s, ${k(n / r.wallS)} rows/s wall; peak RSS ${r.rssMiB.toFixed(0)} MiB (goal ≤ 512 MiB)`);
  } finally {
    rmSync(root, { recursive: true, force: true });
    console.log(`load average after: ${la()}`);
  }
}

const generateChild = (n, csv, list) => ({ bytes: generate(Number(n), csv, list ?? null) });

const CHILDREN = { '--canon': canonChild, '--duckdb': duckdbChild, '--parse': parseChild, '--timed': timedChild, '--generate': generateChild };
const child = CHILDREN[process.argv[2]];
if (child !== undefined) {
  Promise.resolve(child(...process.argv.slice(3))).then((r) => console.log(JSON.stringify(r)), (err) => {
    console.error(err);
    process.exitCode = 1;
  });
} else {
  const dash = process.argv.indexOf('--');
  const own = dash >= 0 ? process.argv.slice(2, dash) : process.argv.slice(2);
  const extra = dash >= 0 ? process.argv.slice(dash + 1) : [];
  const mem = own[0] === '--memory';
  const n = Number((mem ? own[1] : own[0]) ?? (mem ? 10_000_000 : 1_000_000));
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`bad row count: ${mem ? own[1] : own[0]}`);
  (mem ? memory : speed)(n, extra);
}
