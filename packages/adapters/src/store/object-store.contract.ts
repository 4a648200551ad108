// The one behaviour suite every ObjectStore adapter must pass (bullmq-style): run it from each adapter's test.
import { describe, expect, it, beforeEach, afterEach } from '@jest/globals';
import type { ObjectInfo, ObjectStore } from '@ccpipe/core';

/** A fresh, empty store and how to dispose of it (remove tmp dirs, close clients). */
export interface ObjectStoreFixture {
  store: ObjectStore;
  cleanup(): Promise<void>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

async function collect(it: AsyncIterable<ObjectInfo>): Promise<ObjectInfo[]> {
  const out: ObjectInfo[] = [];
  for await (const o of it) out.push(o);
  return out;
}

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

/**
 * Registers the ObjectStore contract under `describe(name)`. `factory` is called before each test and must return an
 * empty store; `cleanup` runs after it.
 * @param realBytes bytes of a real corpus file, stored and sliced like a WARC range read
 */
export function describeObjectStoreContract(
  name: string,
  factory: () => Promise<ObjectStoreFixture>,
  realBytes: Buffer,
): void {
  describe(`ObjectStore contract: ${name}`, () => {
    let fx: ObjectStoreFixture;
    let store: ObjectStore;
    beforeEach(async () => {
      fx = await factory();
      store = fx.store;
    });
    afterEach(async () => {
      await fx.cleanup();
    });

    it('round-trips bytes, including an empty object, and reports sizes', async () => {
      await store.put('lake/crawl=CC-MAIN-2024-30/part-0.parquet', realBytes);
      await store.put('markers/empty', new Uint8Array(0));
      expect(Buffer.from((await store.get('lake/crawl=CC-MAIN-2024-30/part-0.parquet'))!).equals(realBytes)).toBe(true);
      expect((await store.get('markers/empty'))!.length).toBe(0);
      expect(await store.head('lake/crawl=CC-MAIN-2024-30/part-0.parquet')).toEqual({
        key: 'lake/crawl=CC-MAIN-2024-30/part-0.parquet',
        size: realBytes.length,
      });
      expect(await store.head('markers/empty')).toEqual({ key: 'markers/empty', size: 0 });
    });

    it('returns null for a missing object and never confuses a key prefix with an object', async () => {
      await store.put('a/b', enc.encode('x'));
      expect(await store.get('missing')).toBeNull();
      expect(await store.head('missing')).toBeNull();
      expect(await store.get('a')).toBeNull();
      expect(await store.head('a')).toBeNull();
    });

    it('put replaces the whole object and does not keep a reference to the caller buffer', async () => {
      const buf = enc.encode('first version, longer');
      await store.put('k', buf);
      buf.fill(0x21);
      expect(dec.decode((await store.get('k'))!)).toBe('first version, longer');
      await store.put('k', enc.encode('second'));
      expect(dec.decode((await store.get('k'))!)).toBe('second');
      expect((await store.head('k'))!.size).toBe(6);
    });

    it('concurrent puts of one key leave exactly one complete version', async () => {
      const versions = [0, 1, 2, 3, 4, 5].map((i) => new Uint8Array(64 * 1024 + i * 1000).fill(i + 1));
      await Promise.all(versions.map((v) => store.put('race/key', v)));
      const got = (await store.get('race/key'))!;
      const match = versions.find((v) => v.length === got.length);
      expect(match).toBeDefined();
      expect(Buffer.from(got).equals(Buffer.from(match!))).toBe(true);
      expect((await collect(store.list('race/'))).map((o) => o.key)).toEqual(['race/key']);
    });

    it('getRange returns exactly the requested slice of real bytes', async () => {
      await store.put('warc/file.warc.gz', realBytes);
      const off = Math.floor(realBytes.length / 3);
      const len = Math.min(4096, realBytes.length - off);
      expect(Buffer.from(await store.getRange('warc/file.warc.gz', off, len)).equals(realBytes.subarray(off, off + len))).toBe(true);
      expect((await store.getRange('warc/file.warc.gz', realBytes.length, 0)).length).toBe(0);
      const tail = await store.getRange('warc/file.warc.gz', realBytes.length - 1, 1);
      expect(tail[0]).toBe(realBytes[realBytes.length - 1]);
    });

    it('getRange throws typed errors for a missing object, a range past the end and a negative offset', async () => {
      await store.put('short', enc.encode('0123456789'));
      expect(await codeOf(store.getRange('nope', 0, 1))).toBe('CCP_ERR_STORE_NOT_FOUND');
      expect(await codeOf(store.getRange('short', 5, 6))).toBe('CCP_ERR_STORE_RANGE');
      expect(await codeOf(store.getRange('short', -1, 2))).toBe('CCP_ERR_STORE_RANGE');
    });

    it('lists in lexicographic key order across directory boundaries, with sizes', async () => {
      // `-` and `.` sort before `/`, digits after: a per-directory walk that lists files first gets this wrong.
      // No key is also a "directory" of others (`a` and `a/b`): a filesystem store cannot hold both.
      const keys = ['b', 'a/b', 'a-b', 'a.c', 'a0', 'a/c/z', 'a/c=1/x', 'a/c.d', 'a/c-'];
      for (const k of keys) await store.put(k, enc.encode(k));
      const all = await collect(store.list(''));
      expect(all.map((o) => o.key)).toEqual([...keys].sort());
      expect(all.every((o) => o.size === o.key.length)).toBe(true);
      expect((await collect(store.list('a/'))).map((o) => o.key)).toEqual(['a/b', 'a/c-', 'a/c.d', 'a/c/z', 'a/c=1/x']);
      expect((await collect(store.list('a/c'))).map((o) => o.key)).toEqual(['a/c-', 'a/c.d', 'a/c/z', 'a/c=1/x']);
      expect((await collect(store.list('a/c/'))).map((o) => o.key)).toEqual(['a/c/z']);
      expect((await collect(store.list('a'))).length).toBe(8);
      expect(await collect(store.list('zzz/'))).toEqual([]);
    });

    it('serves keys with `=` segments (dataset_id=3, crawl=…) in every operation', async () => {
      const key = 'batches/dataset_id=3/crawl=CC-MAIN-2030-40/part=0.parquet';
      const slice = realBytes.subarray(0, 64 * 1024);
      await store.put(key, slice);
      await store.put('batches/dataset_id=30/x', enc.encode('other dataset'));
      expect(Buffer.from((await store.get(key))!).equals(slice)).toBe(true);
      expect(await store.head(key)).toEqual({ key, size: slice.length });
      expect(Buffer.from(await store.getRange(key, 1000, 500)).equals(slice.subarray(1000, 1500))).toBe(true);
      expect(await collect(store.list('batches/dataset_id=3/'))).toEqual([{ key, size: slice.length }]);
      expect((await collect(store.list('batches/dataset_id=3'))).map((o) => o.key)).toEqual([key, 'batches/dataset_id=30/x']);
      await store.delete(key);
      expect(await store.head(key)).toBeNull();
    });

    it('lists more keys than one S3 page (1000) completely, each once, in order, without sibling prefixes', async () => {
      // Batch markers of three datasets, written out of order; `batches-old/` and `batches` sort around `batches/`.
      const keys = Array.from({ length: 1005 }, (_, i) => `batches/dataset_id=${(i * 7) % 3}/b-${String((i * 389) % 1005).padStart(5, '0')}/_SUCCESS.json`);
      for (let i = 0; i < keys.length; i += 25) await Promise.all(keys.slice(i, i + 25).map((k) => store.put(k, enc.encode(k))));
      await store.put('batches-old/x', enc.encode('x'));
      await store.put('batchesx', enc.encode('x'));
      const all = await collect(store.list('batches/'));
      expect(all.map((o) => o.key)).toEqual([...keys].sort());
      expect(all.every((o) => o.size === o.key.length)).toBe(true);
      const one = keys.filter((k) => k.startsWith('batches/dataset_id=1/')).sort();
      expect((await collect(store.list('batches/dataset_id=1/'))).map((o) => o.key)).toEqual(one);
      expect((await collect(store.list(''))).length).toBe(keys.length + 2);
    }, 120_000);

    it('delete removes an object and is idempotent; the key can be reused, also as a directory', async () => {
      await store.put('d/x/y', enc.encode('1'));
      await store.delete('d/x/y');
      await store.delete('d/x/y');
      await store.delete('never/was');
      expect(await store.get('d/x/y')).toBeNull();
      expect(await collect(store.list('d/'))).toEqual([]);
      await store.put('d/x', enc.encode('now a file'));
      expect(dec.decode((await store.get('d/x'))!)).toBe('now a file');
    });

    it('rejects invalid keys with CCP_ERR_STORE_KEY on every operation', async () => {
      const bad = ['', '/abs', 'a//b', 'a/../b', '..', './a', 'a\\b', 'a/', 'a b', 'x~tmp', 'caf\u00e9'];
      for (const k of bad) {
        expect([k, await codeOf(store.put(k, enc.encode('x')))]).toEqual([k, 'CCP_ERR_STORE_KEY']);
        expect(await codeOf(store.get(k))).toBe('CCP_ERR_STORE_KEY');
        expect(await codeOf(store.head(k))).toBe('CCP_ERR_STORE_KEY');
        expect(await codeOf(store.getRange(k, 0, 0))).toBe('CCP_ERR_STORE_KEY');
        expect(await codeOf(store.delete(k))).toBe('CCP_ERR_STORE_KEY');
      }
      for (const p of ['../', '/', 'a//', 'a\\']) expect(await codeOf(collect(store.list(p)))).toBe('CCP_ERR_STORE_KEY');
      expect(await collect(store.list(''))).toEqual([]);
    });
  });
}
