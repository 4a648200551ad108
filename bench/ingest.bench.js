'use strict';
// Ingestion: the batcher's publish rate with broker confirms, the worker's end-to-end rate against extraction alone
// on the SAME pages, and Parquet bytes per capture with and without text. Ratios measured in the same run.
//
//  1. batcher: runBatcher over both cc-mirror-dev crawls (FsRangeReader, in-process) → RabbitMQ with publisher
//     confirms (quorum queue, persistent messages), records/s; against the same run with a publisher that confirms
//     at once (parse + filter + batching alone).
//  2. worker: processBatch over every kept capture of CC-MAIN-2030-40, ONE thread (range read → WARC → charset →
//     Readability/linkedom → canonical URL → keys → Parquet part), docs/s; against extractDocument alone
//     on the same decoded pages. Goal: end-to-end ≥ 0.8 of extraction-only.
//  3. Parquet bytes per capture of those parts, with and without text.
// Needs RabbitMQ on 127.0.0.1:5672 for (1); it is skipped with a note when the broker is down.
const { randomBytes } = require('node:crypto');
const { join } = require('node:path');
const core = require('@ccpipe/core');
const adapters = require('@ccpipe/adapters');
const batcherPkg = require('@ccpipe/batcher');
const { processBatch } = require('@ccpipe/worker');

const MIRROR = join(__dirname, '..', '..', 'shared', 'corpus', 'cc-mirror-dev');
const CRAWLS = ['CC-MAIN-2030-40', 'CC-MAIN-2030-44'];
const filter = core.compileFilter({}, { registeredDomainOf: core.registeredDomainOf });

async function planOf(reader, crawl) {
  const { entries } = await batcherPkg.loadClusterIdx(crawl, { localDir: '/nonexistent', reader });
  return batcherPkg.planBlocks(entries, {});
}

async function runBatcherOnce(reader, crawl, plan, publisher, batchSize) {
  return batcherPkg.runBatcher(
    { crawl, dataset: `${crawl}-bench`, datasetId: 1, fingerprint: 'bench', plan, startIndex: 0, filter, targets: null, batchSize, blockConcurrency: 4, publishWindow: 256, publishAttempts: 3 },
    { reader, publisher, store: new adapters.MemoryObjectStore(), clock: adapters.systemClock },
  );
}

async function benchBatcher(rounds) {
  const reader = new adapters.FsRangeReader({ root: MIRROR, expectGzip: true });
  const plans = await Promise.all(CRAWLS.map((c) => planOf(reader, c)));
  const batches = [];
  const instant = { publish: async (b) => void batches.push(b), close: async () => undefined };
  const timeIt = async (publisher) => {
    const t0 = process.hrtime.bigint();
    let kept = 0;
    for (let r = 0; r < rounds; r++) for (let i = 0; i < CRAWLS.length; i++) kept += (await runBatcherOnce(reader, CRAWLS[i], plans[i], publisher, 100)).kept;
    return { kept, secs: Number(process.hrtime.bigint() - t0) / 1e9 };
  };
  await timeIt(instant); // warm-up
  const base = await timeIt(instant);
  let conn;
  try {
    conn = new adapters.AmqpConnection({ url: 'amqp://guest:guest@127.0.0.1:5672', reconnect: { maxAttempts: 2 } });
    await conn.start();
  } catch {
    console.log('batcher: RabbitMQ not reachable, publish-with-confirms figure skipped');
    console.log(`batcher parse+filter+batch only: ${Math.round(base.kept / base.secs)} kept records/s`);
    return;
  }
  const names = adapters.topologyNames(`ccpipe-bench-${randomBytes(3).toString('hex')}`);
  const ch = await conn.createChannel();
  await adapters.declareTopology(ch, names);
  const publisher = new adapters.AmqpBatchPublisher({ connection: conn, names });
  try {
    const real = await timeIt(publisher);
    console.log(`batcher: ${real.kept} kept records in ${real.secs.toFixed(2)} s → ${Math.round(real.kept / real.secs)} records/s published with confirms`);
    console.log(`batcher: parse+filter+batch alone ${Math.round(base.kept / base.secs)} records/s; with confirms = ${(base.secs / real.secs).toFixed(2)} of that`);
  } finally {
    await publisher.close();
    await adapters.deleteTopology(ch, names).catch(() => undefined);
    await ch.close().catch(() => undefined);
    await conn.close();
  }
}

async function keptBatches(crawl) {
  const reader = new adapters.FsRangeReader({ root: MIRROR, expectGzip: true });
  const plan = await planOf(reader, crawl);
  const out = [];
  await runBatcherOnce(reader, crawl, plan, { publish: async (b) => void out.push(b), close: async () => undefined }, 100);
  return { reader, batches: out };
}

async function benchWorker() {
  const { reader, batches } = await keptBatches(CRAWLS[0]);
  // Extraction-only input: the same pages, fetched and decoded up front (not timed).
  const pages = [];
  for (const b of batches) {
    for (const r of b.records) {
      const rec = core.readWarcRecord(await reader.read(r.filename, r.offset, r.length));
      const ct = rec.http.headers.get('content-type');
      pages.push({ html: core.decodeHtml(rec.http.payload, ct ? { contentType: ct } : {}).text, url: r.url });
    }
  }
  const extractOnly = () => {
    const t0 = process.hrtime.bigint();
    for (const p of pages) {
      try {
        core.extractDocument(p.html, { url: p.url });
      } catch {}
    }
    return Number(process.hrtime.bigint() - t0) / 1e9;
  };
  const endToEnd = async (includeText) => {
    const store = new adapters.MemoryObjectStore();
    const deps = {
      reader,
      store,
      extract: async (html, url) => core.extractDocument(html, { url }),
      writePart: (rows) => adapters.writeParquetPart(rows, { includeText }),
    };
    let bytes = 0;
    let rows = 0;
    const t0 = process.hrtime.bigint();
    for (const b of batches) {
      const { marker } = await processBatch(b, deps, { concurrency: 1, includeText });
      bytes += marker.partBytes;
      rows += marker.rows;
    }
    return { secs: Number(process.hrtime.bigint() - t0) / 1e9, bytes, rows };
  };
  extractOnly(); // warm-up
  await endToEnd(true);
  const rounds = 3;
  let bestX = Infinity;
  let bestE = { secs: Infinity };
  let noText = null;
  for (let i = 0; i < rounds; i++) {
    bestX = Math.min(bestX, extractOnly());
    const e = await endToEnd(true);
    if (e.secs < bestE.secs) bestE = e;
    noText = await endToEnd(false);
  }
  const n = pages.length;
  console.log(`worker: ${n} pages, one thread. extraction only ${(n / bestX).toFixed(1)} docs/s; end to end ${(n / bestE.secs).toFixed(1)} docs/s = ${(bestX / bestE.secs).toFixed(2)} of extraction-only (goal ≥ 0.8)`);
  console.log(`parquet: ${(bestE.bytes / bestE.rows).toFixed(0)} B/capture with text, ${(noText.bytes / noText.rows).toFixed(0)} B/capture without text (${bestE.rows} rows, ${batches.length} parts)`);
  await adapters.closeDuckDbParquetEngine();
}

(async () => {
  await benchBatcher(Number(process.env.BENCH_ROUNDS ?? 5));
  await benchWorker();
})().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
