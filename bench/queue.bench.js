'use strict';
// Batch queue: publish + confirm throughput to the real RabbitMQ (127.0.0.1:5672, quorum queue, persistent,
// mandatory, one confirm channel) with 1, 64 and 512 publishes in flight; then consume + ack throughput at
// prefetch 64. Batches are 100 real CDX records each (CC-MAIN-2024-30 cdx-00187, 1140 lines, recycled with new
// sequence numbers), the size a batcher emits. Each window gets its own `ccpipe-bench-<random>` queue, deleted
// after. 2 shared cores and a broker that others use too: read the ratios, not the absolute figures.
// Needs the built packages (`npx tsc -b`); the adapters barrel may not export the queue yet, so it is
// required from its own dist folder.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const core = require('@ccpipe/core');
const q = require('../packages/adapters/dist/queue/index.js');

const URL = 'amqp://guest:guest@127.0.0.1:5672';
const CDX = join(__dirname, '..', '..', 'shared', 'corpus', 'cocrawler-cdx_toolkit', 'warc_by_cdx', 'cdx-00187');
const PER_BATCH = 100;

function records() {
  return readFileSync(CDX, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((line) => {
      const r = core.parseCdxLine(line);
      return {
        url: r.url, ts: r.timestamp, status: r.status, mime: r.mime, mimeDetected: r.mimeDetected, charset: r.charset,
        languages: r.languages, digest: r.digest, filename: r.filename, offset: r.offset, length: r.length,
      };
    });
}

function makeBatches(recs, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const start = (i * PER_BATCH) % (recs.length - PER_BATCH);
    const blockNo = Math.floor(i / 10_000);
    const seq = i % 10_000;
    out.push({ v: 1, id: core.batchId('CC-MAIN-2024-30', blockNo, seq), crawl: 'CC-MAIN-2024-30', dataset: 'cc-main', datasetId: 1, blockNo, seq, records: recs.slice(start, start + PER_BATCH) });
  }
  return out;
}

async function withTopology(conn, fn) {
  const names = q.topologyNames(`ccpipe-bench-${randomBytes(5).toString('hex')}`);
  const admin = await conn.createChannel();
  await q.declareTopology(admin, names);
  try {
    return await fn(names);
  } finally {
    await q.deleteTopology(admin, names).catch(() => {});
    await admin.close().catch(() => {});
  }
}

async function publishAll(pub, batches, window) {
  let next = 0;
  const t0 = process.hrtime.bigint();
  async function lane() {
    while (next < batches.length) {
      const b = batches[next++];
      await pub.publish(b);
    }
  }
  await Promise.all(Array.from({ length: window }, lane));
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** Baseline: bare amqplib ConfirmChannel, same window, same queue options; `body(i)` encodes (or not). */
async function rawPublishAll(conn, names, n, body, window) {
  const ch = await conn.createConfirmChannel();
  let next = 0;
  const t0 = process.hrtime.bigint();
  async function lane() {
    while (next < n) {
      const i = next++;
      await new Promise((resolve, reject) =>
        ch.publish('', names.queue, body(i), { persistent: true, messageId: String(i), mandatory: true }, (err) => (err ? reject(err) : resolve())),
      );
    }
  }
  await Promise.all(Array.from({ length: window }, lane));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  await ch.close();
  return s;
}

async function consumeAll(conn, names, n, prefetch) {
  const c = new q.AmqpBatchConsumer({ connection: conn, names, prefetch });
  let got = 0;
  const t0 = process.hrtime.bigint();
  await new Promise((resolve, reject) => {
    c.start(async (d) => {
      core.decodeBatch(d.body);
      await d.ack();
      if (++got === n) resolve();
    }).catch(reject);
  });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  await c.close();
  return s;
}

async function main() {
  const recs = records();
  const conn = new q.AmqpConnection({ url: URL, name: 'ccpipe-bench', reconnect: { maxAttempts: 3 } });
  await conn.start();
  const sample = makeBatches(recs, 1)[0];
  const bytes = core.encodeMessage(sample).length;
  console.log(`message: ${PER_BATCH} records, ${(bytes / 1024).toFixed(1)} KiB JSON`);
  const rows = [];
  let raw = 0;
  let rawEnc = 0;
  let encodeOnly = 0;
  try {
    for (const [window, n] of [[1, 400], [64, 3000], [512, 3000]]) {
      const batches = makeBatches(recs, n);
      await withTopology(conn, async (names) => {
        const pub = new q.AmqpBatchPublisher({ connection: conn, names, confirmTimeoutMs: 60_000 });
        const s = await publishAll(pub, batches, window);
        await pub.close();
        const depth = await q.amqpQueueDepth(conn, names);
        if (depth.ready !== n) throw new Error(`expected ${n} ready, found ${depth.ready}`);
        const row = { window, n, s, bps: n / s, rps: (n * PER_BATCH) / s, mibps: (n * bytes) / s / 1048576 };
        if (window === 64) row.consume = n / (await consumeAll(conn, names, n, 64));
        rows.push(row);
      });
      if (window === 64) {
        await withTopology(conn, async (names) => {
          rawEnc = n / (await rawPublishAll(conn, names, n, (i) => core.encodeMessage(batches[i]), window));
        });
        const t0 = process.hrtime.bigint();
        const bodies = batches.map((b) => core.encodeMessage(b));
        encodeOnly = n / (Number(process.hrtime.bigint() - t0) / 1e9);
        await withTopology(conn, async (names) => {
          raw = n / (await rawPublishAll(conn, names, n, (i) => bodies[i], window));
        });
      }
    }
  } finally {
    await conn.close();
  }
  const base = rows[0].bps;
  for (const r of rows) {
    console.log(
      `publish+confirm, ${String(r.window).padStart(3)} in flight: ${r.bps.toFixed(0).padStart(6)} batches/s ` +
        `${r.rps.toFixed(0).padStart(8)} records/s ${r.mibps.toFixed(1).padStart(6)} MiB/s  ×${(r.bps / base).toFixed(1)} vs 1` +
        (r.consume ? `   | consume+ack, prefetch 64: ${r.consume.toFixed(0)} batches/s` : ''),
    );
  }
  const r64 = rows.find((r) => r.window === 64);
  console.log(`baselines at 64 in flight: bare amqplib + encodeMessage ${rawEnc.toFixed(0)} batches/s (AmqpBatchPublisher ×${(r64.bps / rawEnc).toFixed(2)} of it); ` +
    `bare amqplib, bodies pre-encoded ${raw.toFixed(0)} msgs/s; encodeMessage alone ${encodeOnly.toFixed(0)} batches/s`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
