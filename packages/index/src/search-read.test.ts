import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '@ccpipe/core';
import { MemoryObjectStore } from '@ccpipe/adapters';
import { crcOf } from './format';
import type { SearchShardEntry } from './search-index';
import { shardFiles } from './search-read';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ccpipe-shard-files-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Puts a "shard" of `bytes` bytes in the store and returns its entry. */
async function shard(store: MemoryObjectStore, name: string, bytes: number): Promise<SearchShardEntry> {
  const b = Buffer.alloc(bytes, name);
  const key = `search/dataset_id=1/domain_prefix=00/part-v000001-${name}.sqlite`;
  await store.put(key, b);
  return { key, lakeKey: `urls/dataset_id=1/domain_prefix=00/part-${name}.parquet`, datasetId: 1, prefix: '00', docs: 1, bytes, crc32: crcOf(b), textBytes: 1 };
}

describe('shardFiles (search shards of a store without local files)', () => {
  it('downloads each shard once, checked, and keeps the copies within maxBytes, least recently used out first', async () => {
    const store = new MemoryObjectStore();
    const [a, b, c] = [await shard(store, 'a', 400), await shard(store, 'b', 400), await shard(store, 'c', 400)];
    // a copy asks the object's size once (then reads it by ranges): heads count downloads
    let gets = 0;
    const counting = Object.assign(Object.create(store) as MemoryObjectStore, { head: (k: string) => (gets++, store.head(k)) });
    const files = shardFiles(counting, undefined, () => join(dir, 'stage'), { maxBytes: 1000, busyMs: 0 });
    const [pa] = await files.paths([a]);
    expect(existsSync(pa!)).toBe(true);
    await files.paths([a, b]);
    expect(gets).toBe(2); // a was kept
    expect(files.stagedBytes()).toBe(800);
    // b used again, then c passes the cap: a, the least recently used, goes
    await files.paths([b]);
    await files.paths([c]);
    expect(files.stagedBytes()).toBeLessThanOrEqual(1000);
    expect(existsSync(pa!)).toBe(false); // a: least recently used
    await files.paths([b, c]);
    expect(gets).toBe(3);
    await files.paths([a]);
    expect(gets).toBe(4); // downloaded again
    await files.close();
    expect(existsSync(join(dir, 'stage'))).toBe(false);
  });

  it('keeps copies handed out within busyMs even past the cap', async () => {
    const store = new MemoryObjectStore();
    const [a, b] = [await shard(store, 'a', 600), await shard(store, 'b', 600)];
    const files = shardFiles(store, undefined, () => join(dir, 'stage'), { maxBytes: 1000 });
    const [pa] = await files.paths([a]);
    await files.paths([b]);
    expect(existsSync(pa!)).toBe(true);
    expect(files.stagedBytes()).toBe(1200);
    await files.close();
  });

  it('refuses a damaged or missing shard with a typed error, and tries it again next time', async () => {
    const store = new MemoryObjectStore();
    const a = await shard(store, 'a', 100);
    const files = shardFiles(store, undefined, () => join(dir, 'stage'));
    let err: unknown;
    await files.paths([{ ...a, crc32: a.crc32 ^ 1 }]).catch((e: unknown) => (err = e));
    expect(hasCode(err, 'CCP_ERR_INDEX_CRC')).toBe(true);
    expect(files.stagedBytes()).toBe(0);
    await files.paths([{ ...a, key: `${a.key}.gone` }]).catch((e: unknown) => (err = e));
    expect(hasCode(err, 'CCP_ERR_INDEX_MISSING')).toBe(true);
    expect(await files.paths([a])).toHaveLength(1);
    await files.close();
  });
});
