#!/usr/bin/env node
'use strict';
// Bulk mode's worker against what it must at least do, and against ranges mode (issue #23, docs/bulk.md).
//
// Input: the kept records (default filter) of cc-mirror-dev's crawl CC-MAIN-2030-40, grouped by WARC file as the
// bulk batcher groups them. Each pass is a process of its own; the passes alternate, `--rounds` rounds (default 5),
// medians of CPU and wall seconds of the work (process.cpuUsage: every thread, DuckDB's too), the load average printed.
//
//   inflate     zlib inflate of exactly the kept records' gzip members, read from the same files: the floor
//   bulk-bare   processWarcJob (one stream per file, records cut out, WARC/HTTP parse, URL keys, rows, Parquet
//               parts) with extraction off: the worker's --extract false (no page decoded or parsed)
//   bulk        processWarcJob with extraction (Readability on linkedom, in process)
//   ranges      processBatch over the same records with a range read each, with extraction
//
// Goals: bulk-bare ≥ 0.6 of inflate (records per CPU-second); bulk's documents per CPU-second within 0.9 of ranges'.
//   node bench/bulk.bench.js [--rounds 5]
const { mkdtempSync, rmSync, readFileSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const zlib = require('node:zlib');
const { childOf, median, loadAvg } = require('./lib/proc');

const MIRROR = join(__dirname, '..', '..', 'shared', 'corpus', 'cc-mirror-dev');
const CRAWL = 'CC-MAIN-2030-40';
const BATCH = 100;

async function prepare(out) {
  const { compileFilter, registeredDomainOf } = require('@ccpipe/core');
  const { FsRangeReader, MemoryObjectStore, systemClock } = require('@ccpipe/adapters');
  const { runBulkBatcher, loadWarcPaths, loadClusterIdx, planBlocks, runFingerprint } = require('@ccpipe/batcher');
  const reader = new FsRangeReader({ root: MIRROR, expectGzip: true });
  const { entries } = await loadClusterIdx(CRAWL, { localDir: '/nonexistent', reader });
  const store = new MemoryObjectStore();
  const jobs = [];
  const spill = mkdtempSync(join(tmpdir(), 'ccpipe-bench-spill-'));
  await runBulkBatcher({
    crawl: CRAWL, dataset: CRAWL, datasetId: 1, fingerprint: runFingerprint({}), plan: planBlocks(entries, {}), filter: compileFilter({}, { registeredDomainOf }),
    targets: null, batchSize: BATCH, publishWindow: 8, publishAttempts: 1, warcPaths: await loadWarcPaths(CRAWL, reader), spillDir: spill, startJob: 0,
    choice: { mode: 'bulk', asked: 'bulk', reason: 'bench' },
  }, { reader, store, clock: systemClock, publisher: { publish: async (j) => void jobs.push(j), close: async () => undefined } });
  rmSync(spill, { recursive: true, force: true });
  const lists = [];
  for (const j of jobs) lists.push({ job: j, list: Buffer.from((await store.get(j.list))).toString('base64') });
  writeFileSync(out, JSON.stringify(lists));
}

function cpuSeconds(start) {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1e6;
}

/** Times the bare passes go over the input (the extraction passes once): enough work that start-up costs fade. */
const REPEAT_BARE = 8;

async function pass(kind, input) {
  const lists = JSON.parse(readFileSync(input, 'utf8'));
  const core = require('@ccpipe/core');
  const { FsRangeReader, MemoryObjectStore, writeParquetPart, closeDuckDbParquetEngine } = require('@ccpipe/adapters');
  const { processWarcJob, processBatch } = require('@ccpipe/worker');
  const records = lists.flatMap((l) => core.decodeRecordList(zlib.gunzipSync(Buffer.from(l.list, 'base64'))));
  const bare = async () => {
    throw new Error('--extract false extracts nothing');
  };
  const real = async (html, url) => core.extractDocument(html, { url });
  const deps = (store, extract) => ({ reader: new FsRangeReader({ root: MIRROR, expectGzip: true }), store, extract, writePart: (rows) => writeParquetPart(rows, { engine: 'duckdb' }) });
  // warm the modules and DuckDB outside the measurement
  await writeParquetPart([], { engine: 'duckdb' }).catch(() => undefined);
  const wall = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  let docs = 0;
  const repeat = kind === 'inflate' || kind === 'bulk-bare' ? REPEAT_BARE : 1;
  if (kind === 'inflate') {
    for (let k = 0; k < repeat; k++) {
      const files = new Map();
      for (const r of records) {
        if (!files.has(r.filename)) files.set(r.filename, readFileSync(join(MIRROR, r.filename)));
        zlib.gunzipSync(files.get(r.filename).subarray(r.offset, r.offset + r.length));
        docs++;
      }
    }
  } else if (kind === 'ranges') {
    const store = new MemoryObjectStore();
    for (let i = 0; i < records.length; i += BATCH) {
      const batch = { v: 1, id: core.batchId(CRAWL, i / BATCH, 0), crawl: CRAWL, dataset: CRAWL, datasetId: 1, blockNo: i / BATCH, seq: 0, records: records.slice(i, i + BATCH) };
      const r = await processBatch(batch, deps(store, real), { concurrency: 16, includeText: true });
      docs += r.marker.rows;
    }
  } else {
    for (let k = 0; k < repeat; k++) {
      const store = new MemoryObjectStore();
      for (const l of lists) {
        await store.put(l.job.list, Buffer.from(l.list, 'base64'));
        const r = await processWarcJob(l.job, deps(store, kind === 'bulk' ? real : bare), { concurrency: 16, includeText: kind === 'bulk', extract: kind === 'bulk' });
        for (const b of r.batches) docs += b.outcome.marker.rows;
      }
    }
  }
  const out = { kind, docs, records: records.length * repeat, cpu: cpuSeconds(cpu), wall: Number(process.hrtime.bigint() - wall) / 1e9 };
  await closeDuckDbParquetEngine();
  console.log(JSON.stringify(out));
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--pass') return pass(args[1], args[2]);
  if (args[0] === '--prepare') return prepare(args[1]); // the input alone, e.g. to profile one pass
  const rounds = Number(args[args.indexOf('--rounds') + 1] || 5) || 5;
  const dir = mkdtempSync(join(tmpdir(), 'ccpipe-bench-bulk-'));
  const input = join(dir, 'lists.json');
  try {
    await prepare(input);
    const child = childOf(__filename);
    const kinds = ['inflate', 'bulk-bare', 'bulk', 'ranges'];
    const got = Object.fromEntries(kinds.map((k) => [k, []]));
    console.log(`load before: ${loadAvg()}`);
    for (let r = 0; r < rounds; r++) {
      // alternate the order each round so no side always runs on a warmer or cooler machine
      for (const k of r % 2 === 0 ? kinds : [...kinds].reverse()) got[k].push(child(['--pass', k, input]));
    }
    const m = (k, f) => median(got[k].map(f));
    const rate = (k) => m(k, (x) => x.records / x.cpu);
    const docsRate = (k) => m(k, (x) => x.docs / x.cpu);
    console.log(`${got.ranges[0].records} kept records of ${CRAWL} (the bare passes go over them ${REPEAT_BARE} times), ${rounds} rounds, medians`);
    for (const k of kinds) {
      console.log(`  ${k.padEnd(10)} cpu ${m(k, (x) => x.cpu).toFixed(3)} s  wall ${m(k, (x) => x.wall).toFixed(3)} s  ${Math.round(rate(k))} records/CPU-s  ${docsRate(k).toFixed(1)} docs/CPU-s`);
    }
    console.log(`bulk-bare / inflate (records per CPU-s): ${(rate('bulk-bare') / rate('inflate')).toFixed(3)}  (goal ≥ 0.6)`);
    console.log(`bulk / ranges (docs per CPU-s, extraction on): ${(docsRate('bulk') / docsRate('ranges')).toFixed(3)}  (goal ≥ 0.9)`);
    console.log(`load after: ${loadAvg()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
