import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalizeUrl, urlId, type ObjectStore } from '@ccpipe/core';
import { FsObjectStore, MemoryObjectStore, S3ObjectStore, closeDuckDbParquetEngine, type PartRow } from '@ccpipe/adapters';
import { S3RVER_CREDENTIALS, startS3TestServer } from '@ccpipe/adapters/store/s3-test-server';
import { startApi } from '@ccpipe/api';
import { openIndexSource } from './index-source';
import type { LakeIndexView } from './lake-index-view';
import { runMerge } from './run-merge';
import { putBatch } from '../../../tests/support/batches';

// The read side over real merges: a client walks a domain's URLs while a merge adds URLs to the same
// (domain, dataset). Lake files are read through the ObjectStore only (no dataDir), also from a MemoryObjectStore.

let dir: string;
let store: FsObjectStore;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-lake-view-'));
  store = new FsObjectStore({ root: dir });
});
afterAll(async () => {
  await closeDuckDbParquetEngine();
  await rm(dir, { recursive: true, force: true });
});

function row(raw: string, i: number): PartRow {
  const c = canonicalizeUrl(raw);
  return {
    datasetId: 1, urlId: urlId(c.url), url: c.url, rawUrl: raw, host: c.host, domain: c.domain ?? c.host, privateDomain: c.privateDomain, surt: c.surt,
    timestamp: '20300101000000', status: i % 9 === 0 ? 301 : 200, mime: 'text/html', charset: null, languages: null, title: i % 4 === 0 ? null : `page ${i}`,
    text: i % 3 === 0 ? null : 'naïve text', contentLength: 10, outlinks: [], outlinkDomains: [], warcFilename: `crawl-data/w${i % 5}.warc.gz`, warcOffset: i * 977, warcLength: 300 + i,
    digest: 'AAAA',
  };
}


const url = (i: number): string => `https://www.example.com/p/${String(i).padStart(5, '0')}`;
const merge = async (): Promise<string> => {
  const r = await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 3, graceMs: 60_000 });
  if (r.version === null) throw new Error('no version published');
  return r.version;
};

/** Every URL of example.com in dataset 1, walking pages of `limit` from the view `at()` gives for each page. */
async function walk(at: () => Promise<LakeIndexView | null>, limit: number, between?: (page: number) => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  for (let off = 0, page = 0; ; off += limit, page++) {
    await between?.(page);
    const p = await (await at())!.urls('example.com', 1, off, limit);
    if (p.items.length === 0) return seen;
    seen.push(...p.items.map((i) => i.url));
  }
}

describe('LakeIndexView over merged versions, read through the ObjectStore', () => {
  const v1Urls = Array.from({ length: 5000 }, (_, i) => url(2 * i)); // even numbers: > 2 row groups
  const added = Array.from({ length: 1500 }, (_, i) => url(2 * i + 1)); // odd numbers interleave from the start
  // v2 keeps v1's file and adds a run of its own (1,500 rows do not outweigh 5,000): pages are v1's rows, then the
  // added ones, each run sorted by URL.
  const v2Urls = [...v1Urls, ...added];

  it('a walk pinned to its version sees exactly that version while a merge adds URLs to the same domain; a fresh walk sees the new set', async () => {
    await putBatch(store, 1, 'b1', v1Urls.map(row));
    const v1 = await merge();
    const src = await openIndexSource({ store, pollMs: 0 });
    try {
      let v2 = '';
      const pinned = await walk(() => src.at(v1), 300, async (page) => {
        if (page !== 3) return;
        await putBatch(store, 1, 'b2', added.map((u, i) => row(u, i + 7)));
        v2 = await merge();
        expect((await src.current())!.version).toBe(v2);
      });
      expect(v2).not.toBe('');
      expect(pinned).toEqual(v1Urls); // every old URL once, in order: nothing of v2 leaked in, nothing shifted
      expect(await walk(() => src.current(), 300)).toEqual(v2Urls);
      expect((await src.at(v1))!.version).toBe(v1);
      expect(await src.at('v999999')).toBeNull();
    } finally {
      await src.close();
    }
  }, 120_000);

  it('paging over HTTP across a flip: each response is entirely from the version its X-Index-Version names', async () => {
    const src = await openIndexSource({ store, pollMs: 0 });
    const server = await startApi({ source: src, port: 0 });
    const sets = new Map<string, string[]>();
    const seen = new Set<string>();
    try {
      const v2 = (await src.current())!.version;
      sets.set(v2, v2Urls);
      let v3 = '';
      const more = Array.from({ length: 700 }, (_, i) => url(20_000 + i));
      for (let off = 0, page = 0; off < v2Urls.length + more.length; off += 400, page++) {
        if (page === 4) {
          await putBatch(store, 1, 'b3', more.map((u, i) => row(u, i)));
          v3 = await merge();
          sets.set(v3, [...v2Urls, ...more]); // a third run
        }
        const res = await fetch(`${server.url}/v1/domain/example.com/datasets/1/urls?offset=${off}&limit=400`);
        const body = (await res.json()) as { total: number; items: { url: string }[] };
        const v = res.headers.get('x-index-version')!;
        seen.add(v);
        const want = sets.get(v)!;
        expect([v, body.total, body.items.map((i) => i.url)]).toEqual([v, want.length, want.slice(off, off + 400)]);
      }
      expect([...seen]).toEqual([v2, v3]);
    } finally {
      await server.close();
      await src.close();
    }
  }, 120_000);

  it('answers the same from a MemoryObjectStore copy of the lake as the DuckDB reader over the directory', async () => {
    const mem = new MemoryObjectStore();
    for await (const o of store.list('')) await mem.put(o.key, (await store.get(o.key))!);
    const fromMem = await openIndexSource({ store: mem, pollMs: 0 });
    const duck = await openIndexSource({ store, dataDir: dir, pollMs: 0, lakeReader: 'duckdb' });
    try {
      const [a, b] = [(await fromMem.current())!, (await duck.current())!];
      expect(a.version).toBe(b.version);
      for (const [off, limit] of [[0, 100], [2000, 100], [4090, 20], [4990, 20], [6000, 1000]] as const) {
        expect(await a.urls('example.com', 1, off, limit)).toEqual(await b.urls('example.com', 1, off, limit));
      }
      for (const u of [url(0), url(3), url(4242), url(20_005), url(99_999)]) expect(await a.captures(u)).toEqual(await b.captures(u));
      expect((await a.captures(url(3))).length).toBe(1);
      expect(fromMem.cacheStats()!.entries).toBeGreaterThan(0);
      expect(duck.cacheStats()).toBeUndefined();
    } finally {
      await fromMem.close();
      await duck.close();
    }
  }, 120_000);

  it('serves the same pages and captures from an S3 copy of the lake (s3rver, ranged GETs)', async () => {
    const s3 = await startS3TestServer();
    const remote = new S3ObjectStore({ bucket: 'lake', prefix: 'data', endpoint: s3.endpoint, credentials: S3RVER_CREDENTIALS });
    try {
      await s3.createBucket('lake');
      for await (const o of store.list('')) await remote.put(o.key, (await store.get(o.key))!);
      const fromS3 = await openIndexSource({ store: remote, pollMs: 0 });
      // the domain index read in place from copies of its shard files staged out of S3
      const cacheDir = await mkdtemp(join(tmpdir(), 'ccpipe-s3-index-'));
      const stagedFromS3 = await openIndexSource({ store: remote, pollMs: 0, indexReads: 'files', indexCacheDir: cacheDir });
      const local = await openIndexSource({ store, pollMs: 0 });
      try {
        const [a, b, c] = [(await fromS3.current())!, (await local.current())!, (await stagedFromS3.current())!];
        expect(a.version).toBe(b.version);
        expect(c.version).toBe(b.version);
        for (const d of ['example.com', 'nowhere.example']) {
          expect(a.domain(d)).toEqual(b.domain(d));
          expect(c.domain(d)).toEqual(b.domain(d));
        }
        for (const [off, limit] of [[0, 100], [2040, 30], [7000, 1000]] as const) {
          expect(await a.urls('example.com', 1, off, limit)).toEqual(await b.urls('example.com', 1, off, limit));
          expect(await c.urls('example.com', 1, off, limit)).toEqual(await b.urls('example.com', 1, off, limit));
        }
        expect(await a.captures(url(4243))).toEqual(await b.captures(url(4243)));
        expect(await c.captures(url(4243))).toEqual(await b.captures(url(4243)));
        expect((await readdir(cacheDir, { recursive: true })).some((f) => f.endsWith('domains-0000.bin'))).toBe(true);
      } finally {
        await fromS3.close();
        await stagedFromS3.close();
        await local.close();
        const left = await readdir(cacheDir);
        await rm(cacheDir, { recursive: true, force: true });
        expect(left).toEqual([]);
      }
    } finally {
      await remote.close();
      await s3.close();
    }
  }, 120_000);
});
