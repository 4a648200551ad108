'use strict';
// HTTP API latency and throughput on loopback at 1M registered domains: GET /v1/domain/{d}, the first URL page of a
// big domain (100 and 1000 items), a deep page (offset 4900) and the first page of random one-URL domains, with
// /healthz (same server, no index work) as the floor measured in the same run, over three sources:
//  - memory: a MemoryIndexSource with the same 1M synthetic domains (the API's own cost);
//  - parquet: the real read side (@ccpipe/index openIndexSource, default reader: hyparquet over store.getRange,
//    footers and decoded column chunks cached) over a lake the merger built from synthetic parts;
//  - duckdb: the same source and lake with `lakeReader: 'duckdb'` (the previous reader: one DuckDB read_parquet
//    query per page on the local path) — the ratio parquet/duckdb is measured in the same run;
//  - parquet-footer: the parquet reader parsing each file's Parquet footer instead of the merger's row-group locator
//    (the layout source before locators; the ratio footer / locator is measured in the same run);
//  - parquet-warm: the parquet reader with `warmUp` (a few pages read when a version loads, as `ccpipe api` does);
//    the "cold" rows against `parquet` are what the warm-up saves the first requests after a start;
//  - parquet-js: the parquet reader with fzstd (pure JS) instead of libzstd-wasm for ZSTD pages — cold pages are
//    dominated by decompression, so this is the ratio that chose the decoder;
//  - parquet-files: the parquet reader with the domain index read in place from its shard files (`indexReads:
//    'files'`) instead of resident: lookups by positional reads, the server's RSS without the index (not in the
//    default list: BENCH_READERS=parquet,parquet-files).
// The lake: 1M domains (8 TLDs), each with one URL in dataset 1; every 10,000th domain holds 5,000 URLs; merged
// with rowGroupSize BENCH_ROW_GROUP_SIZE (default 8,192 rows) and partitionBits 8 (256 files). Built once, served by each reader.
//
// Each server runs in a child process (its own event loop and heap); this process is the client: a bounded
// keep-alive loop over an undici Pool, each of C workers sending one request at a time. Latency is measured at the
// client (send → last body byte). Before any warm-up, "cold" sends 300 (BENCH_COLD) first-page requests for distinct random
// one-URL domains at concurrency 1 (footer + row-group reads on first touch). 2 shared cores and other jobs
// running: read the ratios, and p99 is noisy. With Debian's `wrk` installed, the two goal routes are measured again by
// it against the same server (BENCH_WRK=0 skips, BENCH_WRK_SECONDS=10).
//   node bench/api.bench.js [memory|lake|all=all] [domains=1000000] [requests=20000]
//   node bench/api.bench.js reads [domains=1000000]   (in-process first touches of row groups; BENCH_READ_VARIANTS=
//     locator+flat,footer+flat,locator+hyparquet by default: layout source + decoder, see docs/index-format.md;
//     locator1+flat reads version-1 locators, without the chunk CRC32 check)
// Env: BENCH_ROW_GROUP_SIZE=4096,8192,16384,32768 (the lake's rowGroupSize, default 8192 as `ccpipe merge`; one lake per size, and a
// cold/warm comparison across sizes measured in the same run), BENCH_READERS=parquet,parquet-footer,duckdb,parquet-js (default all),
// BENCH_COLD (cold requests, default 300), BENCH_PARTITION_BITS (default 8; below 8 the files hold many row groups each, as at Common Crawl scale, where a
// 256-file lake has millions of rows per file — at 300k domains and 8 bits a file is smaller than one row group).
const { fork } = require('node:child_process');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const MODE = process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : 'all';
const DOMAINS = Number(process.argv[3] ?? 1_000_000);
const REQUESTS = Number(process.argv[4] ?? 20_000);
const BIG_EVERY = 10_000; // every 10,000th domain holds 5,000 URLs in dataset 1; the others 1 URL
const BIG_URLS = 5_000;
const TLDS = ['com', 'org', 'net', 'de', 'co.uk', 'fr', 'io', 'com.au'];
const domainName = (i) => `site${i}.${TLDS[i % TLDS.length]}`;
const bigPath = (k) => `articles/${String(k).padStart(5, '0')}/a-fairly-typical-slug-of-an-article`;
const PART_DOMAINS = 50_000;
const ROW_GROUPS = (process.env.BENCH_ROW_GROUP_SIZE || '8192').split(',').map(Number);
const COLD = Number(process.env.BENCH_COLD || 300);
const PARTITION_BITS = Number(process.env.BENCH_PARTITION_BITS || 8);
const READERS = (process.env.BENCH_READERS || 'parquet,parquet-footer,duckdb,parquet-js').split(',');

if (process.argv[2] === '--server') {
  const [, , , mode, arg] = process.argv;
  (mode === 'memory' ? memoryServer(Number(arg)) : lakeServer(mode, arg)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else if (process.argv[2] === '--reads') {
  coldReads(process.argv[3], process.argv[4]).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else if (process.argv[2] === '--build') {
  buildLake(process.argv[3], Number(process.argv[4]), Number(process.argv[5])).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}

async function main() {
  console.log(`# api.bench: ${DOMAINS.toLocaleString('en')} domains, ${REQUESTS} requests per route and concurrency`);
  if (MODE === 'reads') return readsMain();
  const results = {};
  if (MODE !== 'lake') results.memory = await client('memory', String(DOMAINS));
  if (MODE !== 'memory') {
    const byRowGroup = {};
    for (const rg of ROW_GROUPS) {
      const dir = mkdtempSync(join(tmpdir(), 'ccpipe-api-bench-'));
      try {
        const t0 = Date.now();
        await runChild(['--build', dir, String(DOMAINS), String(rg)]);
        console.log(`\nlake built (synthetic parts + runMerge, rowGroupSize ${rg}, partitionBits ${PARTITION_BITS}) in ${((Date.now() - t0) / 1000).toFixed(1)} s, ${(bytesUnder(join(dir, 'urls')) / 2 ** 20).toFixed(1)} MiB`);
        for (const reader of READERS) results[reader] = await client(reader, dir);
        byRowGroup[rg] = results.parquet;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    if (ROW_GROUPS.length > 1 && READERS.includes('parquet')) rowGroupTable(byRowGroup);
    if (results.parquet && results['parquet-footer']) {
      console.log('\n## layout from the row-group locator (parquet) vs the Parquet footer (parquet-footer), same lake: ratio footer / locator (> 1 = locator faster)');
      console.log('route                             conc     p50×     p95×     p99×   req/s×');
      for (const r of results.parquet) {
        const f = results['parquet-footer'].find((x) => x.name === r.name && x.concurrency === r.concurrency);
        if (!f) continue;
        console.log(
          `${r.name.padEnd(34)}${String(r.concurrency).padStart(4)}${(f.p50 / r.p50).toFixed(2).padStart(9)}${(f.p95 / r.p95).toFixed(2).padStart(9)}` +
            `${(f.p99 / r.p99).toFixed(2).padStart(9)}${(r.rps / f.rps).toFixed(2).padStart(9)}`,
        );
      }
    }
    if (results.parquet && results['parquet-warm']) {
      console.log('\n## warm-up when a version loads (parquet-warm) vs none (parquet), same lake: ratio none / warm-up (> 1 = warm-up faster)');
      console.log('route                             conc     p50×     p95×     p99×');
      for (const r of results['parquet-warm']) {
        const n = results.parquet.find((x) => x.name === r.name && x.concurrency === r.concurrency);
        if (!n) continue;
        console.log(`${r.name.padEnd(34)}${String(r.concurrency).padStart(4)}${(n.p50 / r.p50).toFixed(2).padStart(9)}${(n.p95 / r.p95).toFixed(2).padStart(9)}${(n.p99 / r.p99).toFixed(2).padStart(9)}`);
      }
    }
    if (!results.parquet || !results.duckdb || !results['parquet-js']) return;
    console.log('\n## parquet reader vs duckdb reader (same lake, same run): ratio duckdb / parquet (> 1 = parquet faster)');
    console.log('route                             conc     p50×     p95×     p99×   req/s×');
    for (const r of results.parquet) {
      const d = results.duckdb.find((x) => x.name === r.name && x.concurrency === r.concurrency);
      if (!d) continue;
      console.log(
        `${r.name.padEnd(34)}${String(r.concurrency).padStart(4)}${(d.p50 / r.p50).toFixed(2).padStart(9)}${(d.p95 / r.p95).toFixed(2).padStart(9)}` +
          `${(d.p99 / r.p99).toFixed(2).padStart(9)}${(r.rps / d.rps).toFixed(2).padStart(9)}`,
      );
    }
    console.log('\n## ZSTD decoder: libzstd-wasm (parquet) vs fzstd (parquet-js), same lake: ratio fzstd / wasm (> 1 = wasm faster)');
    console.log('route                             conc     p50×     p95×     p99×');
    for (const r of results.parquet) {
      const j = results['parquet-js'].find((x) => x.name === r.name && x.concurrency === r.concurrency);
      if (!j || !r.name.includes('page')) continue;
      console.log(`${r.name.padEnd(34)}${String(r.concurrency).padStart(4)}${(j.p50 / r.p50).toFixed(2).padStart(9)}${(j.p95 / r.p95).toFixed(2).padStart(9)}${(j.p99 / r.p99).toFixed(2).padStart(9)}`);
    }
  }
}

function bytesUnder(dir) {
  const { readdirSync, statSync } = require('node:fs');
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? bytesUnder(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return n;
}

/** Parquet reader across lake row-group sizes (same run): cold first pages and warm pages, ratio to the largest size. */
function rowGroupTable(byRowGroup) {
  const sizes = Object.keys(byRowGroup).map(Number).sort((a, b) => a - b);
  const base = byRowGroup[sizes[sizes.length - 1]];
  const routes = [['cold: page 1, 1-URL domain', 1], ['cold miss: first touch of a group', 1], ['urls page 1 (limit 100)', 1], ['urls page 1, 1-URL domain', 1], ['urls page 1 (limit 100)', 8], ['urls page 1, 1-URL domain', 8], ['urls deep page (offset 4900)', 1]];
  console.log(`\n## parquet reader by lake rowGroupSize (same run); × = ratio to rowGroupSize ${sizes[sizes.length - 1]} (< 1 = faster)`);
  console.log('route                             conc  rowGroup   p50 ms   p95 ms   p99 ms   p50×   p95×   p99×');
  for (const [name, conc] of routes) {
    const b = base.find((x) => x.name === name && x.concurrency === conc);
    for (const rg of sizes) {
      const r = byRowGroup[rg].find((x) => x.name === name && x.concurrency === conc);
      if (!r || !b) continue;
      console.log(
        `${name.padEnd(34)}${String(conc).padStart(4)}${String(rg).padStart(10)}${r.p50.toFixed(3).padStart(9)}${r.p95.toFixed(3).padStart(9)}${r.p99.toFixed(3).padStart(9)}` +
          `${(r.p50 / b.p50).toFixed(2).padStart(7)}${(r.p95 / b.p95).toFixed(2).padStart(7)}${(r.p99 / b.p99).toFixed(2).padStart(7)}`,
      );
    }
  }
}

function runChild(args) {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, args, { stdio: 'inherit' });
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${args[0]} exited ${code}`))));
  });
}

/**
 * `reads`: the lake reader in process, no HTTP — the cost of a row group's first touch once the code is warm, which
 * the HTTP "cold" rows (taken right after the server starts) mix with JIT warm-up. Per lake rowGroupSize and per
 * reader variant, each in its own child process: every file is touched once (its layout: locator or footer), then
 * every other row group is read once (one row from its middle) in a fixed shuffled order.
 */
async function readsMain() {
  const variants = (process.env.BENCH_READ_VARIANTS || 'locator+flat,footer+flat,locator+hyparquet').split(',');
  const rows = [];
  for (const rg of ROW_GROUPS) {
    const dir = mkdtempSync(join(tmpdir(), 'ccpipe-api-bench-'));
    try {
      await runChild(['--build', dir, String(DOMAINS), String(rg)]);
      const lakeMiB = bytesUnder(join(dir, 'urls')) / 2 ** 20;
      for (const v of variants) {
        const r = await new Promise((resolve, reject) => {
          const child = fork(__filename, ['--reads', dir, v], { stdio: ['inherit', 'inherit', 'inherit', 'ipc'] });
          child.once('message', resolve);
          child.once('exit', (code) => code !== 0 && reject(new Error(`--reads exited ${code}`)));
        });
        rows.push({ rg, v, lakeMiB, ...r });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(`\n## first touch of a row group, in process (partitionBits ${PARTITION_BITS}); ms per read of one row`);
  console.log('rowGroup  variant               lake MiB  files  file+layout ms   groups     p50     p95     p99     max   cache MiB');
  for (const r of rows) {
    console.log(
      `${String(r.rg).padStart(8)}  ${r.v.padEnd(20)}${r.lakeMiB.toFixed(1).padStart(10)}${String(r.files).padStart(7)}${r.firstMs.toFixed(1).padStart(16)}` +
        `${String(r.n).padStart(9)}${r.p50.toFixed(2).padStart(8)}${r.p95.toFixed(2).padStart(8)}${r.p99.toFixed(2).padStart(8)}${r.max.toFixed(1).padStart(8)}${(r.cacheBytes / 2 ** 20).toFixed(1).padStart(12)}`,
    );
  }
  for (const rg of ROW_GROUPS) {
    const base = rows.find((r) => r.rg === rg && r.v === 'locator+flat');
    for (const r of rows.filter((x) => x.rg === rg && x !== base)) {
      if (!base) continue;
      console.log(`rowGroup ${rg}: ${r.v} / locator+flat = p50 ${(r.p50 / base.p50).toFixed(2)}×, p95 ${(r.p95 / base.p95).toFixed(2)}×, p99 ${(r.p99 / base.p99).toFixed(2)}×, file+layout ${(r.firstMs / base.firstMs).toFixed(2)}× (> 1 = locator+flat faster)`);
    }
  }
}

async function coldReads(dir, variant) {
  const { FsObjectStore } = require('@ccpipe/adapters');
  const { ParquetLakeReader, initZstd, buildLocator, crcOf } = require('@ccpipe/index');
  await initZstd();
  const [layout, decoder] = variant.split('+');
  let store = new FsObjectStore({ root: dir });
  let files = JSON.parse(require('node:fs').readFileSync(join(dir, 'index/v000001/files.json'), 'utf8'));
  if (layout === 'locator1') {
    // version-1 locators (no chunk CRC32s, so no check as chunks are fetched): the cost of the check, same run
    const v1 = new Map();
    files = files.map((f) => {
      const b = buildLocator(require('node:fs').readFileSync(join(dir, f.key)), { version: 1 });
      v1.set(f.locator.key, b);
      return { ...f, locator: { ...f.locator, bytes: b.length, crc32: crcOf(b) } };
    });
    const inner = store;
    store = Object.create(inner);
    store.getRange = async (key, offset, length) => (v1.has(key) ? v1.get(key).subarray(offset, offset + length) : inner.getRange(key, offset, length));
  }
  const reader = new ParquetLakeReader({ store, locators: layout !== 'footer', decoder });
  let t = process.hrtime.bigint();
  for (const f of files) await reader.rows(f, 0, 1);
  const firstMs = Number(process.hrtime.bigint() - t) / 1e6 / files.length;
  let seed = 42;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const groups = files.flatMap((f) => f.rowGroups.filter(([s]) => s > 0).map(([s, n]) => [f, s + (n >> 1)]));
  for (let i = groups.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [groups[i], groups[j]] = [groups[j], groups[i]];
  }
  const ms = [];
  for (const [f, row] of groups) {
    t = process.hrtime.bigint();
    await reader.rows(f, row, row + 1);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const q = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))] ?? 0;
  process.send({ files: files.length, firstMs, n: ms.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: ms[ms.length - 1] ?? 0, cacheBytes: reader.stats().bytes }, () => process.exit(0));
}

/** Synthetic worker parts (schema and sort order of docs/parquet.md) written by DuckDB, then one real merge. */
async function buildLake(dir, n, rowGroupSize = 32_768) {
  const { DuckDBInstance } = require('@duckdb/node-api');
  const { layout } = require('@ccpipe/core');
  const { FsObjectStore } = require('@ccpipe/adapters');
  const { runMerge } = require('@ccpipe/index');
  const store = new FsObjectStore({ root: dir });
  const db = await DuckDBInstance.create(':memory:', { threads: '2', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const c = await db.connect();
  const tlds = `[${TLDS.map((t) => `'${t}'`).join(', ')}]`;
  for (let b = 0; b * PART_DOMAINS < n; b++) {
    const id = `bench-${b}`;
    const part = layout.batchPart(1, id);
    const lo = b * PART_DOMAINS;
    const hi = Math.min(n, lo + PART_DOMAINS);
    await store.put(part, Buffer.alloc(0)); // creates the directory
    await c.run(`COPY (
      WITH d AS (SELECT i, 'site' || i || '.' || ${tlds}[i % ${TLDS.length} + 1] AS domain FROM range(${lo}, ${hi}) t(i)),
      u AS (SELECT i, domain, 'https://www.' || domain || '/' AS url FROM d WHERE i % ${BIG_EVERY} <> 0
            UNION ALL SELECT i, domain, 'https://www.' || domain || '/articles/' || lpad(k::VARCHAR, 5, '0') || '/a-fairly-typical-slug-of-an-article'
            FROM d, range(${BIG_URLS}) r(k) WHERE i % ${BIG_EVERY} = 0)
      SELECT 1::UINTEGER AS dataset_id, (hash(url) % 9223372036854775807)::BIGINT AS url_id, url, url AS raw_url, 'www.' || domain AS host, domain,
             domain AS private_domain, domain || ')/' AS surt, to_timestamp(1900000000 + hash(url) % 86400) AS ts, 200::SMALLINT AS status,
             'text/html' AS mime, 'utf-8' AS charset, 'eng' AS languages, 'A title of typical length for a news article ' || (hash(url) % 1000) AS title,
             NULL::VARCHAR AS text, (hash(url) % 100000)::INTEGER AS content_length, 0 AS outlink_count, []::VARCHAR[] AS outlinks,
             'crawl-data/CC-MAIN-2030-40/segments/1/warc/CC-MAIN-' || (hash(url) % 1000) || '.warc.gz' AS warc_filename,
             (hash(url) % 1000000000)::BIGINT AS warc_offset, (hash(url) % 50000)::INTEGER AS warc_length, 'SHA1' || (hash(url) % 1000000) AS digest
      FROM u ORDER BY domain, url, ts
    ) TO '${join(dir, part)}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 32768)`);
    const rows = Number((await c.runAndReadAll(`SELECT count(*) FROM '${join(dir, part)}'`)).getRows()[0][0]);
    const marker = Buffer.from(JSON.stringify({ v: 1, batchId: id, datasetId: 1, rows, part }));
    await store.put(layout.batchMarker(1, id), marker);
    await store.put(layout.inboxEntry(1, id), marker);
  }
  c.closeSync();
  db.closeSync();
  const core = require('@ccpipe/core');
  const reg = core.ensureDatasetIn(core.emptyDatasetRegistry(), 'CC-MAIN-2030-40', 'CC-MAIN-2030-40', '2030-01-01T00:00:00Z').registry;
  await store.put('datasets.json', core.serializeDatasetRegistry(reg));
  const r = await runMerge({ store, dataDir: dir, rowGroupSize, partitionBits: PARTITION_BITS, keepVersions: 1, graceMs: 0 });
  console.log(`merge: ${JSON.stringify({ version: r.version, urls: r.urls, domains: r.domains, ms: r.ms })}`);
}

async function serve(source, info) {
  const { startApi } = require('@ccpipe/api');
  const { Registry } = require('prom-client');
  const api = await startApi({ source, port: 0, host: '127.0.0.1', registry: new Registry() });
  process.send({ url: api.url, ...info });
  process.on('message', async (m) => {
    if (m === 'stats') process.send({ stats: source.cacheStats?.() ?? null, rssMb: Math.round(process.memoryUsage().rss / 1e6) });
    if (m === 'close') {
      await api.close();
      await source.close();
      process.exit(0);
    }
  });
}

async function lakeServer(reader, dir) {
  const { FsObjectStore } = require('@ccpipe/adapters');
  const { openIndexSource } = require('@ccpipe/index');
  const t0 = process.hrtime.bigint();
  const source = await openIndexSource({
    store: new FsObjectStore({ root: dir }), dataDir: dir, lakeReader: reader === 'duckdb' ? 'duckdb' : 'parquet', zstd: reader === 'parquet-js' ? 'js' : 'wasm',
    locators: reader !== 'parquet-footer', warmUp: reader === 'parquet-warm', indexReads: reader === 'parquet-files' ? 'files' : 'resident',
  });
  await source.current();
  const buildMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (global.gc) global.gc();
  await serve(source, { buildMs, heapMb: Math.round(process.memoryUsage().heapUsed / 1e6) });
}

async function memoryServer(n) {
  const { MemoryIndexView, MemoryIndexSource } = require('@ccpipe/api');
  const core = require('@ccpipe/core');
  const t0 = process.hrtime.bigint();
  const domains = new Map();
  const ts = '2030-11-10T15:09:55Z';
  const item = (host, path) => {
    const url = `https://${host}/${path}`;
    return { urlId: core.urlIdHex(core.urlId(url)), url, ts, status: 200, title: 'A title of typical length for a news article' };
  };
  for (let i = 0; i < n; i++) {
    const d = domainName(i);
    const urls = new Map();
    if (i % BIG_EVERY === 0) urls.set(1, Array.from({ length: BIG_URLS }, (_, k) => item(`www.${d}`, bigPath(k))));
    else urls.set(1, [item(`www.${d}`, '')]);
    const tld = i % 256;
    domains.set(d, { domain64: `${tld.toString(16).padStart(2, '0')}:${(i >>> 8).toString(16).padStart(6, '0')}:00:000000`, urls });
  }
  const datasets = [{ datasetId: 1, name: 'CC-MAIN-2030-40', crawl: 'CC-MAIN-2030-40' }];
  const view = new MemoryIndexView('bench-v1', datasets, domains, new Map());
  const buildMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (global.gc) global.gc();
  const heapMb = Math.round(process.memoryUsage().heapUsed / 1e6);
  await serve(new MemoryIndexSource(view), { buildMs, heapMb });
}

/**
 * The two goal routes measured again by wrk (Debian's `wrk`, when installed; BENCH_WRK=0 skips it) against the same
 * server: an independent load tool, so the figures do not rest on this file's client alone. One wrk thread, 1 and 8
 * connections, BENCH_WRK_SECONDS (default 10) each, paths drawn from the same generators (10,000 per route, cycled).
 */
function wrkRows(url, paths) {
  const { spawnSync } = require('node:child_process');
  const { writeFileSync } = require('node:fs');
  if (process.env.BENCH_WRK === '0' || spawnSync('wrk', ['--version']).error) return [];
  const seconds = Number(process.env.BENCH_WRK_SECONDS || 10);
  const ms = (v, unit) => Number(v) * ({ us: 1e-3, ms: 1, s: 1e3 }[unit] ?? NaN);
  const out = [];
  for (const name of ['domain', 'urls page 1 (limit 100)']) {
    const dir = mkdtempSync(join(tmpdir(), 'ccpipe-wrk-'));
    try {
      const list = Array.from({ length: 10_000 }, () => JSON.stringify(paths[name]())).join(',');
      writeFileSync(join(dir, 'paths.lua'), `local paths = {${list}}\nlocal i = 0\nrequest = function()\n  i = i + 1\n  return wrk.format("GET", paths[(i % #paths) + 1])\nend\n`);
      for (const connections of [1, 8]) {
        const r = spawnSync('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', join(dir, 'paths.lua'), url], { encoding: 'utf8' });
        const q = (p) => {
          const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(r.stdout);
          return m ? ms(m[1], m[2]) : NaN;
        };
        const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout)?.[1] ?? NaN);
        if (/Non-2xx/.test(r.stdout)) throw new Error(`wrk ${name}: non-2xx answers\n${r.stdout}`);
        out.push({ name, connections, seconds, p50: q(50), p99: q(99), rps });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

async function client(mode, arg) {
  const child = fork(__filename, ['--server', mode, arg], { execArgv: ['--expose-gc'], stdio: 'inherit' });
  try {
    return await load(mode, child);
  } catch (err) {
    child.kill(); // never leave the server running
    throw err;
  }
}

async function load(mode, child) {
  const { Pool } = require('undici');
  const ready = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  const ask = (m) => new Promise((resolve) => {
    child.once('message', resolve);
    child.send(m);
  });
  console.log(`\n## ${mode}: ${DOMAINS.toLocaleString('en')} domains, opened in ${ready.buildMs.toFixed(0)} ms, server heap ${ready.heapMb} MB`);
  const pool = new Pool(ready.url, { connections: 16, pipelining: 1, keepAliveTimeout: 60_000 });
  let seed = 42;
  const rand = (m) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % m;
  };
  const bigCount = Math.ceil(DOMAINS / BIG_EVERY);
  const big = () => domainName(rand(bigCount) * BIG_EVERY);
  const small = () => {
    const i = rand(DOMAINS);
    return domainName(i % BIG_EVERY === 0 ? i + 1 : i);
  };
  const paths = {
    healthz: () => '/healthz',
    domain: () => `/v1/domain/www.${domainName(rand(DOMAINS))}`,
    'urls page 1 (limit 100)': () => `/v1/domain/${big()}/datasets/1/urls`,
    'urls page 1 (limit 1000)': () => `/v1/domain/${big()}/datasets/1/urls?limit=1000`,
    'urls deep page (offset 4900)': () => `/v1/domain/${big()}/datasets/1/urls?offset=4900`,
    'urls page 1, 1-URL domain': () => `/v1/domain/${small()}/datasets/1/urls`,
  };
  const run = async (name, concurrency, requests, pathOf = paths[name], after = null) => {
    const lat = new Float64Array(requests);
    let next = 0;
    let bytes = 0;
    const t0 = process.hrtime.bigint();
    const worker = async () => {
      for (let i = next++; i < requests; i = next++) {
        const path = pathOf();
        const s = process.hrtime.bigint();
        const res = await pool.request({ path, method: 'GET' });
        const body = await res.body.text();
        lat[i] = Number(process.hrtime.bigint() - s) / 1e6;
        if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${body.slice(0, 200)}`);
        bytes += body.length;
        if (after) await after(lat[i]);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    lat.sort();
    const q = (p) => lat[Math.min(requests - 1, Math.floor(p * requests))];
    return { name, concurrency, requests, rps: requests / secs, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: lat[requests - 1], avgBytes: bytes / requests };
  };
  const rows = [];
  // cold: distinct one-URL domains before any warm-up (first touch of footers and row groups). On a small lake
  // many of them land in a row group an earlier one decoded, so "cold miss" keeps only the requests that missed
  // the chunk cache (cacheStats().misses grew): the first touch of a row group, which is what almost every first
  // page is at Common Crawl scale.
  const coldSeen = new Set();
  const coldMiss = [];
  let misses = (await ask('stats')).stats?.misses;
  const cold = await run('cold: page 1, 1-URL domain', 1, COLD, () => {
    let d;
    do d = small(); while (coldSeen.has(d));
    coldSeen.add(d);
    return `/v1/domain/${d}/datasets/1/urls`;
  }, async (ms) => {
    if (misses === undefined) return;
    const now = (await ask('stats')).stats.misses;
    if (now > misses) coldMiss.push(ms);
    misses = now;
  });
  rows.push(cold);
  if (coldMiss.length) {
    const lat = Float64Array.from(coldMiss).sort();
    const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
    rows.push({ ...cold, name: 'cold miss: first touch of a group', requests: lat.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: lat[lat.length - 1] });
  }
  for (const name of Object.keys(paths)) await run(name, 4, 1000); // warm-up (JIT, connections, caches)
  for (const c of [1, 8]) {
    for (const name of Object.keys(paths)) {
      // big pages, and the DuckDB reader's pages (a query each), get a fifth of the requests
      const requests = name.includes('1000') || (mode === 'duckdb' && name.startsWith('urls')) ? Math.ceil(REQUESTS / 5) : REQUESTS;
      rows.push(await run(name, c, requests));
    }
  }
  const floor = (c) => rows.find((r) => r.name === 'healthz' && r.concurrency === c);
  console.log('\nroute                             conc  requests     req/s   p50 ms   p95 ms   p99 ms   max ms  body B  p50 vs healthz');
  for (const r of rows) {
    const f = floor(r.concurrency);
    console.log(
      `${r.name.padEnd(34)}${String(r.concurrency).padStart(4)}${String(r.requests).padStart(10)}${r.rps.toFixed(0).padStart(10)}` +
        `${r.p50.toFixed(3).padStart(9)}${r.p95.toFixed(3).padStart(9)}${r.p99.toFixed(3).padStart(9)}${r.max.toFixed(1).padStart(9)}${r.avgBytes.toFixed(0).padStart(8)}` +
        `${f ? `${(r.p50 / f.p50).toFixed(2).padStart(10)}×` : ''}`,
    );
  }
  const byWrk = wrkRows(ready.url, paths);
  const { stats, rssMb } = await ask('stats');
  if (stats) console.log(`\ncache: ${JSON.stringify(stats)}, server RSS ${rssMb} MB`);
  else console.log(`\nserver RSS ${rssMb} MB`);
  for (const c of [1, 8]) {
    const d = rows.find((r) => r.name === 'domain' && r.concurrency === c);
    const u = rows.find((r) => r.name === 'urls page 1 (limit 100)' && r.concurrency === c);
    console.log(`${mode} goals at concurrency ${c}: /v1/domain p99 ${d.p99.toFixed(2)} ms (≤ 2), first URL page p99 ${u.p99.toFixed(2)} ms (≤ 20), p95 ${u.p95.toFixed(2)} ms (spec < 30)`);
  }
  for (const w of byWrk) {
    console.log(`${mode} by wrk (an independent load tool, ${w.connections} connection(s), ${w.seconds} s): ${w.name} p50 ${w.p50.toFixed(3)} ms, p99 ${w.p99.toFixed(3)} ms, ${w.rps.toFixed(0)} req/s`);
  }
  await pool.close();
  child.send('close');
  await new Promise((r) => child.once('exit', r));
  return rows;
}
