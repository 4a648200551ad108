'use strict';
// HTTP API latency and throughput on loopback: GET /v1/domain/{d} and the first URL page (100 items) of a domain,
// against a MemoryIndexSource with 1M synthetic registered domains, with /healthz (same server, no index work) as
// the floor measured in the same run.
//
// The server runs in a child process (its own event loop and heap); this process is the client: a bounded
// keep-alive loop over an undici Pool, each of C workers sending one request at a time. Latency is measured at the
// client (send → last body byte). 2 shared cores and other jobs running: read the ratios, and p99 is noisy.
//   node bench/api.bench.js [domains=1000000] [requests=20000]
const { fork } = require('node:child_process');

const DOMAINS = Number(process.argv[2] ?? 1_000_000);
const REQUESTS = Number(process.argv[3] ?? 20_000);
const BIG_EVERY = 10_000; // every 10,000th domain holds 5,000 URLs in dataset 1; the others 1 URL per dataset
const BIG_URLS = 5_000;
const TLDS = ['com', 'org', 'net', 'de', 'co.uk', 'fr', 'io', 'com.au'];
const domainName = (i) => `site${i.toString(36)}.${TLDS[i % TLDS.length]}`;

if (process.argv[2] === '--server') {
  server().catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  client().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}

async function server() {
  const { MemoryIndexView, MemoryIndexSource, startApi } = require('@ccpipe/api');
  const core = require('@ccpipe/core');
  const { Registry } = require('prom-client');
  const n = Number(process.argv[3]);
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
  const api = await startApi({ source: new MemoryIndexSource(view), port: 0, host: '127.0.0.1', registry: new Registry() });
  process.send({ url: api.url, buildMs, heapMb });
  process.on('message', async (m) => {
    if (m === 'close') {
      await api.close();
      process.exit(0);
    }
  });
}

async function client() {
  const { Pool } = require('undici');
  const child = fork(__filename, ['--server', String(DOMAINS)], { execArgv: ['--expose-gc'], stdio: 'inherit' });
  const ready = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  console.log(`index: ${DOMAINS.toLocaleString('en')} domains built in ${ready.buildMs.toFixed(0)} ms, server heap ${ready.heapMb} MB`);
  const pool = new Pool(ready.url, { connections: 16, pipelining: 1, keepAliveTimeout: 60_000 });
  let seed = 42;
  const rand = (m) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % m;
  };
  const paths = {
    healthz: () => '/healthz',
    domain: () => `/v1/domain/www.${domainName(rand(DOMAINS))}`,
    'urls page 1 (100 of 5,000)': () => `/v1/domain/${domainName(rand(Math.ceil(DOMAINS / BIG_EVERY)) * BIG_EVERY)}/datasets/1/urls`,
    'urls page 1 (limit 1000)': () => `/v1/domain/${domainName(rand(Math.ceil(DOMAINS / BIG_EVERY)) * BIG_EVERY)}/datasets/1/urls?limit=1000`,
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
      const requests = name.includes('1000') ? Math.ceil(REQUESTS / 5) : REQUESTS;
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
  const u1 = rows.find((r) => r.name.startsWith('urls page 1 (100') && r.concurrency === 1);
  console.log(`\ngoals at concurrency 1: /v1/domain p99 ${d1.p99.toFixed(2)} ms (≤ 2), first URL page p99 ${u1.p99.toFixed(2)} ms (≤ 20)`);
  await pool.close();
  child.send('close');
  await new Promise((r) => child.once('exit', r));
}
