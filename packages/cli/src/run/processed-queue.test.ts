import { batchId, decodeBatch, type Batch, type Delivery } from '@ccpipe/core';
import { MemoryObjectStore } from '@ccpipe/adapters';
import { ProcessedQueue, deadLetterKey } from './processed-queue';

const record = { url: 'https://example.com/', ts: '20300110120000', languages: ['eng'], filename: 'crawl-data/C/x.warc.gz', offset: 0, length: 100 };
const batch = (name: string): Batch => {
  const seq = name.charCodeAt(0);
  return { v: 1, id: batchId('C', 0, seq), crawl: 'C', dataset: 'C', datasetId: 1, blockNo: 0, seq, records: [record] };
};
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('ProcessedQueue', () => {
  it('confirms a publish only when a worker completes the batch, not when it is queued; a dead-lettered batch fails its publish', async () => {
    const q = new ProcessedQueue({ deliveryLimit: 1 });
    const got: Delivery[] = [];
    await q.consumer({ prefetch: 10 }).start(async (d) => void got.push(d));
    const pub = q.publisher();
    let a = false;
    let b = false;
    const pa = pub.publish(batch('a')).then(() => (a = true));
    const pb = pub.publish(batch('b')).then(() => (b = true));
    await tick();
    await tick();
    expect(got).toHaveLength(2);
    expect([a, b]).toEqual([false, false]);
    await got[0]!.ack();
    await pa;
    expect([a, b]).toEqual([true, false]);
    // Requeued within the limit: still pending; past it the queue dead-letters it, which is lost with the process: the
    // publish fails (the batcher's checkpoint stays before the block)
    await got[1]!.requeue();
    await tick();
    await tick();
    expect(b).toBe(false);
    expect(got).toHaveLength(3);
    await got[2]!.requeue();
    await expect(pb).rejects.toMatchObject({ code: 'CCP_ERR_RUN_BATCH_FAILED', retryable: false });
    expect(b).toBe(false);
    expect(q.counts).toEqual({ done: 1, deadLettered: 1 });
    expect(q.queue.deadLetters()).toHaveLength(1);
  });

  it('with a data store, keeps a dead-lettered batch there and confirms it; replay publishes it again and deletes it once done', async () => {
    const store = new MemoryObjectStore();
    const q = new ProcessedQueue({ deliveryLimit: 0, store });
    let fail = true;
    await q.consumer({ prefetch: 10 }).start(async (d) => (fail ? d.requeue() : d.ack()));
    await q.publisher().publish(batch('a')); // resolves: kept, not lost
    const key = deadLetterKey(1, batch('a').id);
    expect(decodeBatch((await store.get(key))!)).toEqual(batch('a'));
    expect(await q.replay()).toEqual({ tried: 1, done: 0, unreadable: 0 }); // dead-lettered again: still kept
    expect(await store.get(key)).not.toBeNull();
    fail = false;
    // a kept file that is not a batch is set aside instead of stopping every later run
    const bad = deadLetterKey(1, batch('b').id);
    await store.put(bad, Buffer.from('{"not": "a batch"}'));
    expect(await q.replay()).toEqual({ tried: 2, done: 1, unreadable: 1 });
    expect([await store.get(key), await store.get(bad)]).toEqual([null, null]);
    expect(await store.get(bad.replace(/\.json$/, '.bad'))).not.toBeNull();
    expect(q.counts).toEqual({ done: 1, deadLettered: 2 });
  });

  it('a worker crash reaches a publish whose batch is still being kept', async () => {
    const store = new MemoryObjectStore();
    store.put = () => new Promise<void>(() => undefined); // a store that never answers
    const q = new ProcessedQueue({ deliveryLimit: 0, store });
    await q.consumer({ prefetch: 1 }).start(async (d) => d.requeue());
    const pending = q.publisher().publish(batch('c'));
    await tick();
    await tick();
    q.failAll(new Error('worker crashed'));
    await expect(pending).rejects.toThrow('worker crashed');
  });

  it('failAll rejects waiting and later publishes; an aborted publish rejects', async () => {
    const q = new ProcessedQueue();
    await q.consumer({ prefetch: 1 }).start(async () => undefined);
    const pub = q.publisher();
    const ctl = new AbortController();
    const aborted = pub.publish(batch('x'), ctl.signal);
    ctl.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    const waiting = pub.publish(batch('y'));
    q.failAll(new Error('worker crashed'));
    await expect(waiting).rejects.toThrow('worker crashed');
    await expect(pub.publish(batch('z'))).rejects.toThrow('worker crashed');
  });
});
