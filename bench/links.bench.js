'use strict';
// The link graph and the search shards at merge (issue #21), all in one run:
//  - merge cost: the same parts merged three ways — without link graph and search shards ('none'), with the graph
//    ('links'), with both ('all') — rotated, BENCH_ROUNDS rounds each (default 3), each merge in its own process: wall
//    and CPU medians and their ratios to 'none' (goal ≤ 2× for 'all'); the search phase's docs/s and shard bytes;
//  - bytes of the link files per edge (goal ≤ 12 B);
//  - API latency on loopback (server in a child process, this process the client, one request at a time): the first
//    page of /v1/url/links?direction=in and of /v1/domain/{d}/inlinks, and /v1/search (global and domain-scoped), each
//    asked twice — the second ask is "warm"; /healthz as the floor.
// Parts come from DuckDB with the worker's schema: Zipf-like domains (rows/10 of them), LINKS outlinks per page on
// average — a third to the page's own domain's 20 navigation pages, the rest to other domains' home and navigation
// pages with Zipf popularity, one in ten to a URL no crawl holds — deduplicated per page, with their registered
// domains. Navigation pages are link targets only (no crawled row), as pages a crawl did not reach are. Texts are six
// real paragraphs (../shared's extraction benchmark) per page.
//   node bench/links.bench.js [rows=200000] [requests=300]
const { fork } = require('node:child_process');
const { cpSync, mkdtempSync, rmSync, readFileSync } = require('node:fs');
const { tmpdir, loadavg } = require('node:os');
const { join } = require('node:path');
const { childOf, serveLake, median, latencies: fmt, timed } = require('./lib/proc');
const child = childOf(__filename);

const ROWS = Number(process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : (process.env.BENCH_ROWS ?? 200_000));
process.env.BENCH_ROWS = String(ROWS);
const REQUESTS = Number(process.argv[3] ?? 300);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const PART_ROWS = 50_000;
const DOMAINS = Math.floor(ROWS / 10);
const LINKS = 30;
const T0 = 1900000000;

async function generate(dir) {
  const { DuckDBInstance } = require('@duckdb/node-api');
  const { layout } = require('@ccpipe/core');
  const { FsObjectStore } = require('@ccpipe/adapters');
  const store = new FsObjectStore({ root: dir });
  const db = await DuckDBInstance.create(':memory:', { threads: '1', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const c = await db.connect();
  // page texts are real paragraphs (the extraction benchmark's article bodies), six per page picked by hash: the search
  // shards index text of real words and lengths
  const truth = JSON.parse(readFileSync(join(__dirname, '../../shared/corpus/scrapinghub-article-extraction-benchmark/ground-truth.json'), 'utf8'));
  const paras = Object.values(truth).flatMap((a) => a.articleBody.split('\n').map((x) => x.trim()).filter((x) => x.length >= 40));
  await c.run('CREATE TABLE paras (i BIGINT, p VARCHAR)');
  const app = await c.createAppender('paras');
  paras.forEach((p, i) => {
    app.appendBigInt(BigInt(i));
    app.appendVarchar(p);
    app.endRow();
  });
  app.flushSync();
  app.closeSync();
  // page p of domain d is https://www.site<d>.com/a/<p>.html; a link picks a page number and a domain by a Zipf-like
  // draw, so popular pages collect many inlinks
  const zipf = (h) => `(floor(pow(((${h}) % 1000000) / 1000000.0, 3) * ${DOMAINS}))::BIGINT`;
  for (let b = 0; b * PART_ROWS < ROWS; b++) {
    const id = `lk-${b}`;
    const part = layout.batchPart(1, id);
    const n = Math.min(PART_ROWS, ROWS - b * PART_ROWS);
    await store.put(part, Buffer.alloc(0));
    await c.run(`COPY (
      WITH g AS (SELECT i, hash(11 * 1000003 + ${b} * ${PART_ROWS} + i) AS h FROM range(${n}) t(i)),
      r AS (SELECT i, h, ${zipf('h')} AS d, ${b} * ${PART_ROWS} + i AS p FROM g),
      u AS (SELECT *, 'https://www.site' || d || '.com/a/' || p || '.html' AS url FROM r),
      l AS (
        SELECT u.p, list(DISTINCT t.url) AS outlinks FROM u,
        LATERAL (
          SELECT CASE WHEN k % 10 = 0 THEN 'https://uncrawled' || (hash(u.h, k) % 1000) || '.org/x/' || (hash(k, u.h) % 100000)
                      WHEN k % 3 = 0 THEN 'https://www.site' || u.d || '.com/nav/' || (hash(u.d, k) % 20)
                      WHEN k % 3 = 1 THEN 'https://www.site' || ${zipf('hash(k, u.h)')} || '.com/'
                      ELSE 'https://www.site' || ${zipf('hash(k, u.h, 5)')} || '.com/nav/' || (hash(u.h, k, 7) % 20) END AS url
          FROM range(${LINKS * 2}) k(k) WHERE hash(u.h, k, 3) % 2 = 0
        ) t WHERE t.url <> u.url GROUP BY u.p
      )
      SELECT 1::UINTEGER AS dataset_id, (hash(url) % 9223372036854775807)::BIGINT AS url_id, url, url AS raw_url,
             regexp_extract(url, '//([^/]+)/', 1) AS host, 'site' || d || '.com' AS domain, NULL::VARCHAR AS private_domain,
             'com,site' || d || ',www)/a/' || u.p || '.html' AS surt, to_timestamp(${T0} + (h % 864000)) AS ts, 200::SMALLINT AS status,
             'text/html' AS mime, 'utf-8' AS charset, 'eng' AS languages, 'Page ' || u.p || ' ' || (SELECT left(p, 40) FROM paras WHERE i = u.h % ${paras.length}) AS title,
             (SELECT string_agg(p, chr(10) ORDER BY i) FROM paras WHERE i IN (SELECT hash(u.h, k) % ${paras.length} FROM range(6) k(k))) AS text,
             (h % 200000)::INTEGER AS content_length, len(coalesce(l.outlinks, [])) AS outlink_count, coalesce(l.outlinks, []) AS outlinks,
             list_transform(coalesce(l.outlinks, []), x -> regexp_extract(x, '//(?:www\\.)?([^/]+)/', 1)) AS outlink_domains,
             'crawl-data/CC-MAIN-2030-12/segments/1/warc/CC-MAIN-' || (h % 1000) || '.warc.gz' AS warc_filename,
             (h % 1000000000)::BIGINT AS warc_offset, (h % 50000)::INTEGER AS warc_length, 'SHA1' || (h % 1000000) AS digest
      FROM u LEFT JOIN l USING (p) ORDER BY domain, url, ts
    ) TO '${join(dir, part)}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 32768)`);
    const marker = Buffer.from(JSON.stringify({ v: 1, batchId: id, datasetId: 1, rows: n, part }));
    await store.put(layout.batchMarker(1, id), marker);
    await store.put(layout.inboxEntry(1, id), marker);
  }
  c.closeSync();
  db.closeSync();
}

/** One merge: 'none' (no link graph, no search shards), 'links' (the graph only) or 'all' (graph and search shards). */
async function merge(dir, mode) {
  const { runMerge } = require('@ccpipe/index');
  const { FsObjectStore } = require('@ccpipe/adapters');
  const store = new FsObjectStore({ root: dir });
  const phases = {};
  const cpu0 = process.cpuUsage();
  const t0 = Date.now();
  // 1 GB: the staged rows (≈ 2.5 KB of text and 30 outlinks each) sort at once; at the default 256 MB they are staged
  // in passes (docs/index-format.md), slower in every mode alike. BENCH_MERGE_MEMORY sets another limit.
  const r = await runMerge({ store, dataDir: dir, rowGroupSize: 8192, keepVersions: 2, graceMs: 0, memoryLimit: process.env.BENCH_MERGE_MEMORY ?? '1GB', links: mode !== 'none', search: mode === 'all', onPhase: (p, ms) => (phases[p] = ms) });
  const cpu = process.cpuUsage(cpu0);
  let graph = null;
  const toc = JSON.parse(readFileSync(join(dir, 'index', r.version, 'version.json'), 'utf8'));
  if (toc.files['links.json']) {
    const [d] = JSON.parse(readFileSync(join(dir, 'index', r.version, 'links.json'), 'utf8'));
    graph = { edges: d.edges, targets: d.targets, sources: d.sources, bytes: Object.fromEntries(Object.entries(d.files).map(([k, f]) => [k, f.bytes])) };
  }
  let search = null;
  if (toc.files['search.json']) {
    const shards = JSON.parse(readFileSync(join(dir, 'index', r.version, 'search.json'), 'utf8'));
    search = { shards: shards.length, docs: shards.reduce((s, e) => s + e.docs, 0), bytes: shards.reduce((s, e) => s + e.bytes, 0), textBytes: shards.reduce((s, e) => s + e.textBytes, 0) };
  }
  return { wallS: (Date.now() - t0) / 1000, cpuS: (cpu.user + cpu.system) / 1e6, urls: r.urls, phases, graph, search };
}

/** Search shards of the lake's current version. */
function lakeShards(dir) {
  const m = JSON.parse(readFileSync(join(dir, 'index', 'manifest.json'), 'utf8'));
  return JSON.parse(readFileSync(join(dir, 'index', m.current, 'search.json'), 'utf8')).length;
}

async function main() {
  console.log(`links bench: ${ROWS} pages, ${DOMAINS} domain slots, ~${LINKS} outlinks a page, ${REQUESTS} requests per route; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const root = mkdtempSync(join(tmpdir(), 'ccpipe-links-bench-'));
  try {
    const parts = join(root, 'parts');
    let t = Date.now();
    child(['--generate', parts]);
    console.log(`parts generated in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    const MODES = ['none', 'links', 'all'];
    const runs = { none: [], links: [], all: [] };
    let lakeDir = null;
    for (let round = 0; round < ROUNDS; round++) {
      // alternated: each round starts one mode later, so no mode always runs first
      for (let k = 0; k < MODES.length; k++) {
        const mode = MODES[(round + k) % MODES.length];
        const d = join(root, `merge-${mode}-${round}`);
        cpSync(parts, d, { recursive: true });
        const r = child(['--merge', d, mode]);
        runs[mode].push(r);
        console.log(`merge ${mode} round ${round + 1}: wall ${r.wallS.toFixed(1)} s, CPU ${r.cpuS.toFixed(1)} s, phases ${JSON.stringify(r.phases)}; load ${loadavg()[0].toFixed(2)}`);
        if (mode === 'all' && lakeDir === null) lakeDir = d;
        else rmSync(d, { recursive: true, force: true });
      }
    }
    const g = runs.all[0].graph;
    const s = runs.all[0].search;
    const wall = (m) => median(runs[m].map((r) => r.wallS));
    const cpu = (m) => median(runs[m].map((r) => r.cpuS));
    for (const m of ['links', 'all']) {
      console.log(`merge ${m === 'all' ? 'with links + search' : 'with links'} / without (medians of ${ROUNDS}): wall ${wall(m).toFixed(1)} / ${wall('none').toFixed(1)} s = ${(wall(m) / wall('none')).toFixed(2)}×, CPU ${cpu(m).toFixed(1)} / ${cpu('none').toFixed(1)} s = ${(cpu(m) / cpu('none')).toFixed(2)}×${m === 'all' ? ' (goal ≤ 2×)' : ''}`);
    }
    const searchMs = median(runs.all.map((r) => r.phases.search));
    console.log(`search shards: ${s.shards} shards, ${s.docs} docs, index build ${(s.docs / (searchMs / 1000)).toFixed(0)} docs/s (search phase wall, goal ≥ 2,000 per core), shard bytes / text bytes ${(s.bytes / s.textBytes).toFixed(3)} (with the deflated text for snippets)`);
    const total = Object.values(g.bytes).reduce((s, x) => s + x, 0);
    console.log(`edges ${g.edges}, targets ${g.targets}, sources ${g.sources}; link files ${(total / g.edges).toFixed(2)} B/edge (goal ≤ 12): ${Object.entries(g.bytes).map(([k, b]) => `${k} ${(b / g.edges).toFixed(2)}`).join(', ')}`);

    const srv = fork(__filename, ['--server', lakeDir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const { url } = await new Promise((resolve) => srv.once('message', resolve));
    try {
      const floor = [];
      for (let i = 0; i < REQUESTS; i++) {
        const t1 = process.hrtime.bigint();
        await (await fetch(`${url}/healthz`)).text();
        floor.push(Number(process.hrtime.bigint() - t1) / 1e6);
      }
      // targets spread over the Zipf range: popular pages (many inlinks) and the tail
      const pages = Array.from({ length: REQUESTS }, (_, i) => {
        const d = Math.floor(Math.pow(((i * 104729) % 1000) / 1000, 3) * DOMAINS);
        return i % 2 === 0 ? `https://www.site${d}.com/` : `https://www.site${d}.com/nav/${i % 20}`;
      });
      const domains = Array.from({ length: REQUESTS }, (_, i) => `site${Math.floor(Math.pow(((i * 7919) % 1000) / 1000, 3) * DOMAINS)}.com`);
      const cold = { page: [], domain: [] };
      const warm = { page: [], domain: [] };
      let linked = 0;
      for (const pass of [cold, warm]) {
        for (const p of pages) {
          const r = await timed(`${url}/v1/url/links?url=${encodeURIComponent(p)}&direction=in&limit=100`);
          pass.page.push(r.ms);
          if (pass === cold && r.body.total > 0) linked++;
        }
        for (const d of domains) pass.domain.push((await timed(`${url}/v1/domain/${d}/inlinks?limit=100`)).ms);
      }
      console.log(`/healthz (floor): ${fmt(floor)}; pages asked with ≥ 1 inlink: ${linked}/${pages.length}`);
      for (const [name, key] of [['/v1/url/links?direction=in first page', 'page'], ['/v1/domain/{d}/inlinks first page', 'domain']]) {
        console.log(`${name}: cold ${fmt(cold[key])}; warm ${fmt(warm[key])} (goal warm p99 ≤ 20 ms)`);
      }
      // full-text search through HTTP and the API's search thread: words drawn from the paragraphs the pages hold (two
      // words, or a three-word phrase), global and scoped to a Zipf-drawn domain; each query asked twice (warm second)
      const words = readFileSync(join(__dirname, '../../shared/corpus/scrapinghub-article-extraction-benchmark/ground-truth.json'), 'utf8')
        .match(/\b[a-z]{5,12}\b/g);
      const queries = Array.from({ length: REQUESTS }, (_, i) => {
        const w = (k) => words[(i * 7919 + k * 104729) % words.length];
        return i % 3 === 0 ? `"${w(0)} ${w(1)} ${w(2)}"` : `${w(0)} ${w(1)}`;
      });
      const search = { global: [[], []], domain: [[], []] };
      let hits = 0;
      for (let warmPass = 0; warmPass < 2; warmPass++) {
        for (const [i, q] of queries.entries()) {
          const g = await timed(`${url}/v1/search?q=${encodeURIComponent(q)}&limit=10`);
          search.global[warmPass].push(g.ms);
          if (warmPass === 0 && g.body.total > 0) hits++;
          search.domain[warmPass].push((await timed(`${url}/v1/search?q=${encodeURIComponent(q)}&limit=10&domain=${domains[i]}`)).ms);
        }
      }
      console.log(`/v1/search over ${lakeShards(lakeDir)} shards, queries with ≥ 1 hit: ${hits}/${queries.length}`);
      console.log(`/v1/search global: cold ${fmt(search.global[0])}; warm ${fmt(search.global[1])} (goal warm p99 ≤ 200 ms)`);
      console.log(`/v1/search domain-scoped: cold ${fmt(search.domain[0])}; warm ${fmt(search.domain[1])} (goal warm p99 ≤ 50 ms)`);
    } finally {
      srv.send('stop');
      await new Promise((resolve) => srv.once('exit', resolve));
    }
    console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const [flag, a, b] = process.argv.slice(2);
const run = flag === '--generate' ? generate(a).then(() => console.log('{}'))
  : flag === '--merge' ? merge(a, b).then((r) => console.log(JSON.stringify(r)))
    : flag === '--server' ? serveLake(a)
      : main();
run.catch((err) => {
  console.error(err);
  process.exit(1);
});
