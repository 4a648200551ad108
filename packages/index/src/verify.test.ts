import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CcpError } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { partRow, putBatch } from '../../../tests/support/batches';
import { tempDirEach } from '../../../tests/support/temp-dir';
import { indexLayout, type LakeFileEntry } from './format';
import { runMerge } from './run-merge';
import { verifyVersion } from './verify';

afterAll(async () => {
  await closeDuckDbParquetEngine();
});

describe('verifyVersion (ccpipe verify)', () => {
  let dir: string;
  tempDirEach('ccpipe-verify-', (d) => (dir = d));

  /** Two merged versions of a small lake; the files of the current one (v000002). */
  async function lake(): Promise<{ store: FsObjectStore; files: LakeFileEntry[] }> {
    const store = new FsObjectStore({ root: dir });
    await putBatch(store, 1, 'b1', Array.from({ length: 400 }, (_, i) => partRow(1, `https://s${i % 40}.example/${i}`, '20300101000000')));
    await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 3, graceMs: 0 });
    await putBatch(store, 1, 'b2', [partRow(1, 'https://new.example/', '20300102000000')]);
    await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 3, graceMs: 0 });
    const files = JSON.parse(await readFile(join(dir, indexLayout.versionFile('v000002', 'files.json')), 'utf8')) as LakeFileEntry[];
    return { store, files };
  }

  it('reads every index file, lake file and locator of the version whole and finds them as recorded', async () => {
    const { store, files } = await lake();
    const read: string[] = [];
    const r = await verifyVersion(store, { onFile: (key) => read.push(key) });
    // the second merge added a row: the orderings are the first merge's base and this one's delta (three kinds each)
    expect(r).toMatchObject({ version: 'v000002', lakeFiles: files.length, locators: files.length, orderings: 6, searchShards: files.length, problems: [] });
    const shards = (JSON.parse(await readFile(join(dir, indexLayout.versionFile('v000002', 'search.json')), 'utf8')) as { key: string }[]).map((e) => e.key);
    expect(r.indexFiles).toBeGreaterThanOrEqual(8); // the JSON files and one shard's three
    const sizes = files.reduce((n, f) => n + f.bytes + f.locator!.bytes, 0);
    expect(r.bytes).toBeGreaterThan(sizes);
    const orderings = ['ts', 'size', 'status'].flatMap((k) => [`order/dataset_id=1/${k}-v000001.parquet`, `order/dataset_id=1/${k}-delta-v000002.parquet`]);
    expect(new Set(read)).toEqual(new Set([...files.flatMap((f) => [f.key, f.locator!.key]), ...orderings, ...shards, ...read.filter((k) => k.startsWith('index/v000002/'))]));
    // an older version kept by the manifest, by name; one it does not keep is an error, not a pass
    expect((await verifyVersion(store, { version: 'v000001' })).problems).toEqual([]);
    // nothing to check is not a pass: a version the manifest does not keep, no version at all (a wrong --data, a copy
    // that lost its manifest), an unreadable manifest
    const manifest = indexLayout.manifest();
    expect((await verifyVersion(store, { version: 'v000009' })).problems).toEqual([
      { key: manifest, code: 'CCP_ERR_INDEX_MISSING', message: 'the manifest does not keep v000009 (it keeps: v000001, v000002)' },
    ]);
    expect(await verifyVersion(new FsObjectStore({ root: join(dir, 'empty') }))).toMatchObject({ version: null, problems: [{ key: manifest, code: 'CCP_ERR_INDEX_MISSING' }] });
    await writeFile(join(dir, manifest), '{');
    expect((await verifyVersion(store)).problems).toEqual([{ key: manifest, code: 'CCP_ERR_INDEX_FORMAT', message: expect.any(String) }]);
  });

  it('names each damaged or missing file: a flipped byte in a lake file, a lost locator, a damaged shard file, a lost search shard', async () => {
    const { store, files } = await lake();
    const lakePath = join(dir, files[0]!.key);
    const bytes = await readFile(lakePath);
    const mid = Math.floor(bytes.length / 2);
    bytes.writeUInt8(bytes.readUInt8(mid) ^ 0xff, mid); // same size, another CRC32
    await writeFile(lakePath, bytes);
    await rm(join(dir, files[1]!.locator!.key));
    const shard = join(dir, indexLayout.versionFile('v000002', 'postings-0000.bin'));
    await writeFile(shard, Buffer.concat([await readFile(shard), Buffer.from([0])]));
    const [searchShard] = JSON.parse(await readFile(join(dir, indexLayout.versionFile('v000002', 'search.json')), 'utf8')) as { key: string }[];
    await rm(join(dir, searchShard!.key));
    const r = await verifyVersion(store);
    expect(r.problems).toEqual(
      [
        { key: searchShard!.key, code: 'CCP_ERR_INDEX_MISSING', message: 'file is missing' },
        { key: files[0]!.key, code: 'CCP_ERR_INDEX_CRC', message: 'CRC32 mismatch' },
        { key: files[1]!.locator!.key, code: 'CCP_ERR_INDEX_MISSING', message: 'file is missing' },
        { key: indexLayout.versionFile('v000002', 'postings-0000.bin'), code: 'CCP_ERR_INDEX_CRC', message: expect.stringMatching(/^size /) },
      ].sort((a, b) => (a.key < b.key ? -1 : 1)),
    );
    // a store failing on one file is that file's problem; the others are still checked and reported
    const failing = Object.assign(Object.create(store) as FsObjectStore, {
      getRange: (key: string, offset: number, length: number) =>
        key === files[2]!.key ? Promise.reject(new CcpError('CCP_ERR_STORE_IO', 'connection reset')) : store.getRange(key, offset, length),
    });
    const partial = await verifyVersion(failing);
    expect(partial.problems.map((p) => [p.key, p.code])).toEqual(
      [...r.problems.map((p) => [p.key, p.code]), [files[2]!.key, 'CCP_ERR_STORE_ACCESS']].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
    // a damaged version.json stops there: nothing it lists can be trusted
    await writeFile(join(dir, indexLayout.toc('v000002')), '{}');
    expect((await verifyVersion(store)).problems).toEqual([{ key: indexLayout.toc('v000002'), code: 'CCP_ERR_INDEX_CRC', message: expect.any(String) }]);
  });
});
