// A worker on the real RabbitMQ (127.0.0.1:5672, guest/guest) losing its connection mid-batch.
import { randomBytes } from 'node:crypto';
import { extractDocument, layout, type RangeReader } from '@ccpipe/core';
import {
  AmqpBatchConsumer, AmqpBatchPublisher, AmqpConnection, MemoryObjectStore, closeDuckDbParquetEngine, declareTopology, deleteTopology, topologyNames,
  writeParquetPart,
} from '@ccpipe/adapters';
import { DEV_CRAWLS } from '../../../tests/support/corpus';
import { devBatches, devReader } from '../../../tests/support/dev-batches';
import { killConnectionFromBroker } from '../../../tests/support/rabbitmq';
import { startWorker, type WorkerEvents } from './run-worker';

const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
const FAST = { initialDelayMs: 50, maxDelayMs: 500, factor: 2, jitter: 0, maxAttempts: 20 };

afterAll(async () => {
  await closeDuckDbParquetEngine();
});

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('a batch whose connection drops mid-way is stopped, not run twice at once: the redelivery completes it once', async () => {
  const prefix = `ccpipe-test-${randomBytes(6).toString('hex')}`;
  const names = topologyNames(prefix);
  const admin = new AmqpConnection({ url: AMQP_URL, name: `${prefix}-admin`, reconnect: FAST });
  await admin.start();
  await declareTopology(await admin.createConfirmChannel(), names);
  const conn = new AmqpConnection({ url: AMQP_URL, name: prefix, reconnect: FAST });
  await conn.start();
  try {
    const [batch] = await devBatches(DEV_CRAWLS[0], { datasetId: 1, maxBlocks: 1 });
    const inner = devReader();
    // the first read of the first run waits until its signal aborts; reads in flight are counted
    let reads = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    let firstAborted = false;
    const reader: RangeReader = {
      read: async (path, offset, length, signal) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          if (reads++ === 0) {
            await new Promise<void>((_r, reject) => signal!.addEventListener('abort', () => reject(signal!.reason), { once: true }));
          }
          return await inner.read(path, offset, length, signal);
        } catch (err) {
          if (signal?.aborted) firstAborted = true;
          throw err;
        } finally {
          inFlight--;
        }
      },
      stream: (path, signal) => inner.stream(path, signal),
      streamRange: (path, offset, length, signal) => inner.streamRange(path, offset, length, signal),
      close: () => inner.close(),
    };
    const store = new MemoryObjectStore();
    const done: Parameters<NonNullable<WorkerEvents['onBatchDone']>>[0][] = [];
    const failed: Parameters<NonNullable<WorkerEvents['onBatchFailed']>>[0][] = [];
    const consumer = new AmqpBatchConsumer({ connection: conn, names, prefetch: 1, resubscribe: FAST });
    const worker = await startWorker(
      consumer,
      { reader, store, extract: async (html, url) => extractDocument(html, { url }), writePart: (rows) => writeParquetPart(rows) },
      { concurrency: 1, includeText: false },
      { onBatchDone: (e) => done.push(e), onBatchFailed: (e) => failed.push(e) },
    );
    const pub = new AmqpBatchPublisher({ connection: admin, names, confirmTimeoutMs: 5000 });
    await pub.publish(batch!);
    await pub.close();

    await until(() => reads === 1, 'the first read');
    killConnectionFromBroker(prefix);
    await until(() => done.length === 1, 'the redelivered batch done');
    await worker.drain(5000);

    expect(firstAborted).toBe(true);
    expect(maxInFlight).toBe(1); // concurrency 1, prefetch 1: never the old run beside the redelivery
    expect(failed.map((f) => [f.action, f.reason])).toEqual([['requeue', 'CCP_ERR_QUEUE_CHANNEL_CLOSED']]);
    expect(done.map((d) => [d.skipped, d.redelivered, d.marker.rows + d.marker.failed])).toEqual([[false, true, batch!.records.length]]);
    expect(await store.get(layout.batchMarker(1, batch!.id))).not.toBeNull();
  } finally {
    await conn.close();
    await deleteTopology(await admin.createConfirmChannel(), names).catch(() => undefined);
    await admin.close();
  }
}, 60_000);
