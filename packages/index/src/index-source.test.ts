import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectStore } from '@ccpipe/core';
import { MemoryObjectStore, closeDuckDbParquetEngine, type PartRow } from '@ccpipe/adapters';
import { indexLayout } from './format';
import { openIndexSource } from './index-source';
import { runMerge, type MergeOptions } from './run-merge';
import { tempDirEach } from '../../../tests/support/temp-dir';
import { partRow, putBatch } from '../../../tests/support/batches';

/** A domain's datasets with their URL counts only (the facts are domain-facts.test.ts's). */
const urlCounts = ({ datasetId, urlCount }: { datasetId: number; urlCount: number }): { datasetId: number; urlCount: number } => ({ datasetId, urlCount });

afterAll(() => closeDuckDbParquetEngine());

const row = (raw: string, ts: string): PartRow => partRow(1, raw, ts, { title: 't', text: null });

const putUrls = async (s: ObjectStore, id: string, urls: string[], ts = '20300101000000'): Promise<void> => putBatch(s, 1, id, urls.map((u) => row(u, ts)));

/** A memory store holding version v000001 of `urls` (batch b1), and the merge options that made it. */
async function oneVersion(urls: string[], over: Partial<MergeOptions> = {}): Promise<{ store: MemoryObjectStore; merge: MergeOptions }> {
  const store = new MemoryObjectStore();
  const merge: MergeOptions = { store, rowGroupSize: 2048, keepVersions: 3, graceMs: 0, ...over };
  await putUrls(store, 'b1', urls);
  await runMerge(merge);
  return { store, merge };
}

/** `store` with some methods replaced: a store that is slow, stuck or watched on some keys. */
const withMethods = (store: MemoryObjectStore, methods: Partial<MemoryObjectStore>): MemoryObjectStore =>
  Object.assign(Object.create(store) as MemoryObjectStore, methods);

const urlsOf = async (v: { urls(d: string, ds: number, o: number, l: number): Promise<{ items: { url: string }[] }> } | null, domain: string) =>
  (await v!.urls(domain, 1, 0, 100)).items.map((i) => i.url);

describe('openIndexSource', () => {
  describe("indexReads 'files' over a store without local files (as S3): shard files staged into indexCacheDir", () => {
    let cache: string;
    tempDirEach('ccpipe-index-cache-', (d) => (cache = d));
    /** Files under the cache dir but the stage roots' owner files, relative to it ('/'-separated), sorted. */
    const cached = async (): Promise<string[]> =>
      (await readdir(cache, { recursive: true, withFileTypes: true })).filter((e) => e.isFile() && e.name !== 'owner.json')
        .map((e) => join(e.parentPath, e.name).slice(cache.length + 1).split('\\').join('/')).sort();
    /** Directories under the cache dir, relative to it, sorted. */
    const dirs = async (): Promise<string[]> =>
      (await readdir(cache, { recursive: true, withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => join(e.parentPath, e.name).slice(cache.length + 1).split('\\').join('/')).sort();
    /**
     * Resolves once `check` holds (polled), or fails after 5 s. A listing that meets a directory the source is
     * deleting meanwhile (ENOENT mid-walk) is a "not yet".
     */
    const eventually = async (check: () => Promise<boolean> | boolean): Promise<void> => {
      const holds = async (): Promise<boolean> => {
        try {
          return await check();
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
          throw err;
        }
      };
      for (const until = Date.now() + 5000; !(await holds());) {
        if (Date.now() > until) throw new Error('condition not met within 5 s');
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    /** Bytes of a version's shard files, from its version.json. */
    const shardBytes = async (store: ObjectStore, version: string): Promise<number> => {
      const toc = JSON.parse(Buffer.from((await store.get(indexLayout.toc(version)))!).toString('utf8')) as { files: Record<string, { size: number }> };
      return Object.entries(toc.files).reduce((a, [name, f]) => a + (name.endsWith('.bin') ? f.size : 0), 0);
    };
    const shardFiles = (version: string, n: number): string[] =>
      Array.from({ length: n }, (_, k) => ['domains', 'domain-datasets', 'postings', 'facts'].map((f) => indexLayout.versionFile(version, `${f}-${String(k).padStart(4, '0')}.bin`))).flat().sort();

    it('answers as the resident index does; a version let go of loses its copies after the grace period, the source its directory when it closes', async () => {
      const urls = ['https://a.example/1', 'https://a.example/2', 'https://b.example/x', 'https://c.example/', 'https://www.d.example/p'];
      const { store, merge } = await oneVersion(urls, { keepVersions: 1, indexShards: { maxDomains: 2 } });
      const staged = await openIndexSource({ store, pollMs: 0, indexReads: 'files', indexCacheDir: cache, retireGraceMs: 1000 }); // long enough for a loaded machine between the flip and the read below
      const resident = await openIndexSource({ store, pollMs: 0 });
      try {
        const [v1, r1] = [(await staged.current())!, (await resident.current())!];
        expect(v1.residentBytes).toBeLessThan(r1.residentBytes);
        for (const d of ['a.example', 'b.example', 'c.example', 'd.example', 'bb.example', 'zz.example']) {
          expect(v1.domain(d)).toEqual(r1.domain(d));
          expect(await v1.urls(d, 1, 0, 10)).toEqual(await r1.urls(d, 1, 0, 10));
        }
        expect(v1.domain('a.example')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 2 }]);
        // one directory of the source's own, one per load of a version: the version's two shards (four domains), nothing else
        const [root] = await readdir(cache);
        expect(root).toMatch(/^ccpipe-index-/);
        expect(await cached()).toEqual(shardFiles('v000001', 2).map((k) => `${root}/v000001-1/${k}`));

        await putUrls(store, 'b2', ['https://e.example/'], '20300102000000');
        await runMerge(merge); // keepVersions 1: v000001 leaves the manifest
        const v2 = (await staged.current())!;
        expect(v1.domain('a.example')).not.toBeNull(); // within the grace period a request holding v1 still reads
        expect(v2.version).toBe('v000002');
        expect(v2.domain('e.example')).toEqual((await resident.current())!.domain('e.example'));
        await eventually(async () => (await cached()).every((f) => f.startsWith(`${root}/v000002-2/`)));
        expect(() => v1.domain('a.example')).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_CLOSED' }));
        expect(await cached()).toEqual(shardFiles('v000002', 3).map((k) => `${root}/v000002-2/${k}`));
        await staged.close();
        expect(await readdir(cache)).toEqual([]);
        expect(() => v2.domain('e.example')).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_CLOSED' }));
      } finally {
        await staged.close();
        await resident.close();
      }
    });

    it('a damaged shard in the store: the version is refused (CRC) and its copies deleted; the view at hand keeps serving, a fresh source serves the older version', async () => {
      const { store, merge } = await oneVersion(['https://a.example/1', 'https://b.example/2'], { indexShards: { maxDomains: 1 } });
      const staged = await openIndexSource({ store, pollMs: 0, indexReads: 'files', indexCacheDir: cache, onError: () => undefined });
      try {
        const v1 = (await staged.current())!;
        await putUrls(store, 'b2', ['https://c.example/'], '20300102000000');
        await runMerge(merge);
        const key = indexLayout.versionFile('v000002', 'postings-0001.bin');
        const b = Buffer.from((await store.get(key))!);
        b.writeUInt8(b.readUInt8(b.length - 1) ^ 0xff, b.length - 1);
        await store.put(key, b);
        expect(await staged.current()).toBe(v1);
        const [root] = await readdir(cache);
        expect(await cached()).toEqual(shardFiles('v000001', 2).map((k) => `${root}/v000001-1/${k}`));
        // a fresh source serves the newest intact older version meanwhile; the damaged version's copies are deleted
        const fresh = await openIndexSource({ store, pollMs: 0, indexReads: 'files', indexCacheDir: cache, onError: () => undefined });
        expect((await fresh.current())!.version).toBe('v000001');
        expect(fresh.loadFailure()).toMatchObject({ version: 'v000002', code: 'CCP_ERR_INDEX_CRC' });
        const freshRoot = (await readdir(cache)).find((d) => d !== root)!;
        const freshFiles = (await cached()).filter((f) => f.startsWith(`${freshRoot}/`));
        expect(freshFiles.map((f) => f.split('/').slice(2).join('/'))).toEqual(shardFiles('v000001', 2));
        expect(freshFiles.every((f) => f.split('/')[1]!.startsWith('v000001-'))).toBe(true);
        await fresh.close();
        expect(await readdir(cache)).toEqual([root]);
      } finally {
        await staged.close();
      }
    });

    it('a store wiped and rebuilt under the same version name is staged anew, beside the old copies still open', async () => {
      const { store, merge } = await oneVersion(['https://a.example/1', 'https://b.example/x']);
      const staged = await openIndexSource({ store, pollMs: 0, indexReads: 'files', indexCacheDir: cache, retireGraceMs: 60_000 });
      try {
        const old = (await staged.current())!;
        const keys: string[] = [];
        for await (const o of store.list('')) keys.push(o.key);
        for (const k of keys) await store.delete(k);
        await putUrls(store, 'c1', ['https://a.example/9', 'https://a.example/8', 'https://z.example/'], '20300105000000');
        expect((await runMerge(merge)).version).toBe('v000001');
        const v = (await staged.current())!;
        expect(v).not.toBe(old);
        expect(v.domain('a.example')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 2 }]);
        expect(old.domain('a.example')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 1 }]); // its own copies, still open
      } finally {
        await staged.close();
      }
      expect(await readdir(cache)).toEqual([]);
    });

    it('close() closes the views still in their grace period and removes every copy', async () => {
      const { store, merge } = await oneVersion(['https://a.example/1'], { keepVersions: 1 });
      const staged = await openIndexSource({ store, pollMs: 0, indexReads: 'files', indexCacheDir: cache, retireGraceMs: 60_000 });
      const v1 = (await staged.current())!;
      await putUrls(store, 'b2', ['https://b.example/'], '20300102000000');
      await runMerge(merge);
      expect((await staged.current())!.version).toBe('v000002');
      expect(v1.domain('a.example')).not.toBeNull(); // retired, waiting out its grace period
      await staged.close();
      expect(() => v1.domain('a.example')).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_CLOSED' }));
      expect(await readdir(cache)).toEqual([]);
    });

    it('close() during a copy aborts it, waits for the load to settle and leaves nothing behind', async () => {
      const { store } = await oneVersion(['https://a.example/1', 'https://b.example/2'], { indexShards: { maxDomains: 1 } });
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let reads = 0;
      const slow = withMethods(store, {
        getRange: async (key, offset, length) => {
          if (key.endsWith('.bin') && reads++ >= 1) await gate; // every shard file but the first waits
          return store.getRange(key, offset, length);
        },
      });
      const staged = await openIndexSource({ store: slow, pollMs: 0, indexReads: 'files', indexCacheDir: cache });
      const first = staged.current();
      await eventually(() => reads >= 5); // four copies at a time: the first done, the next four waiting on a read
      const closed = staged.close();
      release();
      await closed;
      // the copies under way finish their chunk; the sixth file is not started
      await expect(first).rejects.toMatchObject({ code: 'CCP_ERR_ABORTED' });
      expect(reads).toBe(5);
      expect(await readdir(cache)).toEqual([]);
    });

    it('copies count against pinnedBytes by their size on disk: an older version that does not fit beside the one in use is gone, not copied', async () => {
      const store = new MemoryObjectStore();
      const merge: MergeOptions = { store, rowGroupSize: 2048, keepVersions: 5, graceMs: 0 };
      for (const [i, id] of ['b1', 'b2', 'b3'].entries()) {
        await putUrls(store, id, [`https://a${i}.example/`]);
        await runMerge(merge);
      }
      // room for one version's copies, far more than the name samples a view holds in memory
      const staged = await openIndexSource({ store, pollMs: 0, indexReads: 'files', indexCacheDir: cache, pinnedBytes: await shardBytes(store, 'v000002') + 1 });
      try {
        expect((await staged.current())!.version).toBe('v000003');
        expect(await staged.at('v000002')).not.toBeNull();
        expect(await staged.at('v000001')).toBeNull();
        expect((await dirs()).filter((d) => /\/v00000\d-\d+$/.test(d)).map((d) => d.split('/')[1])).toEqual(['v000002-2', 'v000003-1']);
      } finally {
        await staged.close();
      }
    });

    it('a directory of copies untouched for longer than the stale age (a process that is gone) is removed at open and reported', async () => {
      const old = new Date(Date.now() - 10 * 60_000);
      await mkdir(join(cache, 'ccpipe-index-gone', 'v000001-1'), { recursive: true });
      await writeFile(join(cache, 'ccpipe-index-gone', 'owner.json'), JSON.stringify({ kind: 'ccpipe-stage', host: 'elsewhere', pid: 1 }));
      await utimes(join(cache, 'ccpipe-index-gone', 'owner.json'), old, old);
      const { store } = await oneVersion(['https://a.example/1']);
      const removed: string[] = [];
      const staged = await openIndexSource({ store, pollMs: 0, indexReads: 'files', indexCacheDir: cache, onStaleCopies: (d) => removed.push(d) });
      try {
        expect(removed).toEqual([join(cache, 'ccpipe-index-gone')]); // the helper's dir is a real path already
        expect((await readdir(cache)).filter((n) => n === 'ccpipe-index-gone')).toEqual([]);
      } finally {
        await staged.close();
      }
    });

    it('an indexCacheDir that cannot be created is refused at open', async () => {
      const file = join(cache, 'not-a-dir');
      await writeFile(file, 'x');
      await expect(openIndexSource({ store: new MemoryObjectStore(), indexReads: 'files', indexCacheDir: join(file, 'sub') }))
        .rejects.toMatchObject({ code: 'CCP_ERR_INDEX_OPTIONS', message: expect.stringMatching(/indexCacheDir/) });
    });
  });

  it('a version that fails to load with nothing served yet: told to onError once, the same error again without reading the store during the pause; an unreadable manifest is told as such', async () => {
    const { store } = await oneVersion(['https://a.example/1', 'https://b.example/2']);
    const key = indexLayout.versionFile('v000001', 'postings-0000.bin');
    const good = Buffer.from((await store.get(key))!);
    const bad = Buffer.from(good);
    bad.writeUInt8(bad.readUInt8(bad.length - 1) ^ 0xff, bad.length - 1);
    await store.put(key, bad);
    let reads = 0;
    let manifestDown = false;
    const watched = withMethods(store, {
      get: async (k) => {
        if (k === key) reads++;
        if (manifestDown && k === 'index/manifest.json') throw Object.assign(new Error('store down'), { code: 'CCP_ERR_STORE_IO' });
        return store.get(k);
      },
    });
    const told: [string, string][] = [];
    const source = await openIndexSource({ store: watched, pollMs: 0, onError: (err, what) => told.push([(err as { code: string }).code, what]) });
    try {
      await expect(source.current()).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC' });
      await expect(source.current()).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC' });
      await expect(source.at('v000001')).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC' }); // nothing to serve at all
      expect([reads, told]).toEqual([1, [['CCP_ERR_INDEX_CRC', 'load']]]);
      // repaired, and the pause over: served
      await store.put(key, good);
      const now = Date.now() + 10_001;
      const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
      try {
        expect((await source.current())!.version).toBe('v000001');
        // the store goes down: the view at hand keeps answering, the failure is told as the manifest's
        manifestDown = true;
        expect((await source.current())!.version).toBe('v000001');
        expect(told).toEqual([['CCP_ERR_INDEX_CRC', 'load'], ['CCP_ERR_STORE_IO', 'manifest']]);
      } finally {
        clock.mockRestore();
      }
    } finally {
      await source.close();
    }
  });

  it('a damaged current version with nothing served yet: the newest intact older version is served meanwhile, the failure named; the current one once repaired', async () => {
    const { store, merge } = await oneVersion(['https://a.example/1']);
    await putUrls(store, 'b2', ['https://b.example/2']);
    await runMerge(merge);
    const key = indexLayout.versionFile('v000002', 'postings-0000.bin');
    const good = Buffer.from((await store.get(key))!);
    const bad = Buffer.from(good);
    bad.writeUInt8(bad.readUInt8(bad.length - 1) ^ 0xff, bad.length - 1);
    await store.put(key, bad);
    const told: [string, string][] = [];
    const source = await openIndexSource({ store, pollMs: 0, onError: (err, what) => told.push([(err as { code: string }).code, what]) });
    try {
      const v = await source.current();
      expect(v!.version).toBe('v000001');
      expect(await urlsOf(v, 'a.example')).toEqual(['https://a.example/1']);
      expect(source.loadFailure()).toMatchObject({ version: 'v000002', code: 'CCP_ERR_INDEX_CRC' });
      expect(told).toEqual([['CCP_ERR_INDEX_CRC', 'load']]);
      expect((await source.current())!.version).toBe('v000001'); // during the pause: the store is not read again
      await store.put(key, good);
      const now = Date.now() + 10_001;
      const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
      try {
        expect((await source.current())!.version).toBe('v000002');
        expect(source.loadFailure()).toBeNull();
      } finally {
        clock.mockRestore();
      }
    } finally {
      await source.close();
    }
  });

  it('a store wiped and rebuilt under the same version name is served anew, not from the caches of the old lake', async () => {
    const { store, merge } = await oneVersion(['https://a.example/1', 'https://a.example/2', 'https://b.example/x']);
    const source = await openIndexSource({ store, pollMs: 0 });
    try {
      expect(await urlsOf(await source.current(), 'a.example')).toEqual(['https://a.example/1', 'https://a.example/2']);
      // the operator rebuilds (e.g. to change --lake-columns): wipe, re-ingest other captures, merge → v000001 again
      const keys: string[] = [];
      for await (const o of store.list('')) keys.push(o.key);
      for (const k of keys) await store.delete(k);
      await putUrls(store, 'c1', ['https://a.example/9', 'https://b.example/y'], '20300105000000');
      expect((await runMerge(merge)).version).toBe('v000001');
      const v = await source.current();
      expect(v!.version).toBe('v000001');
      expect(v!.domain('a.example')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 1 }]);
      expect(await urlsOf(v, 'a.example')).toEqual(['https://a.example/9']);
    } finally {
      await source.close();
    }
  });

  it('at(): a version newer than this replica has polled is looked up in the manifest, not answered as gone', async () => {
    const { store, merge } = await oneVersion(['https://a.example/1']);
    const replica = await openIndexSource({ store, pollMs: 60_000 });
    try {
      expect((await replica.current())!.version).toBe('v000001');
      await putUrls(store, 'b2', ['https://a.example/2']);
      expect((await runMerge(merge)).version).toBe('v000002'); // another replica serves it already
      const pinned = await replica.at('v000002');
      expect(pinned?.version).toBe('v000002');
      expect(await urlsOf(pinned, 'a.example')).toEqual(['https://a.example/1', 'https://a.example/2']);
      expect((await replica.current())!.version).toBe('v000001'); // its own poll schedule is unchanged
      expect(await replica.at('v000009')).toBeNull(); // a version that does not exist
    } finally {
      await replica.close();
    }
  });
  it('warmUp: a version loaded reads a few pages before it serves; a lake it cannot read does not keep it from serving', async () => {
    const { store, merge } = await oneVersion(['https://a.example/1', 'https://a.example/2', 'https://b.example/x', 'https://c.example/y']);
    const cold = await openIndexSource({ store, pollMs: 0 });
    const warm = await openIndexSource({ store, pollMs: 0, warmUp: true });
    try {
      await cold.current();
      await warm.current();
      expect(cold.cacheStats()!.misses).toBe(0); // nothing read until a request asks
      const warmed = warm.cacheStats()!.misses;
      expect(warmed).toBeGreaterThan(0); // the warm-up decoded row groups
      // a flip is not warmed: requests waiting for the new version never wait on lake reads
      await putUrls(store, 'b2', ['https://d.example/z']);
      await runMerge(merge);
      expect((await warm.current())!.version).toBe('v000002');
      expect(warm.cacheStats()!.misses).toBe(warmed);
    } finally {
      await cold.close();
      await warm.close();
    }
    // a lake read that never answers holds the first version back for warmUpMs at most
    const stuck = withMethods(store, {
      getRange: (key, offset, length) => (key.startsWith('urls/') ? new Promise(() => undefined) : store.getRange(key, offset, length)),
    });
    const slow = await openIndexSource({ store: stuck, pollMs: 0, warmUp: true, warmUpMs: 50 });
    try {
      expect((await slow.current())!.domain('a.example')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 2 }]);
    } finally {
      await slow.close();
    }
    // the lake's files are gone (a damaged store): the warm-up fails, the version still serves its domain counts
    for await (const o of store.list('urls/')) await store.delete(o.key);
    const broken = await openIndexSource({ store, pollMs: 0, warmUp: true });
    try {
      const v = await broken.current();
      expect(v!.domain('a.example')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 2 }]);
      await expect(v!.urls('a.example', 1, 0, 10)).rejects.toThrow();
    } finally {
      await broken.close();
    }
  });
  /** A store whose dictionary fetches are listed: the versions the source (not the merger) loaded. */
  const watchedStore = (store: MemoryObjectStore, loads: string[]): MemoryObjectStore =>
    withMethods(store, {
      get: async (key) => {
        if (key.endsWith('/domains-0000.bin')) loads.push(key.split('/')[1]!);
        return store.get(key);
      },
    });

  it('a flip keeps the replaced view at hand for at(); an older version that does not fit beside views in use is gone (null), not reloaded in turn', async () => {
    const store = new MemoryObjectStore();
    const loads: string[] = [];
    const merge: MergeOptions = { store, rowGroupSize: 2048, keepVersions: 5, graceMs: 0 };
    const source = await openIndexSource({ store: watchedStore(store, loads), pollMs: 0, pinnedBytes: 1 });
    let now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    try {
      for (const [i, id] of ['b1', 'b2', 'b3'].entries()) {
        await putUrls(store, id, [`https://a.example/${i}`]);
        await runMerge(merge);
        await source.current();
      }
      expect(loads).toEqual(['v000001', 'v000002', 'v000003']);
      // v2, replaced by v3 a moment ago, is still loaded: a client paging on it is not made to wait for a reload
      expect(await urlsOf(await source.at('v000002'), 'a.example')).toEqual(['https://a.example/0', 'https://a.example/1']);
      expect(loads).toHaveLength(3);
      // a 1-byte budget holds v2 alone: v1 was dropped when v2 joined, and while v2 is in use v1 is gone, not loaded
      // (two clients alternating pages on v1 and v2 made the replica load a whole version per page)
      for (let k = 0; k < 3; k++) {
        expect(await source.at('v000001')).toBeNull();
        expect(await source.at('v000002')).not.toBeNull();
      }
      expect(loads).toHaveLength(3);
      // once v2 has been idle for a minute, v1 may take its room
      now += 61_000;
      expect(await urlsOf(await source.at('v000001'), 'a.example')).toEqual(['https://a.example/0']);
      expect(loads).toEqual(['v000001', 'v000002', 'v000003', 'v000001']);
    } finally {
      clock.mockRestore();
      await source.close();
    }
  });

  it('a version reached through at() before this replica polls is not loaded again when the replica flips to it', async () => {
    const { store, merge } = await oneVersion(['https://a.example/1'], { graceMs: 60_000 });
    const loads: string[] = [];
    let now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
    const source = await openIndexSource({ store: watchedStore(store, loads), pollMs: 1000 });
    try {
      expect((await source.current())!.version).toBe('v000001');
      await putUrls(store, 'b2', ['https://a.example/2']);
      await runMerge(merge);
      const early = (await source.at('v000002'))!; // a pinned page on a replica that has not polled yet
      expect((await source.current())!.version).toBe('v000001');
      now += 2000;
      expect(await source.current()).toBe(early); // the poll flips to the view at() loaded
      expect(loads).toEqual(['v000001', 'v000002']);
      expect(await urlsOf(await source.at('v000001'), 'a.example')).toEqual(['https://a.example/1']); // the replaced view, kept
      expect(loads).toHaveLength(2);
    } finally {
      clock.mockRestore();
      await source.close();
    }
  });
  it('serveWhileLoading: requests keep the served version while a new one loads, and see the new one once it has', async () => {
    const { store, merge } = await oneVersion(['https://a.example/1']);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const slow = withMethods(store, {
      get: async (key) => {
        if (key === 'index/v000002/postings-0000.bin') await gate; // v2's load hangs until released
        return store.get(key);
      },
    });
    const waiting = await openIndexSource({ store: slow, pollMs: 0 });
    const serving = await openIndexSource({ store: slow, pollMs: 0, serveWhileLoading: true });
    try {
      expect((await serving.current())!.version).toBe('v000001'); // nothing to serve yet: the first load is awaited
      await putUrls(store, 'b2', ['https://a.example/2']);
      await runMerge(merge);
      let waited = false;
      const blocked = waiting.current().then((v) => ((waited = true), v));
      for (let k = 0; k < 3; k++) expect((await serving.current())!.version).toBe('v000001');
      await new Promise((r) => setTimeout(r, 20));
      expect(waited).toBe(false); // the default: the caller waits for the load
      release();
      expect((await blocked)!.version).toBe('v000002');
      let v = (await serving.current())!.version;
      for (let k = 0; k < 50 && v !== 'v000002'; k++) {
        await new Promise((r) => setTimeout(r, 10));
        v = (await serving.current())!.version;
      }
      expect(v).toBe('v000002');
    } finally {
      release();
      await waiting.close();
      await serving.close();
    }
  });
});
