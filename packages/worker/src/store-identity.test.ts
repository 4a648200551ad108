import { batchId, emptyDatasetRegistry, ensureDatasetIn, layout, serializeDatasetRegistry, withStoreId, type Batch } from '@ccpipe/core';
import { MemoryBatchQueue, MemoryObjectStore, MemoryRangeReader } from '@ccpipe/adapters';
import { startWorker } from './run-worker';
import { StoreIdentity } from './store-identity';

const batch = (seq: number, over: Partial<Batch> = {}): Batch => ({
  v: 1, id: batchId('CC-MAIN-2030-44', 1, seq), crawl: 'CC-MAIN-2030-44', dataset: 'CC-MAIN-2030-44', datasetId: 1, store: 'store-aaaaaaaa', blockNo: 1, seq, records: [], ...over,
});

/** A store whose registry has id `storeId` and the datasets `names` (ids 1, 2, …). */
async function storeWith(storeId: string, names: string[]): Promise<MemoryObjectStore> {
  const store = new MemoryObjectStore();
  let reg = withStoreId(emptyDatasetRegistry(), () => storeId).registry;
  for (const n of names) reg = ensureDatasetIn(reg, n, n, '2030-01-01T00:00:00Z').registry;
  await store.put(layout.datasetRegistry(), serializeDatasetRegistry(reg));
  return store;
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
}

describe('StoreIdentity: a worker refuses batches of another data store', () => {
  it('dead-letters a batch of another store or of a dataset id that means another dataset here, writing nothing; its own are done', async () => {
    // the repro of issue #22: the worker's store has CC-MAIN-2030-40 as dataset 1; a batcher over another store
    // published CC-MAIN-2030-44 as its dataset 1
    const store = await storeWith('store-aaaaaaaa', ['CC-MAIN-2030-40']);
    const q = new MemoryBatchQueue();
    const failed: string[] = [];
    const done: string[] = [];
    const w = await startWorker(
      q.consumer({ prefetch: 1 }),
      { reader: new MemoryRangeReader(new Map()), store, extract: async () => ({ title: null, text: '' }) as never, writePart: async () => new Uint8Array() },
      { concurrency: 1, includeText: true, identity: new StoreIdentity(store), requeueBackoff: { baseMs: 0, maxMs: 0 } },
      { onBatchFailed: (e) => failed.push(`${e.action}:${e.reason}`), onBatchDone: (e) => done.push(e.batchId) },
    );
    await q.publisher().publish(batch(0, { store: 'store-bbbbbbbb' })); // another store
    await q.publisher().publish(batch(1, { store: undefined })); // an older batcher, another store: the name tells
    await q.publisher().publish(batch(2, { dataset: 'CC-MAIN-2030-40', crawl: 'CC-MAIN-2030-40', id: batchId('CC-MAIN-2030-40', 1, 2) })); // its own
    await until(() => failed.length + done.length >= 3);
    await w.drain(1000);
    expect(failed).toEqual(['dead-letter:CCP_ERR_BATCH_FOREIGN_STORE', 'dead-letter:CCP_ERR_BATCH_FOREIGN_DATASET']);
    expect(q.deadLetters().map((d) => d.reason)).toEqual(['CCP_ERR_BATCH_FOREIGN_STORE', 'CCP_ERR_BATCH_FOREIGN_DATASET']);
    expect(done).toEqual([batchId('CC-MAIN-2030-40', 1, 2)]);
    // nothing of the refused batches was written
    const keys: string[] = [];
    for await (const o of store.list('')) keys.push(o.key);
    expect(keys.filter((k) => k.includes('CC-MAIN-2030-44'))).toEqual([]);
    expect(keys.some((k) => k.includes('CC-MAIN-2030-40'))).toBe(true);
  });

  it('reads the registry again when a batch names a dataset it has not seen (a batcher registered it since)', async () => {
    const store = await storeWith('store-aaaaaaaa', ['CC-MAIN-2030-40']);
    const id = new StoreIdentity(store);
    await id.check(batch(0, { dataset: 'CC-MAIN-2030-40' }));
    await expect(id.check(batch(0, { datasetId: 2 }))).rejects.toMatchObject({ code: 'CCP_ERR_BATCH_FOREIGN_DATASET', retryable: false });
    const grown = await storeWith('store-aaaaaaaa', ['CC-MAIN-2030-40', 'CC-MAIN-2030-44']);
    await store.put(layout.datasetRegistry(), (await grown.get(layout.datasetRegistry()))!);
    await expect(id.check(batch(0, { datasetId: 2 }))).resolves.toBeUndefined();
    // a store without a registry has no batcher: whatever comes is foreign
    await expect(new StoreIdentity(new MemoryObjectStore()).check(batch(0))).rejects.toMatchObject({ code: 'CCP_ERR_BATCH_FOREIGN_STORE' });
  });
});
