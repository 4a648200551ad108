import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CcpError, layout, urlId, urlIdHex, type ObjectStore } from '@ccpipe/core';
import { FsObjectStore, MemoryObjectStore, closeDuckDbParquetEngine, type PartRow } from '@ccpipe/adapters';
import { readParquetRows } from '../../../tests/support/parquet';
import { RecordingStore } from '../../../tests/support/recording-store';
import { partRow, putBatch } from '../../../tests/support/batches';
import { indexLayout, type LakeFileEntry } from './format';
import { openIndexSource } from './index-source';
import { LAKE_API_COLUMNS, LAKE_LEAN_COLUMNS } from './lake-write';
import { runMerge, type MergeOptions } from './run-merge';
import { MergeCache } from './merge-cache';
import { tempDirEach } from '../../../tests/support/temp-dir';

afterAll(async () => {
  await closeDuckDbParquetEngine();
});

const row = (datasetId: number, raw: string, ts: string, over: Partial<PartRow> = {}): PartRow => partRow(datasetId, raw, ts, { text: null, ...over });

/** A MemoryObjectStore that records which keys were read by range (the staging path). */

const batch1 = [
  ...Array.from({ length: 300 }, (_, i) => row(1, `https://www.example.com/a/${String(i).padStart(3, '0')}`, '20300101000000')),
  row(1, 'HTTP://Other.ORG/x?b=2&a=1', '20300101000000'), // canonical form differs from the raw URL
  // more .com domains: sequential ids, so other partitions than www.example.com's, which batch2 does not touch
  row(1, 'https://second-site.com/', '20300101000000'),
  row(1, 'https://third-site.com/', '20300101000000'),
];
const batch2 = [row(1, 'https://www.example.com/a/007', '20300102000000', { status: 404 }), row(1, 'https://new.example/', '20300102000000')];

/** Keys of lake and index objects a version wrote (written before its manifest flip, so present even if it failed). */
async function keysOfVersion(store: ObjectStore, version: string): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of ['urls/', 'index/']) for await (const x of store.list(prefix)) if (x.key.includes(version)) keys.push(x.key);
  return keys;
}

/** Lake rows of the current version, per file key, read from the store. */
async function lakeRows(store: ObjectStore, version: string): Promise<Record<string, Record<string, unknown>[]>> {
  const files = JSON.parse(Buffer.from((await store.get(indexLayout.versionFile(version, 'files.json')))!).toString('utf8')) as LakeFileEntry[];
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const f of files) out[f.key] = await readParquetRows((await store.get(f.key))!);
  return out;
}

describe('runMerge through an ObjectStore without a local directory', () => {
  let dir: string;
  tempDirEach('ccpipe-merge-store-', (d) => (dir = d));

  it('stages parts and rewritten lake files by ranged reads and writes the same lake as an in-place merge', async () => {
    const mem = new RecordingStore();
    const fs = new FsObjectStore({ root: dir });
    const base = { rowGroupSize: 2048, keepVersions: 2, graceMs: 0, now: () => new Date('2030-01-03T00:00:00Z'), lakeColumns: 'api' } satisfies Partial<MergeOptions>;
    for (const s of [mem, fs]) await putBatch(s, 1, 'b1', batch1);
    const r1 = await runMerge({ ...base, store: mem });
    await runMerge({ ...base, store: fs, dataDir: dir });
    expect(r1).toMatchObject({ version: 'v000001', rowsIn: 303, urls: 303 });
    expect(new Set(mem.ranges.map((r) => r.key))).toContain(layout.batchPart(1, 'b1'));
    const v1Files = Object.keys(await lakeRows(mem, 'v000001'));

    mem.ranges = [];
    for (const s of [mem, fs]) await putBatch(s, 1, 'b2', batch2);
    const r2 = await runMerge({ ...base, store: mem });
    await runMerge({ ...base, store: fs, dataDir: dir });
    expect(r2).toMatchObject({ version: 'v000002', rowsIn: 2, urls: 304 });
    // Staged: the new part, every lake file of v1 — the collision check reads the whole lake's url_id/url (the
    // one merge input that grows with the lake, docs/s3.md); v1 has files b2 does not touch, so this is not vacuous —
    // and v1's domain index shard, which the merge reads from its local copy one shard at a time.
    expect(v1Files.length).toBeGreaterThanOrEqual(2);
    const v1Shard = ['domains-0000.bin', 'domain-datasets-0000.bin', 'postings-0000.bin', 'facts-0000.bin'].map((f) => indexLayout.versionFile('v000001', f));
    // — and the lake files it wrote, read back for the dataset's orderings (without a merge cache nothing keeps them)
    const read = [...new Set(mem.ranges.map((r) => r.key))].sort();
    const v2New = Object.keys(await lakeRows(mem, 'v000002')).filter((k) => !v1Files.includes(k));
    expect(v2New.length).toBeGreaterThan(0);
    expect(read).toEqual([layout.batchPart(1, 'b2'), ...v1Files, ...v1Shard, ...v2New].sort());
    expect(r2.rewrittenFiles).toBeLessThan(v1Files.length);

    const memLake = await lakeRows(mem, 'v000002');
    expect(memLake).toEqual(await lakeRows(fs, 'v000002'));
    const rows = Object.values(memLake).flat();
    expect(Object.keys(rows[0]!)).toEqual([...LAKE_API_COLUMNS]);
    expect(rows).toHaveLength(304);
    expect(rows.find((r) => r['url'] === 'https://www.example.com/a/007')).toMatchObject({ status: 404, raw_url: null });
    const other = rows.find((r) => r['domain'] === 'other.org')!;
    expect(other['raw_url']).toBe('HTTP://Other.ORG/x?b=2&a=1'); // kept only where it differs from url
    expect(other['url']).not.toBe(other['raw_url']);
  });

  it('while lake files are written, only the old files of the partitions being rewritten are still staged locally', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'ccpipe-tmpdir-'));
    /** Records, at every lake file put, which store keys have a staged copy under the merge's temp dir. */
    class WatchingStore extends MemoryObjectStore {
      readonly seen: string[][] = [];
      override async put(key: string, data: Uint8Array): Promise<void> {
        if (key.startsWith('urls/')) {
          const files = (await readdir(scratch, { recursive: true })).map((f) => f.split('\\').join('/'));
          this.seen.push(files.flatMap((f) => (f.endsWith('.parquet') && /^ccpipe-merge-[^/]+\/in\//.test(f) ? [f.replace(/^ccpipe-merge-[^/]+\/in\//, '')] : [])).sort());
        }
        return super.put(key, data);
      }
    }
    try {
      const mem = new WatchingStore();
      const o = { store: mem, rowGroupSize: 2048, keepVersions: 2, graceMs: 0, lakeColumns: 'api', tmpDir: scratch } satisfies MergeOptions;
      await putBatch(mem, 1, 'b1', batch1);
      await runMerge(o);
      expect(mem.seen.length).toBeGreaterThanOrEqual(2);
      expect(mem.seen.every((s) => s.length === 0)).toBe(true); // the part was read into the staged table and deleted
      const v1Files = Object.keys(await lakeRows(mem, 'v000001'));
      mem.seen.length = 0;
      await putBatch(mem, 1, 'b2', batch2);
      const r2 = await runMerge(o);
      const rewritten = v1Files.filter((k) => [...new Set(mem.seen.flat())].includes(k));
      expect(mem.seen.length).toBe(r2.rewrittenFiles);
      expect(mem.seen.flat()).not.toContain(layout.batchPart(1, 'b2'));
      expect(rewritten.length).toBeGreaterThan(0);
      expect(rewritten.length).toBeLessThan(v1Files.length); // the untouched partitions' copies went after the collision check
      expect([...new Set(mem.seen.flat())].sort()).toEqual(rewritten.sort());
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it("a 'lean' lake has no url_id column, still keeps colliding URLs apart, and the API gives each its id", async () => {
    const mem = new MemoryObjectStore();
    const a = row(1, 'https://a.example.com/x', '20300101000000');
    const b = row(1, 'https://b.example.com/y', '20300101000000', { urlId: a.urlId }); // forced: same id, other URL
    const o = { store: mem, rowGroupSize: 2048, keepVersions: 2, graceMs: 0, lakeColumns: 'lean' } satisfies MergeOptions;
    await putBatch(mem, 1, 'b1', [a, row(1, 'https://a.example.com/z', '20300101000000')]);
    await runMerge(o);
    await putBatch(mem, 1, 'b2', [b, row(1, 'https://a.example.com/z', '20300102000000', { status: 301 })]);
    const r = await runMerge(o);
    expect(r).toMatchObject({ newCollisions: 1, urls: 3 });
    const rows = Object.values(await lakeRows(mem, 'v000002')).flat();
    expect(Object.keys(rows[0]!)).toEqual([...LAKE_LEAN_COLUMNS]);
    expect(rows.filter((x) => x['url'] === 'https://a.example.com/z')).toMatchObject([{ status: 301 }]); // deduped on url
    const map = JSON.parse(Buffer.from((await mem.get(indexLayout.versionFile('v000002', 'collisions.json')))!).toString('utf8')) as Record<string, string>;
    expect(Object.keys(map)).toEqual([b.url]);
    const src = await openIndexSource({ store: mem, pollMs: 0 });
    try {
      const v = (await src.current())!;
      expect((await v.captures(a.url))[0]!.urlId).toBe(urlIdHex(a.urlId));
      expect((await v.captures(b.url))[0]!.urlId).toBe(urlIdHex(BigInt(map[b.url]!)));
    } finally {
      await src.close();
    }
  });

  it('two new URLs sharing a url_id in one merge: the smaller URL keeps it, the other gets a substitute', async () => {
    const mem = new MemoryObjectStore();
    const a = row(1, 'https://a.example.com/x', '20300101000000');
    const b = row(1, 'https://b.example.com/y', '20300101000000', { urlId: a.urlId });
    await putBatch(mem, 1, 'b1', [a]);
    await putBatch(mem, 1, 'b2', [b, row(1, 'https://a.example.com/x', '20300102000000')]);
    const r = await runMerge({ store: mem, rowGroupSize: 2048, keepVersions: 2, graceMs: 0, lakeColumns: 'api' });
    expect(r).toMatchObject({ newCollisions: 1, urls: 2 });
    const rows = Object.values(await lakeRows(mem, 'v000001')).flat();
    const id = (u: string) => rows.find((x) => x['url'] === u)!['url_id'];
    expect(id(a.url)).toBe(a.urlId);
    expect(id(b.url)).not.toBe(a.urlId);
  });

  it('a previous index shard gone from the store: the merge fails as missing before it writes anything, and completes once it is back', async () => {
    const mem = new MemoryObjectStore();
    const o = { store: mem, rowGroupSize: 2048, keepVersions: 2, graceMs: 0, indexShards: { maxDomains: 1 } } satisfies MergeOptions;
    await putBatch(mem, 1, 'b1', batch1.slice(-4)); // 4 domains: 4 shards
    await runMerge(o);
    await putBatch(mem, 1, 'b2', batch2);
    const key = indexLayout.versionFile('v000001', 'postings-0002.bin');
    const bytes = (await mem.get(key))!;
    await mem.delete(key);
    await expect(runMerge(o)).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_MISSING' });
    expect(await keysOfVersion(mem, 'v000002')).toEqual([]);
    await mem.put(key, bytes);
    await expect(runMerge(o)).resolves.toMatchObject({ version: 'v000002', domains: 5 });
  });

  it('refuses to change lakeColumns once the lake exists', async () => {
    const mem = new MemoryObjectStore();
    await putBatch(mem, 1, 'b1', batch1.slice(0, 3));
    await runMerge({ store: mem, rowGroupSize: 2048, keepVersions: 2, graceMs: 0, lakeColumns: 'api' });
    await putBatch(mem, 1, 'b2', batch2);
    await expect(runMerge({ store: mem, rowGroupSize: 2048, keepVersions: 2, graceMs: 0, lakeColumns: 'all' })).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_FORMAT' });
    // Unset, the lake's own choice is kept.
    await expect(runMerge({ store: mem, rowGroupSize: 2048, keepVersions: 2, graceMs: 0 })).resolves.toMatchObject({ version: 'v000002' });
  });
});

describe('runMerge with a cacheDir (lake files and shards kept across merges)', () => {
  let dir: string;
  tempDirEach('ccpipe-merge-cache-', (d) => (dir = d));

  /** The files under the cache's own subdirectory, as `<key>~<crc32>-<size>` relative names. */
  const cachedFiles = async (): Promise<string[]> =>
    (await readdir(join(dir, 'cache', 'ccpipe-merge-cache'), { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)).sort();
  const entryOf = (f: { key: string; bytes: number; crc32: number }): string => new MergeCache(join(dir, 'cache')).pathOf(f);
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0)) await c();
  });

  it('the second merge downloads only the new part, writes the same lake as without a cache, and the cache holds just the new version', async () => {
    const cached = new RecordingStore();
    const plain = new MemoryObjectStore();
    const base = { rowGroupSize: 2048, keepVersions: 2, graceMs: 0, now: () => new Date('2030-01-03T00:00:00Z'), lakeColumns: 'api' } satisfies Partial<MergeOptions>;
    // the merge's temp dir on another file system than the cache when the machine has one (/dev/shm, as /tmp and a
    // compose volume are): the files written are then copied into the cache, not renamed
    const scratch = await mkdtemp(join(existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync(dir).dev ? '/dev/shm' : dir, 'ccpipe-merge-tmp-'));
    cleanup.push(() => rm(scratch, { recursive: true, force: true }));
    const withCache = { ...base, store: cached, cacheDir: join(dir, 'cache'), tmpDir: scratch } satisfies MergeOptions;
    for (const s of [cached, plain]) await putBatch(s, 1, 'b1', batch1);
    await runMerge(withCache);
    await runMerge({ ...base, store: plain });
    cached.ranges = [];
    for (const s of [cached, plain]) await putBatch(s, 1, 'b2', batch2);
    const r2 = await runMerge(withCache);
    const p2 = await runMerge({ ...base, store: plain });
    expect(r2).toEqual({ ...p2, ms: r2.ms });
    // without the cache this merge reads every v1 lake file and v1's shard (the test above): here only the part
    expect([...new Set(cached.ranges.map((r) => r.key))]).toEqual([layout.batchPart(1, 'b2')]);
    expect(await lakeRows(cached, 'v000002')).toEqual(await lakeRows(plain, 'v000002'));

    // what is left: v2's lake files and shard files, each under its size and CRC32 — v1's rewritten files are gone
    const v2 = JSON.parse(Buffer.from((await cached.get(indexLayout.versionFile('v000002', 'files.json')))!).toString('utf8')) as LakeFileEntry[];
    const toc = JSON.parse(Buffer.from((await cached.get(indexLayout.toc('v000002')))!).toString('utf8')) as { files: Record<string, { size: number; crc32: number }> };
    const shards = ['domains-0000.bin', 'domain-datasets-0000.bin', 'postings-0000.bin', 'facts-0000.bin'].map((n) => ({ key: indexLayout.versionFile('v000002', n), bytes: toc.files[n]!.size, crc32: toc.files[n]!.crc32 }));
    expect(await cachedFiles()).toEqual([...v2, ...shards].map(entryOf).sort());
    expect(r2.rewrittenFiles).toBeGreaterThan(0);
    expect(v2.some((f) => f.key.includes('v000001'))).toBe(true); // files carried over stay cached too
    expect(await readdir(scratch)).toEqual([]); // nothing left behind in the merge's temp dir
  });

  it('an empty or lost cache is filled again from the store; a lake file whose bytes differ from its registry CRC32 fails the merge before it writes anything', async () => {
    const mem = new RecordingStore();
    const o = { store: mem, rowGroupSize: 2048, keepVersions: 2, graceMs: 0, lakeColumns: 'api', cacheDir: join(dir, 'cache') } satisfies MergeOptions;
    await putBatch(mem, 1, 'b1', batch1);
    await runMerge(o);
    await rm(join(dir, 'cache'), { recursive: true });
    await putBatch(mem, 1, 'b2', batch2);
    mem.ranges = [];
    await expect(runMerge(o)).resolves.toMatchObject({ version: 'v000002', urls: 304 });
    expect(new Set(mem.ranges.map((r) => r.key)).size).toBeGreaterThan(1); // the lake and shard downloaded again

    await rm(join(dir, 'cache'), { recursive: true });
    const v2 = JSON.parse(Buffer.from((await mem.get(indexLayout.versionFile('v000002', 'files.json')))!).toString('utf8')) as LakeFileEntry[];
    const victim = v2[0]!.key;
    const good = (await mem.get(victim))!;
    const bad = Buffer.from(good);
    bad[100] = bad[100]! ^ 0xff; // same size, other bytes
    await mem.put(victim, bad);
    await putBatch(mem, 1, 'b3', [row(1, 'https://third.example/', '20300103000000')]);
    await expect(runMerge(o)).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC', detail: { key: victim } });
    expect(await keysOfVersion(mem, 'v000003')).toEqual([]);
    await mem.put(victim, good);
    await expect(runMerge(o)).resolves.toMatchObject({ version: 'v000003', urls: 305 });
  });

  it('a merge that failed after writing lake files: its entries are never served, the next attempt deletes them first, and the publish keeps only the new version', async () => {
    /** Fails the put of v000002's version.json `failures` times, as S3 would (CCP_ERR_STORE_IO): the merge dies after its lake files and shards are written (and cached). */
    class Failing extends MemoryObjectStore {
      failures = 2;
      override async put(key: string, data: Uint8Array): Promise<void> {
        if (this.failures > 0 && key.endsWith('/version.json') && key.includes('v000002')) {
          this.failures--;
          throw new CcpError('CCP_ERR_STORE_IO', 'store down');
        }
        return super.put(key, data);
      }
    }
    const mem = new Failing();
    const plain = new MemoryObjectStore();
    const o = { rowGroupSize: 2048, keepVersions: 2, graceMs: 0, lakeColumns: 'api', now: () => new Date('2030-01-03T00:00:00Z') } satisfies Partial<MergeOptions>;
    for (const s of [mem, plain]) await putBatch(s, 1, 'b1', batch1);
    await runMerge({ ...o, store: mem, cacheDir: join(dir, 'cache') });
    await runMerge({ ...o, store: plain });
    const v1 = await cachedFiles();
    await putBatch(mem, 1, 'b2', batch2);
    await expect(runMerge({ ...o, store: mem, cacheDir: join(dir, 'cache') })).rejects.toThrow('store down');
    const first = (await cachedFiles()).filter((p) => !v1.includes(p));
    expect(first.some((p) => p.includes('v000002'))).toBe(true); // the failed merge's files were cached
    // each retry folds in one more batch (a new URL), so v000002's files are rebuilt with other bytes under the same keys
    await putBatch(mem, 1, 'b3', [row(1, 'https://www.example.com/a/300', '20300104000000')]);
    await expect(runMerge({ ...o, store: mem, cacheDir: join(dir, 'cache') })).rejects.toThrow('store down');
    const second = await cachedFiles();
    // the first attempt's lake entries went when the second began (its shard files of unchanged domains and bitmaps
    // may be rebuilt byte for byte, under the same entry names)
    expect(first.filter((p) => p.includes('/urls/')).length).toBeGreaterThan(0);
    expect(second.filter((p) => first.includes(p) && p.includes('/urls/'))).toEqual([]);
    await putBatch(mem, 1, 'b4', [row(1, 'https://www.example.com/a/301', '20300104000000')]);
    for (const b of [['b2', batch2], ['b3', [row(1, 'https://www.example.com/a/300', '20300104000000')]], ['b4', [row(1, 'https://www.example.com/a/301', '20300104000000')]]] as const) {
      await putBatch(plain, 1, b[0], [...b[1]]);
    }
    const r = await runMerge({ ...o, store: mem, cacheDir: join(dir, 'cache') });
    expect(r).toEqual({ ...(await runMerge({ ...o, store: plain })), ms: r.ms });
    expect(await lakeRows(mem, 'v000002')).toEqual(await lakeRows(plain, 'v000002'));
    const v2 = JSON.parse(Buffer.from((await mem.get(indexLayout.versionFile('v000002', 'files.json')))!).toString('utf8')) as LakeFileEntry[];
    const now = await cachedFiles();
    expect(now.filter((p) => !p.includes('/index/'))).toEqual(v2.map(entryOf).sort());
    expect(now.filter((p) => second.includes(p) && p.includes('/urls/') && p.includes('v000002'))).toEqual([]);
  });

  it('a cached copy damaged on local disk fails one merge, which empties the cache; the next merge downloads afresh and succeeds', async () => {
    const mem = new MemoryObjectStore();
    const o = { store: mem, rowGroupSize: 2048, keepVersions: 2, graceMs: 0, lakeColumns: 'api', cacheDir: join(dir, 'cache') } satisfies MergeOptions;
    await putBatch(mem, 1, 'b1', batch1);
    await runMerge(o);
    const lake = (await cachedFiles()).filter((p) => p.includes('/urls/'));
    expect(lake.length).toBeGreaterThan(0);
    for (const p of lake) {
      const b = await readFile(p);
      b.write('XXXX', b.length - 4); // same size, no Parquet footer magic
      await writeFile(p, b);
    }
    await putBatch(mem, 1, 'b2', batch2);
    await expect(runMerge(o)).rejects.toThrow();
    expect(await cachedFiles()).toEqual([]);
    await expect(runMerge(o)).resolves.toMatchObject({ version: 'v000002', urls: 304 });
  });
});
