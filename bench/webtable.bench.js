'use strict';
// The web table at ≥ 1M URLs and ≥ 100k domains (issue #20's figures), all in one run:
//  - merge cost of the secondary orderings: the same parts merged with `orderings: true` and `false`, alternated,
//    BENCH_ROUNDS rounds each (default 2), each merge in its own process: wall and CPU medians and their ratio;
//  - bytes of the orderings per URL (orderings.json) beside the lake's;
//  - API latency on loopback (server in a child process, this process the client, one request at a time): a page of
//    /v1/domain/{d}/pages with a filter, /v1/url?include=text, and the first page of /v1/pages?from&to (1-hour
//    windows), each asked twice — the second ask is "warm" — p50/p99 of both; /healthz as the floor;
//  - ordering row groups fetched per cold first page of /v1/pages (in-process, a store that counts ranged reads).
// Parts come from DuckDB (the worker's schema and sort): 10 days of captures, statuses 200/301/404/500, sizes
// 0–200 kB, a ~1 kB text per page, Zipf-like domains (rows/10 of them).
//   node bench/webtable.bench.js [rows=1000000] [requests=300]
const { fork } = require('node:child_process');
const { cpSync, mkdtempSync, rmSync, readFileSync } = require('node:fs');
const { tmpdir, loadavg } = require('node:os');
const { join } = require('node:path');
const { childOf, serveLake, median, latencies: fmt, timed } = require('./lib/proc');
const child = childOf(__filename);

// the children take the size from the parent through BENCH_ROWS
const ROWS = Number(process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : (process.env.BENCH_ROWS ?? 1_000_000));
process.env.BENCH_ROWS = String(ROWS);
const REQUESTS = Number(process.argv[3] ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 2);
const PART_ROWS = 50_000;
const DOMAINS = Math.floor(ROWS / 10);
const T0 = 1900000000; // 2030-03-17

async function generate(dir) {
  const { DuckDBInstance } = require('@duckdb/node-api');
  const { layout } = require('@ccpipe/core');
  const { FsObjectStore } = require('@ccpipe/adapters');
  const store = new FsObjectStore({ root: dir });
  const db = await DuckDBInstance.create(':memory:', { threads: '1', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const c = await db.connect();
  for (let b = 0; b * PART_ROWS < ROWS; b++) {
    const id = `wt-${b}`;
    const part = layout.batchPart(1, id);
    const n = Math.min(PART_ROWS, ROWS - b * PART_ROWS);
    await store.put(part, Buffer.alloc(0));
    await c.run(`COPY (
      WITH g AS (SELECT i, hash(7 * 1000003 + ${b} * ${PART_ROWS} + i) AS h FROM range(${n}) t(i)),
      r AS (SELECT i, h, (floor(pow((h % 1000000) / 1000000.0, 3) * ${DOMAINS}))::BIGINT AS d, ${b} * ${PART_ROWS} + i AS p FROM g),
      u AS (SELECT *, CASE WHEN h % 5 = 0 THEN 'https://blog.site' ELSE 'https://www.site' END || d || '.com/section/' || (p % 97) || '/article-' || p || '.html' AS url FROM r)
      SELECT 1::UINTEGER AS dataset_id, (hash(url) % 9223372036854775807)::BIGINT AS url_id, url, url AS raw_url,
             regexp_extract(url, '//([^/]+)/', 1) AS host, 'site' || d || '.com' AS domain, 'site' || d || '.com' AS private_domain,
             'com,site' || d || ')/section/' || (p % 97) || '/article-' || p || '.html' AS surt,
             to_timestamp(${T0} + (h % 864000)) AS ts,
             (CASE WHEN h % 100 < 85 THEN 200 WHEN h % 100 < 90 THEN 301 WHEN h % 100 < 97 THEN 404 ELSE 500 END)::SMALLINT AS status,
             'text/html' AS mime, 'utf-8' AS charset, CASE WHEN h % 7 = 0 THEN 'deu,eng' ELSE 'eng' END AS languages, 'Article ' || p AS title,
             CASE WHEN h % 100 < 85 THEN repeat('word' || (h % 1000) || ' text of the article ' || p || '. ', 30) ELSE NULL END AS text,
             (h % 200000)::INTEGER AS content_length, 0 AS outlink_count, []::VARCHAR[] AS outlinks,
             'crawl-data/CC-MAIN-2030-12/segments/1/warc/CC-MAIN-' || (h % 1000) || '.warc.gz' AS warc_filename,
             (h % 1000000000)::BIGINT AS warc_offset, (h % 50000)::INTEGER AS warc_length, 'SHA1' || (h % 1000000) AS digest
      FROM u ORDER BY domain, url, ts
    ) TO '${join(dir, part)}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 32768)`);
    const marker = Buffer.from(JSON.stringify({ v: 1, batchId: id, datasetId: 1, rows: n, part }));
    await store.put(layout.batchMarker(1, id), marker);
    await store.put(layout.inboxEntry(1, id), marker);
  }
  c.closeSync();
  db.closeSync();
}

async function merge(dir, orderings) {
  const { runMerge } = require('@ccpipe/index');
  const { FsObjectStore } = require('@ccpipe/adapters');
  const store = new FsObjectStore({ root: dir });
  const phases = {};
  const cpu0 = process.cpuUsage();
  const t0 = Date.now();
  const r = await runMerge({ store, dataDir: dir, rowGroupSize: 8192, keepVersions: 2, graceMs: 0, orderings: orderings === 'on', onPhase: (p, ms) => (phases[p] = ms) });
  const cpu = process.cpuUsage(cpu0);
  const toc = JSON.parse(readFileSync(join(dir, 'index', r.version, 'version.json'), 'utf8'));
  let orderingBytes = 0;
  if (toc.files['orderings.json']) for (const o of JSON.parse(readFileSync(join(dir, 'index', r.version, 'orderings.json'), 'utf8'))) orderingBytes += o.bytes;
  const status = JSON.parse(readFileSync(join(dir, 'index', r.version, 'status.json'), 'utf8'));
  return { wallS: (Date.now() - t0) / 1000, cpuS: (cpu.user + cpu.system) / 1e6, urls: r.urls, domains: r.domains, phases, orderingBytes, lakeBytes: status.lakeBytes };
}

/** Ordering row groups read by cold first pages of /v1/pages (a fresh source per query, ranged reads counted). */
async function orderingReads(dir, windows) {
  const { openIndexSource } = require('@ccpipe/index');
  const { parquetMetadata } = await import('hyparquet');
  const { FsObjectStore } = require('@ccpipe/adapters');
  const counts = [];
  for (const [from, to] of windows) {
    const store = new FsObjectStore({ root: dir });
    const seen = new Set();
    const getRange = store.getRange.bind(store);
    store.getRange = (key, off, len) => {
      if (key.startsWith('order/')) seen.add(`${key}@${off}`);
      return getRange(key, off, len);
    };
    const src = await openIndexSource({ store, pollMs: 0 });
    const v = await src.current();
    await v.pagesAcross({ datasetIds: [1], from, to, status: null, minSize: null, maxSize: null, sort: 'ts', order: 'asc', after: null, limit: 100 });
    // each ranged read mapped to the row group whose column chunks it covers (footer reads cover none)
    const groups = new Set();
    for (const k of seen) {
      const [key, off] = k.split('@');
      const b = readFileSync(join(dir, key));
      const meta = parquetMetadata(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
      meta.row_groups.forEach((rg, g) => {
        const at = rg.columns.map((c) => Number(c.meta_data.dictionary_page_offset || c.meta_data.data_page_offset));
        if (at.some((o, i) => Number(off) <= o && o < Number(off) + 1 + Number(rg.columns[i].meta_data.total_compressed_size))) groups.add(`${key}#${g}`);
      });
    }
    counts.push(groups.size);
    await src.close();
  }
  return counts;
}

async function main() {
  console.log(`webtable bench: ${ROWS} rows, ${DOMAINS} domain slots, ${REQUESTS} requests per route; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const root = mkdtempSync(join(tmpdir(), 'ccpipe-webtable-bench-'));
  try {
    const parts = join(root, 'parts');
    let t = Date.now();
    child(['--generate', parts]);
    console.log(`parts generated in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    const runs = { on: [], off: [] };
    let lakeDir = null;
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of round % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
        const d = join(root, `merge-${mode}-${round}`);
        cpSync(parts, d, { recursive: true });
        const r = child(['--merge', d, mode]);
        runs[mode].push(r);
        console.log(`merge orderings=${mode} round ${round + 1}: wall ${r.wallS.toFixed(1)} s, CPU ${r.cpuS.toFixed(1)} s, phases ${JSON.stringify(r.phases)}`);
        if (mode === 'on' && lakeDir === null) lakeDir = d;
        else rmSync(d, { recursive: true, force: true });
      }
    }
    const on = runs.on[0];
    const [wOn, wOff, cOn, cOff] = [median(runs.on.map((r) => r.wallS)), median(runs.off.map((r) => r.wallS)), median(runs.on.map((r) => r.cpuS)), median(runs.off.map((r) => r.cpuS))];
    console.log(`merge with orderings / without (medians): wall ${wOn.toFixed(1)} / ${wOff.toFixed(1)} s = ${(wOn / wOff).toFixed(2)}×, CPU ${cOn.toFixed(1)} / ${cOff.toFixed(1)} s = ${(cOn / cOff).toFixed(2)}× (goal ≤ 1.3×)`);
    console.log(`URLs ${on.urls}, domains ${on.domains}; orderings ${(on.orderingBytes / on.urls).toFixed(2)} B/URL (goal ≤ 8), lake ${(on.lakeBytes / on.urls).toFixed(1)} B/URL (with text)`);

    const srv = fork(__filename, ['--server', lakeDir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const { url } = await new Promise((resolve) => srv.once('message', resolve));
    try {
      const floor = [];
      for (let i = 0; i < REQUESTS; i++) {
        const t = process.hrtime.bigint();
        await (await fetch(`${url}/healthz`)).text();
        floor.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      // domains with several URLs: the Zipf head (low d) holds the big ones
      const domains = Array.from({ length: REQUESTS }, (_, i) => `site${Math.floor(Math.pow(((i * 7919) % 1000) / 1000, 2) * DOMAINS * 0.05)}.com`);
      const cold = { pages: [], text: [], across: [] };
      const warm = { pages: [], text: [], across: [] };
      const urls = [];
      for (const pass of [cold, warm]) {
        for (const d of domains) {
          const r = await timed(`${url}/v1/domain/${d}/pages?status=2xx,4xx&sort=ts&order=desc&limit=100`);
          pass.pages.push(r.ms);
          if (pass === cold && r.body.items.length > 0) urls.push(r.body.items[Math.floor(r.body.items.length / 2)].url);
        }
        for (const u of urls) pass.text.push((await timed(`${url}/v1/url?url=${encodeURIComponent(u)}&include=text`)).ms);
        for (let i = 0; i < REQUESTS; i++) {
          const from = (T0 + ((i * 7919) % 860000)) * 1000;
          pass.across.push((await timed(`${url}/v1/pages?from=${new Date(from).toISOString()}&to=${new Date(from + 3600_000).toISOString()}&limit=100`)).ms);
        }
      }
      console.log(`/healthz (floor): ${fmt(floor)}`);
      for (const [name, key, goal] of [['/v1/domain/{d}/pages?status&sort=ts', 'pages', 20], ['/v1/url?include=text', 'text', 20], ['/v1/pages?from&to first page', 'across', 50]]) {
        console.log(`${name}: cold ${fmt(cold[key])}; warm ${fmt(warm[key])} (goal warm p99 ≤ ${goal} ms)`);
      }
    } finally {
      srv.send('stop');
      await new Promise((resolve) => srv.once('exit', resolve));
    }
    const windows = Array.from({ length: 20 }, (_, i) => {
      const from = (T0 + ((i * 104729) % 860000)) * 1000;
      return [from, from + 3600_000];
    });
    const reads = child(['--reads', lakeDir, JSON.stringify(windows)]);
    console.log(`ordering row groups read per cold /v1/pages first page: median ${median(reads)}, max ${Math.max(...reads)} (goal ≤ 3)`);
    console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const [flag, a, b] = process.argv.slice(2);
const run = flag === '--generate' ? generate(a).then(() => console.log('{}'))
  : flag === '--merge' ? merge(a, b).then((r) => console.log(JSON.stringify(r)))
    : flag === '--server' ? serveLake(a)
      : flag === '--reads' ? orderingReads(a, JSON.parse(b)).then((r) => console.log(JSON.stringify(r)))
        : main();
run.catch((err) => {
  console.error(err);
  process.exit(1);
});
