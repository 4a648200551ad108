'use strict';
// HTTP API latency and throughput on loopback: GET /v1/domain/{d} and the first URL page (100 items) of a domain,
// with /healthz (same server, no index work) as the floor measured in the same run, over two sources:
//  - memory: a MemoryIndexSource with 1M synthetic registered domains (the API's own cost);
//  - lake: the real read side (@ccpipe/index openIndexSource) over cc-mirror-dev ingested and merged in a temp
//    directory (batcher → worker with an inline extractor → merger): 174 domains, so it measures the per-request
//    cost of LakeIndexView (resident dictionary/postings for /domain, a DuckDB row-range read for /urls), not scale.
//
// The server runs in a child process (its own event loop and heap); this process is the client: a bounded
// keep-alive loop over an undici Pool, each of C workers sending one request at a time. Latency is measured at the
// client (send → last body byte). 2 shared cores and other jobs running: read the ratios, and p99 is noisy.
//   node bench/api.bench.js [memory|lake|both=both] [domains=1000000] [requests=20000]
const { fork } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const MODE = process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : 'both';
const DOMAINS = Number(process.argv[3] ?? 1_000_000);
const REQUESTS = Number(process.argv[4] ?? 20_000);
const MIRROR = join(__dirname, '..', '..', 'shared', 'corpus', 'cc-mirror-dev');
const BIG_EVERY = 10_000; // every 10,000th domain holds 5,000 URLs in dataset 1; the others 1 URL per dataset
const BIG_URLS = 5_000;
const TLDS = ['com', 'org', 'net', 'de', 'co.uk', 'fr', 'io', 'com.au'];
const domainName = (i) => `site${i.toString(36)}.${TLDS[i % TLDS.length]}`;

if (process.argv[2] === '--server') {
  (process.argv[3] === 'lake' ? lakeServer() : memoryServer(Number(process.argv[4]))).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  (async () => {
    if (MODE !== 'lake') await client('memory');
    if (MODE !== 'memory') await client('lake');
  })().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}

async function serve(source, info) {
  const { startApi } = require('@ccpipe/api');
  const { Registry } = require('prom-client');
  const api = await startApi({ source, port: 0, host: '127.0.0.1', registry: new Registry() });
  process.send({ url: api.url, ...info });
  process.on('message', async (m) => {
    if (m === 'close') {
      await api.close();
      await source.close();
      if (info.cleanup) await info.cleanup();
      process.exit(0);
    }
  });
}

async function lakeServer() {
  const core = require('@ccpipe/core');
  const { FsObjectStore, FsRangeReader, MemoryObjectStore, systemClock, writeParquetPart, closeDuckDbParquetEngine } = require('@ccpipe/adapters');
  const { loadClusterIdx, planBlocks, runBatcher, runFingerprint } = require('@ccpipe/batcher');
  const { processBatch } = require('@ccpipe/worker');
  const { openIndexSource, runMerge } = require('@ccpipe/index');
  const t0 = process.hrtime.bigint();
  const dir = mkdtempSync(join(tmpdir(), 'ccpipe-api-bench-'));
  const store = new FsObjectStore({ root: dir });
  const reader = new FsRangeReader({ root: MIRROR, expectGzip: true });
  const crawls = ['CC-MAIN-2030-40', 'CC-MAIN-2030-44'];
  let reg = core.emptyDatasetRegistry();
  for (const c of crawls) reg = core.ensureDatasetIn(reg, c, c, '2030-01-01T00:00:00Z').registry;
  await store.put('datasets.json', core.serializeDatasetRegistry(reg));
  const deps = {
    reader, store,
    extract: async () => ({ title: 'A title of typical length for a news article', text: 'x', lang: null, outlinks: [], dom: 'linkedom', article: false, truncated: false, outlinksTruncated: false }),
    writePart: (rows) => writeParquetPart(rows, { engine: 'duckdb' }),
  };
  for (const [i, crawl] of crawls.entries()) {
    const { entries } = await loadClusterIdx(crawl, { localDir: '/nonexistent', reader });
    const batches = [];
    const publisher = { publish: async (b) => void batches.push(b), close: async () => undefined };
    await runBatcher(
      {
        crawl, dataset: crawl, datasetId: reg.datasets[i].id, fingerprint: runFingerprint({}), plan: planBlocks(entries, { maxBlocks: null }), startIndex: 0,
        filter: core.compileFilter({}, { registeredDomainOf: core.registeredDomainOf }), targets: null, batchSize: 60, blockConcurrency: 2, publishWindow: 4, publishAttempts: 1,
      },
      { reader, publisher, store: new MemoryObjectStore(), clock: systemClock },
    );
    for (const b of batches) await processBatch(b, deps, { concurrency: 8, includeText: false });
  }
  await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 60_000 });
  await closeDuckDbParquetEngine();
  const source = await openIndexSource({ store, dataDir: dir });
  const buildMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (global.gc) global.gc();
  await serve(source, { buildMs, heapMb: Math.round(process.memoryUsage().heapUsed / 1e6), cleanup: async () => rmSync(dir, { recursive: true, force: true }) });
}

async function memoryServer(n) {
  const { MemoryIndexView, MemoryIndexSource } = require('@ccpipe/api');
  const core = require('@ccpipe/core');
  const t0 = process.hrtime.bigint();
  const domains = new Map();
  const ts = '2030-11-10T15:09:55Z';
  const item = (host, path) => {
    const url = `https://${host}/${path}`;
    return { urlId: core.urlIdHex(core.urlId(url)), url, ts, status: 200, title: `Page ${path} of ${host}` };
  };
  for (let i = 0; i < n; i++) {
    const d = domainName(i);
    const urls = new Map();
    if (i % BIG_EVERY === 0) {
      urls.set(1, Array.from({ length: BIG_URLS }, (_, k) => item(`www.${d}`, `articles/${String(k).padStart(5, '0')}/a-fairly-typical-slug-of-an-article`)));
    } else urls.set(1, [item(`www.${d}`, '')]);
    if (i % 2 === 0) urls.set(2, [item(d, 'about')]);
    if (i % 5 === 0) urls.set(3, [item(`blog.${d}`, 'index.html')]);
    const tld = i % 256;
    domains.set(d, { domain64: `${tld.toString(16).padStart(2, '0')}:${(i >>> 8).toString(16).padStart(6, '0')}:00:000000`, urls });
  }
  const datasets = [1, 2, 3].map((id) => ({ datasetId: id, name: `CC-MAIN-2030-${40 + id}`, crawl: `CC-MAIN-2030-${40 + id}` }));
  const view = new MemoryIndexView('bench-v1', datasets, domains, new Map());
  const buildMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (global.gc) global.gc();
  const heapMb = Math.round(process.memoryUsage().heapUsed / 1e6);
  await serve(new MemoryIndexSource(view), { buildMs, heapMb });
}

async function client(mode) {
  const child = fork(__filename, ['--server', mode, String(DOMAINS)], { execArgv: ['--expose-gc'], stdio: 'inherit' });
  try {
    await load(mode, child);
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
  // lake: every oracle domain for /domain; the three bulk domains (hundreds of URLs) for pages
  const oracle = mode === 'lake' ? JSON.parse(readFileSync(join(MIRROR, 'oracle.json'), 'utf8')) : null;
  const lakeDomains = oracle ? [...new Set(Object.values(oracle.crawls).flatMap((c) => Object.keys(c.domains)))] : [];
  const bulk = ['bulk-3.org', 'bulk-3.co.uk', 'bulk-3.de'];
  const label = mode === 'lake' ? `lake: ${lakeDomains.length} domains (cc-mirror-dev, 2 crawls)` : `memory: ${DOMAINS.toLocaleString('en')} domains`;
  console.log(`\n## ${label}, built in ${ready.buildMs.toFixed(0)} ms, server heap ${ready.heapMb} MB`);
  const pool = new Pool(ready.url, { connections: 16, pipelining: 1, keepAliveTimeout: 60_000 });
  let seed = 42;
  const rand = (m) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % m;
  };
  const big = () => (mode === 'lake' ? bulk[rand(bulk.length)] : domainName(rand(Math.ceil(DOMAINS / BIG_EVERY)) * BIG_EVERY));
  const paths = {
    healthz: () => '/healthz',
    domain: () => `/v1/domain/www.${mode === 'lake' ? lakeDomains[rand(lakeDomains.length)] : domainName(rand(DOMAINS))}`,
    'urls page 1 (limit 100)': () => `/v1/domain/${big()}/datasets/1/urls`,
    'urls page 1 (limit 1000)': () => `/v1/domain/${big()}/datasets/1/urls?limit=1000`,
  };
  const run = async (name, concurrency, requests) => {
    const lat = new Float64Array(requests);
    let next = 0;
    let bytes = 0;
    const t0 = process.hrtime.bigint();
    const worker = async () => {
      for (let i = next++; i < requests; i = next++) {
        const path = paths[name]();
        const s = process.hrtime.bigint();
        const res = await pool.request({ path, method: 'GET' });
        const body = await res.body.text();
        lat[i] = Number(process.hrtime.bigint() - s) / 1e6;
        if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${body.slice(0, 200)}`);
        bytes += body.length;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    lat.sort();
    const q = (p) => lat[Math.min(requests - 1, Math.floor(p * requests))];
    return { name, concurrency, requests, rps: requests / secs, p50: q(0.5), p99: q(0.99), max: lat[requests - 1], avgBytes: bytes / requests };
  };
  const rows = [];
  for (const name of Object.keys(paths)) await run(name, 4, 2000); // warm-up (JIT, connections)
  for (const c of [1, 8]) {
    for (const name of Object.keys(paths)) {
      // big pages, and lake pages (a DuckDB query each), get a fifth of the requests
      const requests = name.includes('1000') || (mode === 'lake' && name.startsWith('urls')) ? Math.ceil(REQUESTS / 5) : REQUESTS;
      rows.push(await run(name, c, requests));
    }
  }
  const floor = (c) => rows.find((r) => r.name === 'healthz' && r.concurrency === c);
  console.log('\nroute                         conc  requests     req/s   p50 ms   p99 ms   max ms  body B  p50 vs healthz');
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(30)}${String(r.concurrency).padStart(4)}${String(r.requests).padStart(10)}${r.rps.toFixed(0).padStart(10)}` +
        `${r.p50.toFixed(3).padStart(9)}${r.p99.toFixed(3).padStart(9)}${r.max.toFixed(1).padStart(9)}${r.avgBytes.toFixed(0).padStart(8)}` +
        `${(r.p50 / floor(r.concurrency).p50).toFixed(2).padStart(10)}×`,
    );
  }
  const d1 = rows.find((r) => r.name === 'domain' && r.concurrency === 1);
  const u1 = rows.find((r) => r.name === 'urls page 1 (limit 100)' && r.concurrency === 1);
  console.log(`\n${mode} goals at concurrency 1: /v1/domain p99 ${d1.p99.toFixed(2)} ms (≤ 2), first URL page p99 ${u1.p99.toFixed(2)} ms (≤ 20)`);
  await pool.close();
  child.send('close');
  await new Promise((r) => child.once('exit', r));
}
