import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { layout } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine, createLogger } from '@ccpipe/adapters';
import { partRow, putBatch } from '../../../../tests/support/batches';
import { tempDirEach } from '../../../../tests/support/temp-dir';
import { mergeAndServe } from './serve-index';

afterAll(() => closeDuckDbParquetEngine());

describe('mergeAndServe (ccpipe run)', () => {
  let dir: string;
  tempDirEach('ccpipe-serve-index-', (d) => (dir = d));
  const serve = (store: FsObjectStore) =>
    mergeAndServe({ store, dataDir: dir, rowGroupSize: 2048, port: 0, host: '127.0.0.1', registry: new Registry(), log: createLogger({ service: 'test', level: 'silent' }), status: async () => ({}) });

  it('serves the merged index; a version that does not load fails here, before the address is printed', async () => {
    const store = new FsObjectStore({ root: dir });
    await putBatch(store, 1, 'b1', [partRow(1, 'https://a.example/', '20300101000000')]);
    const served = await serve(store);
    try {
      const r = await fetch(`${served.url}/v1/domain/a.example`);
      expect([served.merge.version, r.status]).toEqual(['v000001', 200]);
    } finally {
      await served.close();
    }
    // the same data with a damaged shard file: nothing new to merge, and the version served is refused at start
    const postings = join(dir, 'index', 'v000001', 'postings-0000.bin');
    await writeFile(postings, Buffer.concat([await readFile(postings), Buffer.from([0])]));
    await expect(serve(store)).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC' });
  });

  it("names a dataset's largest domain for the example queries, from the version served (batches hold no postings delta)", async () => {
    const store = new FsObjectStore({ root: dir });
    await putBatch(store, 1, 'b1', [partRow(1, 'https://a.example/', '20300101000000'), partRow(1, 'https://b.example/1', '20300101000000')]);
    await putBatch(store, 1, 'b2', [partRow(1, 'https://b.example/2', '20300101000000'), partRow(1, 'https://www.b.example/3', '20300101000000')]);
    // b1 as an older worker left it: a postings delta beside the part, named in the marker; it merges like any other
    const dir1 = layout.batchMarker(1, 'b1').replace(/_SUCCESS\.json$/, '');
    await store.put(`${dir1}postings.json`, Buffer.from(JSON.stringify({ v: 1, batchId: 'b1', datasetId: 1, part: layout.batchPart(1, 'b1'), rows: 2, domains: [{ domain: 'wrong.example', first: 0, rows: 2 }] })));
    const legacy = Buffer.from(JSON.stringify({ v: 1, batchId: 'b1', datasetId: 1, rows: 2, part: layout.batchPart(1, 'b1'), postings: `${dir1}postings.json` }));
    await store.put(layout.batchMarker(1, 'b1'), legacy);
    await store.put(layout.inboxEntry(1, 'b1'), legacy);
    const served = await serve(store);
    try {
      expect(served.merge).toMatchObject({ batches: 2, rowsIn: 4, urls: 4, domains: 2 });
      expect(await served.largestDomain(1)).toBe('b.example');
      expect(await served.largestDomain(2)).toBeNull();
    } finally {
      await served.close();
    }
  });
});
