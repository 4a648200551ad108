#!/usr/bin/env node
'use strict';
// Ingestion, measured as it runs (issue #25): the real `ccpipe worker` process against extraction alone on the same
// pages, and the batcher's publish rate with broker confirms.
//
//  A  worker      the built `ccpipe worker` (default thread count, default prefetch and concurrency), a process of its
//                 own, consuming batches from the real RabbitMQ (a queue prefix of its own each round), reading every
//                 WARC record over HTTP from a mirror server over cc-mirror-dev (in this process), writing Parquet
//                 parts, failures and markers to a directory store: range read → WARC/HTTP → charset →
//                 ExtractionPool (Readability on linkedom) → canonical URL, keys, links → Parquet part → marker → ack.
//  B  extraction  the same ExtractionPool (same thread count, same options, 32 documents in flight as the worker's
//                 prefetch × concurrency) over the same decoded pages, nothing else, a process of its own.
//
// Both sides are whole processes measured the same way (bench/lib/exit-usage.js: CPU of every thread — extraction
// threads and DuckDB's included — and wall), start-up included. The input: every kept capture (default filter) of
// both dev crawls, as the real batcher cuts them, regrouped into batches of --batch-size records (500: what a real
// crawl's ZipNum blocks of 3,000 lines yield; cc-mirror-dev's blocks hold ≈ 30 kept records, `--batch-size 0` keeps
// the batcher's own batches), published --copies times under distinct batch ids so a round lasts long enough to
// measure. A "doc" is a page the worker extracts (HTML, status < 400): A's rate counts the same pages as B's, A doing
// everything else besides. Rounds alternate A/B order; medians are reported, never a best-of, with the load average.
// Goal (#25): A ≥ 0.9 of B per CPU-second.
//
//   node bench/ingest.bench.js [--rounds 5] [--copies 2] [--batch-size 500] [--threads N] [--worker-flags '…'] [--floor] [--no-batcher] [--also BIN]
//   --also BIN: also, each round right after A, the worker of another build (BIN: its packages/cli/bin/ccpipe.js, e.g. a
//   copy of the tree with a change not made here), as A2 with its own A2/B: two builds compared on the same rounds' load
//   --floor: also, each round, the worker with --extract false and B's process with no page, for the best A/B any
//   worker around this extraction could reach (everything but decoding and extraction is still done)
//   node bench/ingest.bench.js --prepare DIR     only the inputs (batches.json, pages.bin)
//   node bench/ingest.bench.js --profile DIR     one round, each side run with --cpu-prof into DIR (every thread)
//
// Needs RabbitMQ on 127.0.0.1:5672 (guest/guest) and a build (`npx tsc -b`). The batcher figure runs in process
// (FsRangeReader) against the same run with an instant publisher.
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } = require('node:fs');
const { availableParallelism, tmpdir } = require('node:os');
const { join } = require('node:path');
const { median, loadAvg, threadCpu } = require('./lib/proc');

const ROOT = join(__dirname, '..');
const MIRROR = join(ROOT, '..', 'shared', 'corpus', 'cc-mirror-dev');
const CRAWLS = ['CC-MAIN-2030-40', 'CC-MAIN-2030-44'];
const CCPIPE_BIN = join(ROOT, 'packages', 'cli', 'bin', 'ccpipe.js');
const EXIT_USAGE = join(__dirname, 'lib', 'exit-usage.js');
const RABBITMQ = 'amqp://guest:guest@127.0.0.1:5672';
const HTML_MIMES = new Set(['text/html', 'application/xhtml+xml']);
/** Documents B keeps in the pool at once: the worker's default prefetch (2) × concurrency (16). */
const B_IN_FLIGHT = 32;

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

/** The kept batches of both dev crawls, as the real batcher makes them (in memory, not published). */
async function batcherBatches(reader) {
  const core = require('@ccpipe/core');
  const { loadClusterIdx, planBlocks, runBatcher, runFingerprint } = require('@ccpipe/batcher');
  const { MemoryObjectStore, systemClock } = require('@ccpipe/adapters');
  const out = [];
  for (const crawl of CRAWLS) {
    const { entries } = await loadClusterIdx(crawl, { localDir: '/nonexistent', reader });
    await runBatcher(
      {
        crawl, dataset: crawl, datasetId: 0, fingerprint: runFingerprint({}), plan: planBlocks(entries, {}), startIndex: 0,
        filter: core.compileFilter({}, { registeredDomainOf: core.registeredDomainOf }), targets: null, batchSize: 500, blockConcurrency: 4,
        publishWindow: 64, publishAttempts: 1,
      },
      { reader, publisher: { publish: async (b) => void out.push(b), close: async () => undefined }, store: new MemoryObjectStore(), clock: systemClock },
    );
  }
  return out;
}

/**
 * Writes DIR/batches.json (one copy of the input batches, by crawl, dataset ids filled in by the round) and
 * DIR/pages.bin (B's input: each extracted page's canonical URL and decoded HTML, as processRecord hands them to the
 * pool). Returns the counts.
 */
async function prepare(dir, batchSize) {
  const core = require('@ccpipe/core');
  const { FsRangeReader } = require('@ccpipe/adapters');
  const reader = new FsRangeReader({ root: MIRROR, expectGzip: true });
  const own = await batcherBatches(reader);
  const batches = [];
  if (batchSize > 0) {
    for (const crawl of CRAWLS) {
      const records = own.filter((b) => b.crawl === crawl).flatMap((b) => b.records);
      for (let i = 0; i < records.length; i += batchSize) batches.push({ crawl, records: records.slice(i, i + batchSize) });
    }
  } else for (const b of own) batches.push({ crawl: b.crawl, records: b.records });
  const chunks = [];
  let records = 0;
  let pages = 0;
  for (const b of batches) {
    for (const r of b.records) {
      records++;
      // what processRecord extracts: an HTML page with status < 400 whose WARC record parses
      let warc;
      try {
        warc = core.readWarcRecord(await reader.read(r.filename, r.offset, r.length));
      } catch {
        continue;
      }
      if (warc.type !== 'response' || !warc.http) continue;
      const status = r.status !== undefined && /^\d{3}$/.test(r.status) ? Number(r.status) : warc.http.status;
      const ct = warc.http.headers.get('content-type') ?? undefined;
      const mime = (r.mime ?? ct?.split(';')[0] ?? '').trim().toLowerCase();
      if (status >= 400 || !HTML_MIMES.has(mime)) continue;
      const html = core.decodeHtml(warc.http.payload, ct === undefined ? {} : { contentType: ct }).text;
      const url = Buffer.from(core.canonicalizeUrl(r.url).url, 'utf8');
      const body = Buffer.from(html, 'utf8');
      const head = Buffer.alloc(8);
      head.writeUInt32LE(url.length, 0);
      head.writeUInt32LE(body.length, 4);
      chunks.push(head, url, body);
      pages++;
    }
  }
  writeFileSync(join(dir, 'batches.json'), JSON.stringify(batches));
  writeFileSync(join(dir, 'pages.bin'), Buffer.concat(chunks));
  return { batches: batches.length, records, pages };
}

function readPages(file) {
  const buf = readFileSync(file);
  const pages = [];
  for (let o = 0; o < buf.length; ) {
    const ul = buf.readUInt32LE(o);
    const hl = buf.readUInt32LE(o + 4);
    o += 8;
    const url = buf.toString('utf8', o, o + ul);
    o += ul;
    pages.push({ url, html: buf.toString('utf8', o, o + hl) });
    o += hl;
  }
  return pages;
}

/** Side B, in its own process: the worker's pool, its defaults, over the pages `copies` times. Prints a JSON line. */
async function extractOnly(pagesFile, copies, threads) {
  const { ExtractionPool } = require('@ccpipe/adapters');
  const { loadConfig } = require('@ccpipe/core');
  const config = loadConfig({}, {});
  const before = process.cpuUsage();
  const pages = readPages(pagesFile);
  const spent = process.cpuUsage(before);
  // reading the input is not extraction (the worker fetches its records instead, measured in A): left out of B's CPU
  const inputCpu = (spent.user + spent.system) / 1e6;
  const pool = new ExtractionPool({ size: threads, timeoutMs: config.extractTimeoutMs, dom: config.dom });
  await pool.start();
  let next = 0;
  let ok = 0;
  let failed = 0;
  const total = pages.length * copies;
  const lane = async () => {
    while (next < total) {
      const p = pages[next++ % pages.length];
      try {
        await pool.extract(p.html, p.url);
        ok++;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: B_IN_FLIGHT }, lane));
  const threadsCpu = threadCpu(process.pid); // before close: the extraction threads are still listed
  await pool.close();
  console.log(JSON.stringify({ docs: total, ok, failed, inputCpu, threads: threadsCpu }));
}

/** More `ccpipe worker` flags for side A (`--worker-flags '--extract false'`: what the worker costs around no extraction). */
let extraWorkerFlags = [];

/** Measured children still running: killed if this process is interrupted (a worker would otherwise wait on for batches). */
const live = new Set();
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    for (const c of live) c.kill('SIGKILL');
    process.exit(130);
  });
}

/** Extra node flags for the measured children (`--profile DIR`: V8 CPU profiles of every thread into DIR). */
let nodeFlags = [];

/**
 * Runs `node -r exit-usage ARGS` and resolves with its usage; `onLine(line, markDone, child)` sees each stdout line
 * (the wall ends at `markDone()` when it is called, else at exit).
 */
function measured(args, onLine, env = {}) {
  const usageFile = join(tmpdir(), `ccpipe-bench-usage-${randomBytes(4).toString('hex')}.json`);
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, [...nodeFlags, '-r', EXIT_USAGE, ...args], {
    cwd: ROOT, env: { ...process.env, BENCH_USAGE_FILE: usageFile, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let buf = '';
  let err = '';
  let doneAt = null;
  let lastLine = null;
  const markDone = () => (doneAt ??= process.hrtime.bigint());
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      lastLine = line;
      onLine(line, markDone, child);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (c) => (err += c));
  return new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => {
      const end = process.hrtime.bigint();
      if (buf) onLine(buf, markDone, child);
      if (code !== 0) return reject(new Error(`${args.slice(0, 2).join(' ')} exited ${code ?? signal}: ${err.slice(-2000)}`));
      const u = JSON.parse(readFileSync(usageFile, 'utf8'));
      rmSync(usageFile, { force: true });
      resolve({ cpu: u.userS + u.sysS, user: u.userS, sys: u.sysS, maxRssKiB: u.maxRssKiB, wall: Number((doneAt ?? end) - t0) / 1e9, lastLine });
    });
  });
}

/** One round of side A: a fresh store and queue, every batch published, then the worker process until all are done. */
async function roundWorker(input, mirror, copies, threads, flags = extraWorkerFlags, bin = CCPIPE_BIN) {
  const core = require('@ccpipe/core');
  const { AmqpBatchPublisher, AmqpConnection, declareTopology, deleteTopology, topologyNames, FsObjectStore } = require('@ccpipe/adapters');
  const data = mkdtempSync(join(tmpdir(), 'ccpipe-bench-ingest-'));
  const prefix = `ccpipe-bench-ingest-${randomBytes(4).toString('hex')}`;
  const names = topologyNames(prefix);
  const store = new FsObjectStore({ root: data });
  let reg = core.emptyDatasetRegistry();
  for (const crawl of CRAWLS) reg = core.ensureDatasetIn(reg, crawl, crawl, '2030-01-01T00:00:00Z').registry;
  await store.put('datasets.json', core.serializeDatasetRegistry(reg));
  const ids = Object.fromEntries(reg.datasets.map((d) => [d.name, d.id]));
  const conn = new AmqpConnection({ url: RABBITMQ, reconnect: { maxAttempts: 2 } });
  await conn.start();
  const ch = await conn.createChannel();
  try {
    await declareTopology(ch, names);
    const publisher = new AmqpBatchPublisher({ connection: conn, names });
    const pending = [];
    let n = 0;
    for (let c = 0; c < copies; c++) {
      const seqOf = new Map();
      for (const b of input) {
        const seq = seqOf.get(b.crawl) ?? 0;
        seqOf.set(b.crawl, seq + 1);
        const blockNo = c * 100_000 + seq; // distinct ids: each copy is new work for the worker
        pending.push(publisher.publish({ v: 1, id: core.batchId(b.crawl, blockNo, 0), crawl: b.crawl, dataset: b.crawl, datasetId: ids[b.crawl], blockNo, seq: 0, records: b.records }));
        n++;
      }
    }
    await Promise.all(pending);
    await publisher.close();
    let done = 0;
    let threadsCpu = null;
    let rows = 0;
    let failed = 0;
    const workerArgs = [bin, 'worker', '--data', data, '--base-url', mirror.url, '--queue-prefix', prefix, '--metrics-port', '0'];
    if (threads !== null) workerArgs.push('--extract-threads', String(threads));
    workerArgs.push(...flags);
    const u = await measured(workerArgs, (line, markDone, child) => {
      let l;
      try {
        l = JSON.parse(line);
      } catch {
        return;
      }
      if (l.msg === 'batch done' || l.msg === 'batch done, with records failed') {
        done++;
        rows += l.rows;
        failed += l.failed;
        if (done === n) {
          markDone();
          threadsCpu = threadCpu(child.pid); // all done, before the drain
          child.kill('SIGTERM');
        }
      } else if (l.level >= 50) console.error(line);
    }, { LOG_LEVEL: 'info' });
    if (done !== n) throw new Error(`worker exited with ${done} of ${n} batches done`);
    let partBytes = 0;
    for (const m of await markers(data)) partBytes += m.partBytes;
    return { ...u, batches: n, rows, failed, partBytes, threads: threadsCpu };
  } finally {
    await deleteTopology(ch, names).catch(() => undefined);
    await ch.close().catch(() => undefined);
    await conn.close();
    rmSync(data, { recursive: true, force: true });
  }
}

/** `main/busiest/next/…` CPU seconds of a process's threads (main first), for the round lines. */
function threadList(t) {
  if (!t) return 'n/a';
  const others = t.threads.filter((x) => x.cpu > 0.05 && x.cpu !== t.main);
  return [t.main, ...others.map((x) => x.cpu)].map((c) => c.toFixed(2)).join('/');
}

async function markers(data) {
  const { readdir, readFile } = require('node:fs/promises');
  const out = [];
  const root = join(data, 'batches');
  for (const ds of await readdir(root)) {
    for (const b of await readdir(join(root, ds))) out.push(JSON.parse(await readFile(join(root, ds, b, '_SUCCESS.json'), 'utf8')));
  }
  return out;
}

async function benchBatcher(rounds) {
  const core = require('@ccpipe/core');
  const adapters = require('@ccpipe/adapters');
  const batcherPkg = require('@ccpipe/batcher');
  const filter = core.compileFilter({}, { registeredDomainOf: core.registeredDomainOf });
  const reader = new adapters.FsRangeReader({ root: MIRROR, expectGzip: true });
  const plans = [];
  for (const crawl of CRAWLS) plans.push(batcherPkg.planBlocks((await batcherPkg.loadClusterIdx(crawl, { localDir: '/nonexistent', reader })).entries, {}));
  const once = (crawl, plan, publisher) => batcherPkg.runBatcher(
    { crawl, dataset: `${crawl}-bench`, datasetId: 1, fingerprint: 'bench', plan, startIndex: 0, filter, targets: null, batchSize: 100, blockConcurrency: 4, publishWindow: 256, publishAttempts: 3 },
    { reader, publisher, store: new adapters.MemoryObjectStore(), clock: adapters.systemClock },
  );
  const timeIt = async (publisher) => {
    const t0 = process.hrtime.bigint();
    let kept = 0;
    for (let r = 0; r < rounds; r++) for (let i = 0; i < CRAWLS.length; i++) kept += (await once(CRAWLS[i], plans[i], publisher)).kept;
    return { kept, secs: Number(process.hrtime.bigint() - t0) / 1e9 };
  };
  const instant = { publish: async () => undefined, close: async () => undefined };
  await timeIt(instant); // warm-up
  const base = await timeIt(instant);
  const conn = new adapters.AmqpConnection({ url: RABBITMQ, reconnect: { maxAttempts: 2 } });
  await conn.start();
  const names = adapters.topologyNames(`ccpipe-bench-${randomBytes(3).toString('hex')}`);
  const ch = await conn.createChannel();
  await adapters.declareTopology(ch, names);
  const publisher = new adapters.AmqpBatchPublisher({ connection: conn, names });
  try {
    const real = await timeIt(publisher);
    console.log(`batcher (in process, ${rounds}× both crawls, 100-record batches): ${Math.round(real.kept / real.secs)} records/s published with confirms; parse+filter+batch alone ${Math.round(base.kept / base.secs)} records/s; with confirms = ${(base.secs / real.secs).toFixed(2)} of that  [load ${loadAvg()}]`);
  } finally {
    await publisher.close();
    await adapters.deleteTopology(ch, names).catch(() => undefined);
    await ch.close().catch(() => undefined);
    await conn.close();
  }
}

async function main() {
  if (process.argv[2] === '--extract-only') return extractOnly(process.argv[3], Number(process.argv[4]), Number(process.argv[5]));
  const batchSize = Number(arg('--batch-size', '500'));
  if (process.argv[2] === '--prepare') {
    console.log(JSON.stringify(await prepare(process.argv[3], batchSize)));
    return;
  }
  extraWorkerFlags = (arg('--worker-flags', '') ?? '').split(' ').filter((x) => x !== '');
  const profile = arg('--profile', null);
  if (profile !== null) nodeFlags = ['--cpu-prof', '--cpu-prof-dir', profile];
  const rounds = profile !== null ? 1 : Number(arg('--rounds', '5'));
  const copies = Number(arg('--copies', '2'));
  const threadsArg = arg('--threads', null);
  // the worker's default (--extract-threads unset: availableParallelism()); B gets the same count
  const threads = threadsArg === null ? availableParallelism() : Number(threadsArg);
  if (!existsSync(CCPIPE_BIN) || !existsSync(join(ROOT, 'packages', 'worker', 'dist', 'index.js'))) throw new Error('build first: npx tsc -b');
  const { serveMirror } = require('@ccpipe/mirror');
  const dir = mkdtempSync(join(tmpdir(), 'ccpipe-bench-ingest-in-'));
  const mirror = await serveMirror({ dir: MIRROR, port: 0 });
  try {
    const inCounts = await prepare(dir, batchSize);
    const input = JSON.parse(readFileSync(join(dir, 'batches.json'), 'utf8'));
    const pagesFile = join(dir, 'pages.bin');
    console.log(`input: ${inCounts.records} kept records of ${CRAWLS.join(' + ')} in ${inCounts.batches} batches (${batchSize > 0 ? `${batchSize} records a batch` : "the batcher's own"}), ${inCounts.pages} extracted pages; ×${copies} copies a round; ${threads} extraction thread(s); ${rounds} rounds`);
    console.log(`load before: ${loadAvg()}`);
    const a = [];
    const b = [];
    const docs = inCounts.pages * copies;
    const runA = async () => {
      const r = await roundWorker(input, mirror, copies, threadsArg === null ? null : threads);
      a.push(r);
      return r;
    };
    const extractOnlyRun = async (n) => {
      const r = await measured([__filename, '--extract-only', pagesFile, String(n), String(threads)], () => undefined);
      const out = JSON.parse(r.lastLine);
      r.threads = out.threads;
      r.inputCpu = out.inputCpu;
      r.cpu -= out.inputCpu;
      return r;
    };
    const also = arg('--also', null);
    const a2 = [];
    const runA2 = async () => {
      if (also !== null) a2.push(await roundWorker(input, mirror, copies, threadsArg === null ? null : threads, extraWorkerFlags, also));
    };
    const runB = async () => {
      const r = await extractOnlyRun(copies);
      b.push(r);
      return r;
    };
    // --floor: the worker with --extract false over the same batches (no page decoded or extracted) and B's process
    // with no page (start-up and close alone): A cannot cost less than B + (floorA − floorB)
    const floor = process.argv.includes('--floor');
    const fa = [];
    const fb = [];
    const runFloor = async () => {
      fa.push(await roundWorker(input, mirror, copies, threadsArg === null ? null : threads, ['--extract', 'false']));
      fb.push(await extractOnlyRun(0));
    };
    for (let r = 0; r < rounds; r++) {
      // alternate the order each round so neither side always runs on a warmer or cooler machine
      const order = r % 2 === 0 ? [runA, runA2, runB] : [runB, runA, runA2];
      if (floor) order.push(runFloor);
      for (const f of order) await f();
      const ra = a[a.length - 1];
      const rb = b[b.length - 1];
      console.log(
        `round ${r + 1}: A worker cpu ${ra.cpu.toFixed(2)} s (threads ${threadList(ra.threads)}) wall ${ra.wall.toFixed(2)} s (${ra.rows} rows, ${ra.failed} failed) | ${
          also === null ? '' : `A2 cpu ${a2[a2.length - 1].cpu.toFixed(2)} s (threads ${threadList(a2[a2.length - 1].threads)}), A2/B ${(rb.cpu / a2[a2.length - 1].cpu).toFixed(3)} | `}B extraction cpu ${rb.cpu.toFixed(2)} s (threads ${threadList(rb.threads)}; input read ${rb.inputCpu.toFixed(2)} left out) wall ${rb.wall.toFixed(2)} s | A/B per CPU-s ${(rb.cpu / ra.cpu).toFixed(3)}, wall ${(rb.wall / ra.wall).toFixed(3)}  [load ${loadAvg()}]`,
      );
    }
    const m = (xs, f) => median(xs.map(f));
    const aCpu = m(a, (x) => x.cpu);
    const bCpu = m(b, (x) => x.cpu);
    const aWall = m(a, (x) => x.wall);
    const bWall = m(b, (x) => x.wall);
    console.log(`medians of ${rounds} rounds, ${docs} docs a round:`);
    console.log(`  A worker      cpu ${aCpu.toFixed(2)} s (user ${m(a, (x) => x.user).toFixed(2)}, sys ${m(a, (x) => x.sys).toFixed(2)}; main thread ${m(a, (x) => x.threads?.main ?? NaN).toFixed(2)})  wall ${aWall.toFixed(2)} s  ${(docs / aCpu).toFixed(1)} docs/CPU-s  ${(docs / aWall).toFixed(1)} docs/s  max RSS ${Math.round(m(a, (x) => x.maxRssKiB) / 1024)} MiB`);
    console.log(`  B extraction  cpu ${bCpu.toFixed(2)} s (user ${m(b, (x) => x.user).toFixed(2)}, sys ${m(b, (x) => x.sys).toFixed(2)}; main thread ${m(b, (x) => x.threads?.main ?? NaN).toFixed(2)})  wall ${bWall.toFixed(2)} s  ${(docs / bCpu).toFixed(1)} docs/CPU-s  ${(docs / bWall).toFixed(1)} docs/s  max RSS ${Math.round(m(b, (x) => x.maxRssKiB) / 1024)} MiB`);
    console.log(`  A/B per CPU-s: median of rounds ${m(a.map((x, i) => b[i].cpu / x.cpu), (x) => x).toFixed(3)}, of medians ${(bCpu / aCpu).toFixed(3)} (goal ≥ 0.9); A/B wall: ${(bWall / aWall).toFixed(3)}`);
    if (also !== null) {
      const a2Cpu = m(a2, (x) => x.cpu);
      console.log(`  A2 ${also}  cpu ${a2Cpu.toFixed(2)} s (main thread ${m(a2, (x) => x.threads?.main ?? NaN).toFixed(2)})  wall ${m(a2, (x) => x.wall).toFixed(2)} s  ${(docs / a2Cpu).toFixed(1)} docs/CPU-s`);
      console.log(`  A2/B per CPU-s: median of rounds ${m(a2.map((x, i) => b[i].cpu / x.cpu), (x) => x).toFixed(3)}, of medians ${(bCpu / a2Cpu).toFixed(3)}; A CPU / A2 CPU (median of rounds) ${m(a2.map((x, i) => a[i].cpu / x.cpu), (x) => x).toFixed(3)}`);
    }
    const last = a[a.length - 1];
    const noText = extraWorkerFlags.join(' ').includes('--include-text false');
    console.log(`  parquet: ${(last.partBytes / last.rows).toFixed(0)} B/capture ${noText ? 'without' : 'with'} text (${last.rows} rows in ${last.batches} parts)`);
    if (floor) {
      const extra = m(fa, (x) => x.cpu) - m(fb, (x) => x.cpu);
      console.log(`  floor: the worker with --extract false cpu ${m(fa, (x) => x.cpu).toFixed(2)} s (wall ${m(fa, (x) => x.wall).toFixed(2)} s), B's process with no page ${m(fb, (x) => x.cpu).toFixed(2)} s: everything around decoding and extraction costs ≥ ${extra.toFixed(2)} CPU-s, so A/B per CPU-s ≤ ${(bCpu / (bCpu + extra)).toFixed(3)}`);
    }
    console.log(`load after: ${loadAvg()}`);
    if (!process.argv.includes('--no-batcher')) await benchBatcher(Number(process.env.BENCH_ROUNDS ?? 5));
  } finally {
    await mirror.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
