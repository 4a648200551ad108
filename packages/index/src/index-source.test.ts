import { canonicalizeUrl, layout, urlId, type ObjectStore } from '@ccpipe/core';
import { MemoryObjectStore, closeDuckDbParquetEngine, writeParquetPart, type PartRow } from '@ccpipe/adapters';
import { openIndexSource } from './index-source';
import { runMerge, type MergeOptions } from './run-merge';

afterAll(() => closeDuckDbParquetEngine());

function row(raw: string, ts: string): PartRow {
  const c = canonicalizeUrl(raw);
  return {
    datasetId: 1, urlId: urlId(c.url), url: c.url, rawUrl: raw, host: c.host, domain: c.domain ?? c.host, privateDomain: c.privateDomain, surt: c.surt,
    timestamp: ts, status: 200, mime: 'text/html', charset: null, languages: null, title: 't', text: null, contentLength: 10, outlinks: [],
    warcFilename: 'crawl-data/x.warc.gz', warcOffset: 0, warcLength: 100, digest: 'AAAA',
  };
}

async function putBatch(s: ObjectStore, id: string, urls: string[], ts = '20300101000000'): Promise<void> {
  const part = layout.batchPart(1, id);
  await s.put(part, await writeParquetPart(urls.map((u) => row(u, ts)), { engine: 'duckdb' }));
  await s.put(layout.batchMarker(1, id), Buffer.from(JSON.stringify({ v: 1, batchId: id, datasetId: 1, rows: urls.length, part })));
}

/** A memory store holding version v000001 of `urls` (batch b1), and the merge options that made it. */
async function oneVersion(urls: string[], over: Partial<MergeOptions> = {}): Promise<{ store: MemoryObjectStore; merge: MergeOptions }> {
  const store = new MemoryObjectStore();
  const merge: MergeOptions = { store, rowGroupSize: 2048, keepVersions: 3, graceMs: 0, ...over };
  await putBatch(store, 'b1', urls);
  await runMerge(merge);
  return { store, merge };
}

/** `store` with some methods replaced: a store that is slow, stuck or watched on some keys. */
const withMethods = (store: MemoryObjectStore, methods: Partial<MemoryObjectStore>): MemoryObjectStore =>
  Object.assign(Object.create(store) as MemoryObjectStore, methods);

const urlsOf = async (v: { urls(d: string, ds: number, o: number, l: number): Promise<{ items: { url: string }[] }> } | null, domain: string) =>
  (await v!.urls(domain, 1, 0, 100)).items.map((i) => i.url);

describe('openIndexSource', () => {
  it("indexReads 'files' on a store without local files is refused at open, naming what it needs", async () => {
    await expect(openIndexSource({ store: new MemoryObjectStore(), indexReads: 'files' })).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_OPTIONS', message: expect.stringMatching(/local files/) });
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
      await putBatch(store, 'c1', ['https://a.example/9', 'https://b.example/y'], '20300105000000');
      expect((await runMerge(merge)).version).toBe('v000001');
      const v = await source.current();
      expect(v!.version).toBe('v000001');
      expect(v!.domain('a.example')!.datasets).toEqual([{ datasetId: 1, urlCount: 1 }]);
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
      await putBatch(store, 'b2', ['https://a.example/2']);
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
      await putBatch(store, 'b2', ['https://d.example/z']);
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
      expect((await slow.current())!.domain('a.example')!.datasets).toEqual([{ datasetId: 1, urlCount: 2 }]);
    } finally {
      await slow.close();
    }
    // the lake's files are gone (a damaged store): the warm-up fails, the version still serves its domain counts
    for await (const o of store.list('urls/')) await store.delete(o.key);
    const broken = await openIndexSource({ store, pollMs: 0, warmUp: true });
    try {
      const v = await broken.current();
      expect(v!.domain('a.example')!.datasets).toEqual([{ datasetId: 1, urlCount: 2 }]);
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
        await putBatch(store, id, [`https://a.example/${i}`]);
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
      await putBatch(store, 'b2', ['https://a.example/2']);
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
      await putBatch(store, 'b2', ['https://a.example/2']);
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
