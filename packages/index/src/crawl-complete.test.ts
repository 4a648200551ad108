import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyDatasetRegistry, ensureDatasetIn, layout, serializeDatasetRegistry } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { partRow, putBatch } from '../../../tests/support/batches';
import { pendingMerge, runMerge } from './run-merge';

let dir: string;
let store: FsObjectStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-complete-'));
  store = new FsObjectStore({ root: dir });
  let reg = emptyDatasetRegistry();
  for (const n of ['CC-MAIN-2030-40', 'CC-MAIN-2030-44']) reg = ensureDatasetIn(reg, n, n, 'now').registry;
  await store.put(layout.datasetRegistry(), serializeDatasetRegistry(reg));
});
afterEach(() => rm(dir, { recursive: true, force: true }));
afterAll(() => closeDuckDbParquetEngine());

/** The batcher's checkpoint of `dataset` as it writes it: done or not, with the batches it published. */
const checkpoint = (dataset: string, done: boolean, batchesPublished?: number) =>
  store.put(layout.batcherCheckpoint(dataset), Buffer.from(JSON.stringify({ v: 1, crawl: dataset, dataset, fingerprint: 'f', nextPlanIndex: 1, planLength: 1, done, updatedAt: 'now', ...(batchesPublished !== undefined && { batchesPublished }) })));

describe('pendingMerge: the last batches of a crawl', () => {
  it('names a crawl whose pending batches are its last ones, as its batcher counted them, and no other', async () => {
    await putBatch(store, 1, 'a', [partRow(1, 'https://a.example/', '20300101000000')]);
    await putBatch(store, 1, 'b', [partRow(1, 'https://b.example/', '20300101000000')]);
    await checkpoint('CC-MAIN-2030-40', false, 2);
    expect((await pendingMerge(store)).completes).toEqual([]); // still publishing
    await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 0 });
    await putBatch(store, 1, 'c', [partRow(1, 'https://c.example/', '20300101000000')]);
    await checkpoint('CC-MAIN-2030-40', true, 4);
    expect((await pendingMerge(store)).completes).toEqual([]); // one batch is not done yet (or was dead-lettered)
    await putBatch(store, 1, 'd', [partRow(1, 'https://d.example/', '20300101000000')]);
    await putBatch(store, 2, 'x', [partRow(2, 'https://x.example/', '20300101000000')]);
    await checkpoint('CC-MAIN-2030-44', true); // a batcher older than the count: never said complete
    const p = await pendingMerge(store);
    expect(p).toMatchObject({ batches: 3, completes: ['CC-MAIN-2030-40'] });
  });
});
