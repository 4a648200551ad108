import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyDatasetRegistry, ensureDatasetIn, layout, serializeDatasetRegistry, withStoreId } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine, writeParquetPart } from '@ccpipe/adapters';
import { partRow } from '../../../tests/support/batches';
import { pendingMerge, runMerge } from './run-merge';

let dir: string;
let store: FsObjectStore;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-foreign-'));
  store = new FsObjectStore({ root: dir });
});
afterEach(() => rm(dir, { recursive: true, force: true }));
afterAll(() => closeDuckDbParquetEngine());

/** A completed batch whose marker names `dataset` and `store` as a worker writes them. */
async function batch(id: string, datasetId: number, dataset: string, storeId: string | undefined, url: string): Promise<void> {
  const part = layout.batchPart(datasetId, id);
  await store.put(part, await writeParquetPart([partRow(datasetId, url, '20300101000000')], { engine: 'duckdb' }));
  const marker = Buffer.from(JSON.stringify({ v: 1, batchId: id, datasetId, dataset, ...(storeId !== undefined && { store: storeId }), rows: 1, part }));
  await store.put(layout.batchMarker(datasetId, id), marker);
  await store.put(layout.inboxEntry(datasetId, id), marker);
}

describe('a merge leaves out batches of another data store', () => {
  it('merges its own, counts the foreign ones at every merge and keeps their inbox entries', async () => {
    const reg = ensureDatasetIn(withStoreId(emptyDatasetRegistry(), () => 'store-aaaaaaaa').registry, 'CC-MAIN-2030-40', 'CC-MAIN-2030-40', 'now').registry;
    await store.put(layout.datasetRegistry(), serializeDatasetRegistry(reg));
    await batch('own', 1, 'CC-MAIN-2030-40', 'store-aaaaaaaa', 'https://own.example/');
    await batch('old-worker', 1, 'CC-MAIN-2030-40', undefined, 'https://older.example/'); // a worker older than store ids
    await batch('other-store', 1, 'CC-MAIN-2030-40', 'store-bbbbbbbb', 'https://foreign.example/a');
    await batch('other-dataset', 1, 'CC-MAIN-2030-44', undefined, 'https://foreign.example/b');
    const first = await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 0 });
    expect(first).toMatchObject({ published: true, batches: 2, urls: 2, foreignBatches: 2 });
    // nor are they pending for the merger service (its ratio and the crawl's completion count only mergeable batches)
    const rowsOf = new Map<string, number>();
    expect(await pendingMerge(store, rowsOf)).toMatchObject({ batches: 0, rows: 0 });
    expect(await pendingMerge(store, rowsOf)).toMatchObject({ batches: 0, rows: 0 }); // remembered, not read again
    const second = await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 0 });
    expect(second).toMatchObject({ published: false, foreignBatches: 2 });
    expect(await store.get(layout.inboxEntry(1, 'other-store'))).not.toBeNull();
    expect(await store.get(layout.inboxEntry(1, 'own'))).toBeNull();
  });
});
