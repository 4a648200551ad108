import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Registry } from 'prom-client';
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
});
