import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ObjectInfo } from '@ccpipe/core';
import { FsObjectStore } from './fs-object-store';
import { describeObjectStoreContract } from './object-store.contract';

const REPO = join(__dirname, '..', '..', '..', '..');
const REAL_WARC = join(REPO, '../shared/corpus/cc-mirror-dev/crawl-data/CC-MAIN-2030-40/segments/1700003000.00/warc/CC-MAIN-20301110120000-20301110150000-00000.warc.gz');
const realBytes = readFileSync(REAL_WARC);

describeObjectStoreContract(
  'FsObjectStore',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccp-fs-store-'));
    // root below the tmp dir: the store must create it on first put
    return { store: new FsObjectStore({ root: join(dir, 'root') }), cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  },
  realBytes,
);

describe('FsObjectStore on disk', () => {
  let dir: string;
  let store: FsObjectStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ccp-fs-store-'));
    store = new FsObjectStore({ root: dir });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const keys = async (prefix: string) => {
    const out: ObjectInfo[] = [];
    for await (const o of store.list(prefix)) out.push(o);
    return out.map((o) => o.key);
  };

  it('stores key a/b as the file <root>/a/b and leaves no temp file behind', async () => {
    await store.put('lake/part-1.parquet', realBytes);
    expect(readFileSync(join(dir, 'lake', 'part-1.parquet')).equals(realBytes)).toBe(true);
    expect(readdirSync(join(dir, 'lake'))).toEqual(['part-1.parquet']);
  });

  it('crash safety: a leftover temp file from a partial write is never listed nor returned', async () => {
    await store.put('lake/part-1.parquet', new TextEncoder().encode('complete old version'));
    // what a put killed between write and rename leaves: a partial temp beside the key, and one for a new key
    writeFileSync(join(dir, 'lake', 'part-1.parquet~999-1-deadbeef~tmp'), 'PAR1 half writ');
    writeFileSync(join(dir, 'lake', 'part-2.parquet~999-2-deadbeef~tmp'), 'PAR1 half');
    mkdirSync(join(dir, 'fresh'));
    writeFileSync(join(dir, 'fresh', 'only~1-1-00~tmp'), 'x');
    expect(await keys('')).toEqual(['lake/part-1.parquet']);
    expect(await keys('lake/part-2')).toEqual([]);
    expect(new TextDecoder().decode((await store.get('lake/part-1.parquet'))!)).toBe('complete old version');
    expect(await store.get('lake/part-2.parquet')).toBeNull();
    expect(await store.head('lake/part-2.parquet')).toBeNull();
    // the next put of the same key succeeds and the orphan stays invisible
    await store.put('lake/part-2.parquet', new TextEncoder().encode('done'));
    expect(await keys('lake/')).toEqual(['lake/part-1.parquet', 'lake/part-2.parquet']);
  });

  it('a key cannot also be a directory of keys on a filesystem: typed error, nothing half-written', async () => {
    await store.put('a/b', new Uint8Array([1]));
    await expect(store.put('a', new Uint8Array([2]))).rejects.toMatchObject({ code: 'CCP_ERR_STORE_KEY' });
    await expect(store.put('a/b/c', new Uint8Array([3]))).rejects.toMatchObject({ code: 'CCP_ERR_STORE_KEY' });
    expect(await keys('')).toEqual(['a/b']);
    expect(readdirSync(join(dir, 'a'))).toEqual(['b']);
  });

  it('names the file behind a key for readers that need a path, and validates the key', async () => {
    await store.put('lake/dataset_id=3/part-1.parquet', realBytes);
    expect(readFileSync(store.localPath('lake/dataset_id=3/part-1.parquet')).equals(realBytes)).toBe(true);
    expect(() => store.localPath('../outside')).toThrow(expect.objectContaining({ code: 'CCP_ERR_STORE_KEY' }));
  });

  it('delete prunes directories it left empty but never the root', async () => {
    await store.put('x/y/z', new Uint8Array([1]));
    await store.delete('x/y/z');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('get reads an object over readFile\'s 2 GiB limit whole (a big version\'s postings.bin)', async () => {
    const path = join(dir, 'big.bin');
    const size = 2 ** 31 + 4096;
    const fd = openSync(path, 'w');
    try {
      // sparse: only the marked ends take disk
      writeSync(fd, Buffer.from('head'), 0, 4, 0);
      writeSync(fd, Buffer.from('tail'), 0, 4, size - 4);
    } finally {
      closeSync(fd);
    }
    const got = (await store.get('big.bin'))!;
    expect(got.length).toBe(size);
    expect(Buffer.from(got.subarray(0, 4)).toString()).toBe('head');
    expect(Buffer.from(got.subarray(size - 4)).toString()).toBe('tail');
    expect(got[2 ** 31]).toBe(0);
  }, 60_000);
});
