import { CcpError, batchId, layout, type Batch, type ObjectStore } from '@ccpipe/core';
import { MemoryBatchQueue, MemoryObjectStore, MemoryRangeReader } from '@ccpipe/adapters';
import { startWorker } from './run-worker';
import type { BatchDeps } from './process-batch';

const emptyBatch = (seq: number): Batch => ({
  v: 1, id: batchId('CC-TEST', 1, seq), crawl: 'CC-TEST', dataset: 'CC-TEST', datasetId: 3, blockNo: 1, seq, records: [],
});

function deps(store: ObjectStore): BatchDeps {
  return {
    reader: new MemoryRangeReader(new Map()),
    store,
    extract: async () => {
      throw new Error('no pages in these tests');
    },
    writePart: async () => new Uint8Array(),
  };
}

/** A store whose writes fail with `err` (the first `times` writes, or all). */
function failingStore(err: unknown, times = Infinity): ObjectStore & { failures: number } {
  const inner = new MemoryObjectStore();
  const s = Object.create(inner) as ObjectStore & { failures: number };
  s.failures = 0;
  s.put = async (key, data) => {
    if (s.failures < times) {
      s.failures++;
      throw err;
    }
    return inner.put(key, data);
  };
  return s;
}

/** Requeues at once (the pause before a requeue has its own test). */
const NO_PAUSE = { baseMs: 0, maxMs: 0 };

const settle = (ms = 50): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Polls until `check` holds (at most ~5 s): no fixed sleeps that a loaded machine outruns. */
async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 250 && !(await check()); i++) await settle(20);
}

describe('startWorker: one place decides what happens to a delivery', () => {
  it('acks done batches; a redelivered done batch is acked without work', async () => {
    const q = new MemoryBatchQueue();
    const store = new MemoryObjectStore();
    const done: boolean[] = [];
    const w = await startWorker(q.consumer({ prefetch: 1 }), deps(store), { concurrency: 2, includeText: true, requeueBackoff: NO_PAUSE }, { onBatchDone: (e) => done.push(e.skipped) });
    await q.publisher().publish(emptyBatch(0));
    await q.publisher().publish(emptyBatch(0));
    await until(() => done.length >= 2);
    await w.drain(1000);
    expect(done).toEqual([false, true]);
    expect(await store.get(layout.batchMarker(3, emptyBatch(0).id))).not.toBeNull();
    expect(await q.queueDepth()).toMatchObject({ ready: 0, deadLettered: 0 });
  });

  it('dead-letters a message that is not a batch, with its reason', async () => {
    const q = new MemoryBatchQueue();
    const w = await startWorker(q.consumer({ prefetch: 1 }), deps(new MemoryObjectStore()), { concurrency: 1, includeText: true, requeueBackoff: NO_PAUSE });
    await q.publisher().publish({ ...emptyBatch(2), id: 'not an id' } as Batch);
    await until(() => q.deadLetters().length > 0);
    await w.drain(1000);
    expect(q.deadLetters().map((d) => d.reason)).toEqual(['CCP_ERR_BATCH_FORMAT']);
  });

  it('requeues retryable failures until the delivery limit dead-letters the batch', async () => {
    const q = new MemoryBatchQueue({ deliveryLimit: 3 });
    const store = failingStore(new CcpError('CCP_ERR_STORE_IO', 'disk hiccup', { retryable: true }));
    const failed: string[] = [];
    const w = await startWorker(q.consumer({ prefetch: 1 }), deps(store), { concurrency: 1, includeText: true, requeueBackoff: NO_PAUSE }, { onBatchFailed: (e) => failed.push(`${e.action}:${e.reason}`) });
    await q.publisher().publish(emptyBatch(3));
    await until(() => q.deadLetters().length > 0);
    await w.drain(1000);
    expect(failed).toEqual(Array(4).fill('requeue:CCP_ERR_STORE_IO'));
    expect(q.deadLetters()).toHaveLength(1);
    expect(q.deadLetters()[0]!.deliveryCount).toBe(4);
  });

  it('holds a failing batch longer before each requeue, and a drain cuts the pause short', async () => {
    const q = new MemoryBatchQueue({ deliveryLimit: 10 });
    const at: number[] = [];
    const store = failingStore(new CcpError('CCP_ERR_STORE_IO', 'store down', { retryable: true }));
    const put = store.put.bind(store);
    store.put = async (key, data) => {
      at.push(Date.now());
      return put(key, data);
    };
    const w = await startWorker(q.consumer({ prefetch: 1 }), deps(store), { concurrency: 1, includeText: true, requeueBackoff: { baseMs: 100, maxMs: 60_000 } });
    await q.publisher().publish(emptyBatch(5));
    await until(() => at.length >= 4);
    // pauses of 100 × 2^(delivery count) ms, jittered down to half: ≥ 50, 100, 200 ms
    const gaps = at.slice(1, 4).map((t, i) => t - at[i]!);
    gaps.forEach((g, i) => expect(g).toBeGreaterThanOrEqual(50 * 2 ** i - 5));
    expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
    // the pause after the fourth failure is ≥ 400 ms: a drain does not wait for it (nor for its 5 s grace), and the
    // batch goes back to the queue
    await settle(20);
    const t0 = Date.now();
    await w.drain(5_000);
    expect(Date.now() - t0).toBeLessThan(300);
    expect(q.deadLetters()).toHaveLength(0);
    expect(await q.queueDepth()).toMatchObject({ ready: 1 });
  });

  it('recovers when a transient failure clears before the limit', async () => {
    const q = new MemoryBatchQueue({ deliveryLimit: 5 });
    const store = failingStore(new CcpError('CCP_ERR_STORE_IO', 'disk hiccup', { retryable: true }), 2);
    const w = await startWorker(q.consumer({ prefetch: 1 }), deps(store), { concurrency: 1, includeText: true, requeueBackoff: NO_PAUSE });
    await q.publisher().publish(emptyBatch(4));
    await until(async () => (await store.get(layout.batchMarker(3, emptyBatch(4).id))) !== null);
    await w.drain(1000);
    expect(q.deadLetters()).toHaveLength(0);
    expect(await store.get(layout.batchMarker(3, emptyBatch(4).id))).not.toBeNull();
  });

  it('crashes on a full disk, leaving the batch unacked for another worker', async () => {
    const q = new MemoryBatchQueue();
    const enospc = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    const w = await startWorker(q.consumer({ prefetch: 1 }), deps(failingStore(enospc)), { concurrency: 1, includeText: true, requeueBackoff: NO_PAUSE });
    await q.publisher().publish(emptyBatch(5));
    const crashed = await Promise.race([w.crashed, settle(2000).then(() => 'no crash')]);
    expect(crashed).toBe(enospc);
    await w.drain(100);
    // Closing the consumer returned the unsettled delivery to the queue.
    expect(await q.queueDepth()).toMatchObject({ ready: 1, deadLettered: 0 });
  });
});
