import { MemoryObjectStore } from '@ccpipe/adapters';
import { emptyDatasetRegistry, ensureDatasetIn, layout, serializeDatasetRegistry } from '@ccpipe/core';
import { cachedFor, ingestStatusOf, readIngestFacts } from './ingest-status';

const ingestStatus = async (store: MemoryObjectStore, merged: ReadonlyMap<number, number>) => ingestStatusOf(await readIngestFacts(store), merged);

async function storeWith(checkpoints: Record<string, object>): Promise<MemoryObjectStore> {
  const store = new MemoryObjectStore();
  let reg = emptyDatasetRegistry();
  for (const name of ['CC-MAIN-2030-40', 'CC-MAIN-2030-44']) reg = ensureDatasetIn(reg, name, name, '2030-01-01T00:00:00Z').registry;
  await store.put(layout.datasetRegistry(), serializeDatasetRegistry(reg));
  for (const [name, cp] of Object.entries(checkpoints)) await store.put(layout.batcherCheckpoint(name), Buffer.from(JSON.stringify({ v: 1, dataset: name, crawl: name, ...cp })));
  return store;
}

describe('ingestStatus (/v1/status of ccpipe api)', () => {
  it('a dataset is done once its batcher is and the version served holds every batch it published; the run once all are', async () => {
    const store = await storeWith({
      'CC-MAIN-2030-40': { planLength: 7, nextPlanIndex: 7, batchesPublished: 3, done: true },
      'CC-MAIN-2030-44': { planLength: 8, nextPlanIndex: 5, batchesPublished: 2, done: false },
    });
    const s = await ingestStatus(store, new Map([[1, 3], [2, 2]]));
    expect(s.datasets).toEqual([
      { dataset_id: 1, name: 'CC-MAIN-2030-40', crawl: 'CC-MAIN-2030-40', mode: 'ranges', modeChoice: null, blocksPlanned: 7, blocksDone: 7, batcherDone: true, batchesPublished: 3, recordsPublished: null, batchesMerged: 3, done: true },
      { dataset_id: 2, name: 'CC-MAIN-2030-44', crawl: 'CC-MAIN-2030-44', mode: 'ranges', modeChoice: null, blocksPlanned: 8, blocksDone: 5, batcherDone: false, batchesPublished: 2, recordsPublished: null, batchesMerged: 2, done: false },
    ]);
    expect(s).toMatchObject({ blocksPlanned: 15, blocksRead: 12, batchesPublished: 5, recordsPublished: null, batchesMerged: 5, done: false });
    // batcher done but a batch not merged yet (a worker still on it, or in the DLQ): not done
    await store.put(layout.batcherCheckpoint('CC-MAIN-2030-44'), Buffer.from(JSON.stringify({ dataset: 'CC-MAIN-2030-44', planLength: 8, nextPlanIndex: 8, batchesPublished: 4, done: true })));
    expect((await ingestStatus(store, new Map([[1, 3], [2, 3]]))).done).toBe(false);
    expect((await ingestStatus(store, new Map([[1, 3], [2, 4]]))).done).toBe(true);
  });

  it('says how each crawl is read: bulk or ranges, what was asked and why', async () => {
    const store = await storeWith({
      'CC-MAIN-2030-40': { planLength: 3, nextPlanIndex: 3, batchesPublished: 9, done: true, mode: 'bulk', modeChoice: { mode: 'bulk', asked: 'auto', reason: 'the filter keeps ≈ 44%' } },
      'CC-MAIN-2030-44': { planLength: 8, nextPlanIndex: 5, batchesPublished: 2, done: false, modeChoice: { mode: 'ranges', asked: 'ranges', reason: 'asked for (--mode)' } },
    });
    const s = await ingestStatus(store, new Map());
    expect(s.datasets.map((d) => [d.mode, d.modeChoice])).toEqual([
      ['bulk', { asked: 'auto', reason: 'the filter keeps ≈ 44%' }],
      ['ranges', { asked: 'ranges', reason: 'asked for (--mode)' }],
    ]);
  });

  it('a checkpoint without a batch count is never done; no checkpoint at all is not done either', async () => {
    const legacy = await storeWith({ 'CC-MAIN-2030-40': { planLength: 7, nextPlanIndex: 7, done: true } });
    const s = await ingestStatus(legacy, new Map([[1, 99]]));
    expect(s.datasets[0]).toMatchObject({ batchesPublished: null, done: false });
    expect(s.done).toBe(false);
    expect(s.batchesPublished).toBeNull();
    expect(await ingestStatus(new MemoryObjectStore(), new Map())).toEqual({
      blocksPlanned: 0, blocksRead: 0, batchesPublished: 0, recordsPublished: 0, batchesMerged: 0, done: false, datasets: [],
    });
  });

  it('shows only the datasets the caller may see, in its sums too; records published are summed', async () => {
    const store = await storeWith({
      'CC-MAIN-2030-40': { planLength: 7, nextPlanIndex: 7, batchesPublished: 3, recordsPublished: 2500, done: true },
      'CC-MAIN-2030-44': { planLength: 8, nextPlanIndex: 5, batchesPublished: 2, recordsPublished: 1200, done: false },
    });
    const facts = await readIngestFacts(store);
    const merged = new Map([[1, 3], [2, 1]]);
    expect(ingestStatusOf(facts, merged)).toMatchObject({ blocksPlanned: 15, recordsPublished: 3700, batchesMerged: 4, done: false });
    // a caller limited to dataset 1 sees it alone: its name, progress and sums, and done once it is
    const only40 = ingestStatusOf(facts, merged, (id, name) => id === 1 && name === 'CC-MAIN-2030-40');
    expect(only40).toEqual({
      blocksPlanned: 7, blocksRead: 7, batchesPublished: 3, recordsPublished: 2500, batchesMerged: 3, done: true,
      datasets: [{ dataset_id: 1, name: 'CC-MAIN-2030-40', crawl: 'CC-MAIN-2030-40', mode: 'ranges', modeChoice: null, blocksPlanned: 7, blocksDone: 7, batcherDone: true, batchesPublished: 3, recordsPublished: 2500, batchesMerged: 3, done: true }],
    });
    expect(JSON.stringify(ingestStatusOf(facts, merged, () => false))).not.toContain('2030-44');
  });

  it('cachedFor answers from one call within its window, and does not keep a failure', async () => {
    let calls = 0;
    let fail = true;
    const f = cachedFor(60_000, async () => {
      calls++;
      if (fail) throw new Error('store down');
      return calls;
    });
    await expect(f()).rejects.toThrow('store down');
    fail = false;
    expect(await f()).toBe(2);
    expect(await f()).toBe(2);
    expect(calls).toBe(2);
  });
});
