import { mkdtemp, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CcpError, batchId, batchKey, layout, urlId, urlIdHex, type ObjectStore } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { parquetShape, readParquetRows } from '../../../tests/support/parquet';
import { partRow, putBatch } from '../../../tests/support/batches';
import { crcOf, indexLayout, type IndexManifest, type LakeFileEntry } from './format';
import { openIndexSource } from './index-source';
import { pendingMerge, runMerge, type MergeOptions } from './run-merge';

/** A domain's datasets with their URL counts only (the facts are domain-facts.test.ts's). */
const urlCounts = ({ datasetId, urlCount }: { datasetId: number; urlCount: number }): { datasetId: number; urlCount: number } => ({ datasetId, urlCount });

let dir: string;
let store: FsObjectStore;
let clock: number;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-index-'));
  store = new FsObjectStore({ root: dir });
  clock = Date.parse('2030-01-01T00:00:00Z');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterAll(async () => {
  await closeDuckDbParquetEngine();
});

const row = partRow;

const opts = (over: Partial<MergeOptions> = {}): MergeOptions => ({
  store, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 60_000, now: () => new Date(clock), ...over,
});

async function manifest(): Promise<IndexManifest> {
  return JSON.parse((await readFile(join(dir, indexLayout.manifest()), 'utf8')) as string) as IndexManifest;
}

/**
 * Edits the files of a published version the way a writer would have written them (another layout, or a damaged but
 * checksummed file): `put`/`drop` change files and version.json follows, with the manifest's CRC of version.json.
 */
async function rewriteVersion(
  s: ObjectStore, v: string, edit: (put: (name: string, b: Uint8Array) => Promise<void>, drop: (name: string) => Promise<void>) => Promise<void>,
): Promise<void> {
  const m = JSON.parse(Buffer.from((await s.get(indexLayout.manifest()))!).toString()) as IndexManifest;
  const toc = JSON.parse(Buffer.from((await s.get(indexLayout.toc(v)))!).toString()) as { files: Record<string, { size: number; crc32: number }> };
  await edit(
    async (name, b) => {
      await s.put(indexLayout.versionFile(v, name), b);
      toc.files[name] = { size: b.length, crc32: crcOf(b) };
    },
    async (name) => {
      await s.delete(indexLayout.versionFile(v, name));
      delete toc.files[name];
    },
  );
  const tocBytes = Buffer.from(JSON.stringify(toc));
  await s.put(indexLayout.toc(v), tocBytes);
  m.versions.find((x) => x.version === v)!.tocCrc32 = crcOf(tocBytes);
  await s.put(indexLayout.manifest(), Buffer.from(JSON.stringify(m)));
}

describe('runMerge (synthetic batches)', () => {
  it('keeps one row per (dataset, url), the latest capture, and pages in (domain64, url) order with exact totals', async () => {
    const urls = Array.from({ length: 5000 }, (_, i) => `https://www.example.com/p/${String(i).padStart(5, '0')}`);
    await putBatch(store, 1, 'b1', urls.map((u) => row(1, u, '20300101000000')));
    await putBatch(store, 1, 'b2', [row(1, urls[7]!, '20300102000000', { status: 404 }), row(1, urls[8]!, '20291231000000', { status: 500 }), row(1, 'http://other.org/', '20300101000000')]);
    const r = await runMerge(opts());
    expect(r).toMatchObject({ version: 'v000001', published: true, batches: 2, rowsIn: 5003, urls: 5001, domains: 2 });
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      const v = (await src.current())!;
      expect(v.domain('example.com')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 5000 }]);
      expect(v.domain('nope.example')).toBeNull();
      const seen: string[] = [];
      for (let off = 0; ; off += 999) {
        const page = await v.urls('example.com', 1, off, 999);
        expect(page.total).toBe(5000);
        if (page.items.length === 0) break;
        seen.push(...page.items.map((i) => i.url));
      }
      expect(seen).toEqual([...urls].sort());
      const [c7] = await v.captures(urls[7]!);
      expect(c7).toMatchObject({ datasetId: 1, status: 404, ts: '2030-01-02T00:00:00Z', urlId: urlIdHex(urlId(urls[7]!)) });
      expect((await v.captures(urls[8]!))[0]!.status).toBe(200); // an older capture never wins
      // the registry does not name dataset 1 here: a crawl by default; rows and rejects are what its markers counted
      expect(v.datasets()).toEqual([{ datasetId: 1, name: 'dataset-1', crawl: null, kind: 'crawl', source: [], urlCount: 5001, domainCount: 2, rows: 5003, rejects: 0 }]);
    } finally {
      await src.close();
    }
  });

  it('stages wide new rows in passes of partitions when one sort would not fit, and writes the same lake byte for byte', async () => {
    // two datasets, many domains (partitions), a big domain, texts of a few KB, over two merges
    const text = (i: number): string => `words of page ${i} `.repeat(40 + (i % 90));
    const batch = (d: number, m: number): ReturnType<typeof row>[] => Array.from({ length: 900 }, (_, i) =>
      row(d, i % 5 === 0 ? `https://big.example.com/p${m}/${i}` : `https://s${i % 97}.example${i % 3}.org/${m}/${i}`, `2030010${m + 1}000000`, { text: text(i), title: `p ${i}` }));
    const lakeOf = async (root: string): Promise<[string, number, number][]> => {
      const m = JSON.parse(await readFile(join(root, indexLayout.manifest()), 'utf8')) as IndexManifest;
      const files = JSON.parse(await readFile(join(root, indexLayout.versionFile(m.current!, 'files.json')), 'utf8')) as LakeFileEntry[];
      return files.map((f) => [f.key, f.rows, f.crc32]);
    };
    // passes of about 60 KB (every partition a pass of its own, unsorted) and of about 1 MB (a few partitions each, sorted)
    const others = [await mkdtemp(join(tmpdir(), 'ccpipe-index-passes-')), await mkdtemp(join(tmpdir(), 'ccpipe-index-passes-'))];
    try {
      for (let m = 0; m < 2; m++) {
        for (const d of [1, 2]) for (const root of [dir, ...others]) await putBatch(new FsObjectStore({ root }), d, `b${m}-${d}`, batch(d, m));
        await runMerge(opts());
        for (const [k, root] of others.entries()) await runMerge(opts({ store: new FsObjectStore({ root }), dataDir: root, stagePassBytes: [60_000, 1_000_000][k]! }));
      }
      const one = await lakeOf(dir);
      expect(one.length).toBeGreaterThanOrEqual(4);
      for (const root of others) expect(await lakeOf(root)).toEqual(one);
    } finally {
      for (const root of others) await rm(root, { recursive: true, force: true });
    }
  });

  it('detects a url_id collision and keeps both URLs apart with a substitute id', async () => {
    const a = row(1, 'https://a.example.com/x', '20300101000000');
    const b = row(1, 'https://b.example.com/y', '20300101000000', { urlId: a.urlId }); // forced: same id, other URL
    await putBatch(store, 1, 'b1', [a]);
    await runMerge(opts());
    await putBatch(store, 1, 'b2', [b]);
    const r = await runMerge(opts());
    expect(r.newCollisions).toBe(1);
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      const v = (await src.current())!;
      expect(v.domain('example.com')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 2 }]);
      const [ca] = await v.captures(a.url);
      const [cb] = await v.captures(b.url);
      expect(ca!.urlId).toBe(urlIdHex(a.urlId)); // the URL that had the id first keeps it
      expect(cb!.urlId).not.toBe(urlIdHex(a.urlId));
      const map = JSON.parse(await readFile(join(dir, indexLayout.versionFile(v.version, 'collisions.json')), 'utf8')) as Record<string, string>;
      expect(Object.keys(map)).toEqual([b.url]);
      // The same URL captured again keeps its substitute id.
      await putBatch(store, 1, 'b3', [row(1, b.url, '20300105000000', { urlId: a.urlId })]);
      await runMerge(opts());
      const [cb2, ...more] = await (await src.current())!.captures(b.url);
      expect(cb2).toMatchObject({ urlId: cb!.urlId, ts: '2030-01-05T00:00:00Z' });
      expect(more).toEqual([]); // the recapture replaced b's lake row (found under its substitute id)
      expect((await src.current())!.domain('example.com')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 2 }]);
    } finally {
      await src.close();
    }
  });

  it('a bad memory limit is a CCP_ERR_CONFIG naming the flag, publishes nothing and leaves no temp dir', async () => {
    await putBatch(store, 1, 'b1', [row(1, 'https://a.example/', '20300101000000')]);
    const scratch = await mkdtemp(join(tmpdir(), 'ccpipe-tmpdir-'));
    try {
      for (let i = 0; i < 2; i++) {
        await expect(runMerge(opts({ memoryLimit: 'lots', tmpDir: scratch }))).rejects.toMatchObject({ code: 'CCP_ERR_CONFIG', message: expect.stringMatching(/--memory-limit/) });
      }
      const { readdir } = await import('node:fs/promises');
      expect(await readdir(scratch)).toEqual([]);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    expect(await store.get(indexLayout.manifest())).toBeNull();
    expect((await runMerge(opts())).published).toBe(true); // the same batches merge once the limit is sane
  });

  it("removes what a killed merge left in tmpDir once its heartbeat is stale, and nothing else", async () => {
    await putBatch(store, 1, 'b1', [row(1, 'https://a.example/', '20300101000000')]);
    const scratch = await mkdtemp(join(tmpdir(), 'ccpipe-tmpdir-'));
    const { mkdir, readdir, utimes, writeFile } = await import('node:fs/promises');
    try {
      const left = async (name: string, ageMs: number) => {
        await mkdir(join(scratch, name, 'spill'), { recursive: true });
        await writeFile(join(scratch, name, 'owner.json'), JSON.stringify({ kind: 'ccpipe-stage', host: 'elsewhere', pid: 1 }));
        const at = new Date(Date.now() - ageMs);
        await utimes(join(scratch, name, 'owner.json'), at, at);
      };
      await left('ccpipe-merge-killed', 60 * 60_000); // a merge SIGKILLed an hour ago
      await left('ccpipe-merge-running', 1000); // another merge's heartbeat (one merger at a time, but not ours to take)
      await left('ccpipe-index-api', 60 * 60_000); // an API's copies: another kind of directory
      await mkdir(join(scratch, 'ccpipe-merge-bench-data', 'batches'), { recursive: true }); // not a stage root: no owner file
      const old = new Date(Date.now() - 60 * 60_000);
      await utimes(join(scratch, 'ccpipe-merge-bench-data'), old, old);
      const removed: string[] = [];
      expect((await runMerge(opts({ tmpDir: scratch, onStaleTemp: (d) => removed.push(d) }))).published).toBe(true);
      expect(removed.map((d) => d.split('/').pop())).toEqual(['ccpipe-merge-killed']);
      expect((await readdir(scratch)).sort()).toEqual(['ccpipe-index-api', 'ccpipe-merge-bench-data', 'ccpipe-merge-running']); // and its own is gone
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });

  it('a crash between the files and the manifest leaves the previous version serving; rerunning completes', async () => {
    await putBatch(store, 1, 'b1', [row(1, 'https://one.example/', '20300101000000')]);
    await runMerge(opts());
    await putBatch(store, 2, 'b2', [row(2, 'https://two.example/', '20300101000000'), row(2, 'https://one.example/', '20300101000000')]);
    const crashing: ObjectStore = Object.create(store) as ObjectStore;
    crashing.put = async (key, data) => {
      if (key === indexLayout.manifest()) throw new Error('power cut');
      return store.put(key, data);
    };
    await expect(runMerge(opts({ store: crashing }))).rejects.toThrow('power cut');
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      const old = (await src.current())!;
      expect(old.version).toBe('v000001');
      expect(old.domain('two.example')).toBeNull();
      const r = await runMerge(opts());
      expect(r).toMatchObject({ version: 'v000002', batches: 1 });
      const v = (await src.current())!;
      expect(v.version).toBe('v000002');
      expect(v.domain('one.example')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 1 }, { datasetId: 2, urlCount: 1 }]);
      // The old view still answers (its files live through the grace period).
      expect((await old.urls('one.example', 1, 0, 10)).items.map((i) => i.url)).toEqual(['https://one.example/']);
    } finally {
      await src.close();
    }
  });

  it('across merges the latest capture wins over the lake row, an older one never does, and a tie goes to the new batch', async () => {
    const base = 'https://news.example.org/';
    await putBatch(store, 1, 'b1', ['a', 'b', 'c', 'd'].map((p) => row(1, `${base}${p}`, '20300110000000', { warcOffset: 1 })));
    await runMerge(opts({ lakeColumns: 'lean' }));
    await putBatch(store, 1, 'b2', [
      row(1, `${base}a`, '20300111000000', { status: 404, warcOffset: 2 }), // later: replaces the lake row
      row(1, `${base}b`, '20300109000000', { status: 500, warcOffset: 2 }), // older: the lake row stays
      row(1, `${base}c`, '20300110000000', { status: 301, warcOffset: 2 }), // same second: the new batch wins
      row(1, `${base}e`, '20300110000000'),
    ]);
    const r = await runMerge(opts());
    expect(r).toMatchObject({ rowsIn: 4, urls: 5 });
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      const v = (await src.current())!;
      expect(v.domain('example.org')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 5 }]);
      const page = await v.urls('example.org', 1, 0, 10);
      expect(page.items.map((i) => [i.url.slice(base.length), i.status])).toEqual([['a', 404], ['b', 200], ['c', 301], ['d', 200], ['e', 200]]);
    } finally {
      await src.close();
    }
  });

  it('within one merge, captures of a URL in the same second go to the latest batch part (key order), not to the WARC position', async () => {
    const url = 'https://tie.example/x';
    // part keys sort b1 < b2 < b3; the WARC offsets fall the other way, so only the part's rank can pick b3
    for (const [id, off] of [['b2', 20], ['b3', 10], ['b1', 30]] as const) {
      await putBatch(store, 1, id, [row(1, url, '20300110000000', { warcOffset: off, title: id }), row(1, `https://tie.example/${id}`, '20300110000000')]);
    }
    expect(await runMerge(opts())).toMatchObject({ rowsIn: 6, urls: 4 });
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      const [c, ...more] = await (await src.current())!.captures(url);
      expect([c!.title, c!.warc!.offset, more]).toEqual(['b3', 10, []]);
    } finally {
      await src.close();
    }
  });

  it('pendingMerge reads what the next merge would fold in: new batches, their rows, and the URLs merged so far', async () => {
    expect(await pendingMerge(store)).toEqual({ version: null, batches: 0, rows: 0, lakeUrls: 0, completes: [] });
    await putBatch(store, 1, 'b1', ['a', 'b', 'c'].map((p) => row(1, `https://one.example/${p}`, '20300101000000')));
    await putBatch(store, 2, 'b2', [row(2, 'https://two.example/', '20300101000000')]);
    expect(await pendingMerge(store)).toEqual({ version: null, batches: 2, rows: 4, lakeUrls: 0, completes: [] });
    await runMerge(opts());
    expect(await pendingMerge(store)).toEqual({ version: 'v000001', batches: 0, rows: 0, lakeUrls: 4, completes: [] });
    await putBatch(store, 1, 'b3', [row(1, 'https://one.example/a', '20300102000000'), row(1, 'https://one.example/d', '20300102000000')]);
    expect(await pendingMerge(store)).toEqual({ version: 'v000001', batches: 1, rows: 2, lakeUrls: 4, completes: [] });
    // A caller that keeps the row cache reads each pending marker (or its inbox copy) once; merged markers leave the cache.
    const markerGets: string[] = [];
    const counting = Object.assign(Object.create(store) as FsObjectStore, {
      get: async (key: string) => {
        const marker = layout.isBatchMarker(key) ? key : layout.markerOfInboxEntry(key);
        if (marker !== null) markerGets.push(marker);
        return store.get(key);
      },
    });
    const rowsOf = new Map<string, number>();
    await pendingMerge(counting, rowsOf);
    await putBatch(store, 2, 'b4', [row(2, 'https://two.example/b', '20300102000000')]);
    expect(await pendingMerge(counting, rowsOf)).toEqual({ version: 'v000001', batches: 2, rows: 3, lakeUrls: 4, completes: [] });
    expect(markerGets.sort()).toEqual([layout.batchMarker(1, 'b3'), layout.batchMarker(2, 'b4')].sort());
    await runMerge(opts());
    expect(await pendingMerge(counting, rowsOf)).toEqual({ version: 'v000002', batches: 0, rows: 0, lakeUrls: 6, completes: [] });
    expect(rowsOf.size).toBe(0);
    // It checks what it reads like loadVersion does: a damaged status.json is an error, not a guess.
    const status = join(dir, indexLayout.versionFile('v000002', 'status.json'));
    const { writeFile } = await import('node:fs/promises');
    await writeFile(status, (await readFile(status, 'utf8')).replace('"urls":6', '"urls":9'));
    await expect(pendingMerge(store)).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC' });
  });

  it.each([[2048, 2048], [3000, 4096]])('lake row groups hold rowGroupSize rows (%s, rounded up to 2048: %s), read back by hyparquet and listed in files.json', async (size, rows) => {
    const n = 10_000; // one domain, one partition
    await putBatch(store, 1, 'big', Array.from({ length: n }, (_, i) => row(1, `https://one.example/p${i}`, '20300101000000')));
    const r = await runMerge(opts({ rowGroupSize: size }));
    const files = JSON.parse(await readFile(join(dir, indexLayout.versionFile(r.version!, 'files.json')), 'utf8')) as LakeFileEntry[];
    expect(files).toHaveLength(1);
    const groups = Array.from({ length: Math.ceil(n / rows) }, (_, g) => Math.min(rows, n - g * rows));
    expect(files[0]!.rowGroups.map(([, k]) => k)).toEqual(groups);
    expect(parquetShape(await readFile(join(dir, files[0]!.key)))).toEqual({ rows: n, rowGroups: groups.length });
  });

  it('a merge of more domains than a DuckDB appender holds before it flushes (204,800) assigns and indexes them all', async () => {
    // a statement on a streaming connection ends the stream; the domain walk appends while it streams
    const n = 210_000;
    await putBatch(store, 1, 'many', Array.from({ length: n }, (_, i) => row(1, `https://s${i}.example/`, '20300101000000')));
    const r = await runMerge(opts());
    expect([r.domains, r.urls]).toEqual([n, n]);
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      const v = (await src.current())!;
      for (const i of [0, 204_799, 204_800, n - 1]) expect(v.domain(`s${i}.example`)?.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 1 }]);
    } finally {
      await src.close();
    }
  }, 120_000);

  it("a 'lean' lake is hashed whole for collisions even when more than 204,800 of its URLs match new ids", async () => {
    // every lake URL but the last is re-captured (so each matches and is appended while the lake streams), and one
    // new URL takes the id of the lake's last URL in file order: the clash is only in the lake, found only if the
    // stream reaches the end
    const n = 210_000;
    const url = (i: number) => `https://one.example/p/${String(i).padStart(6, '0')}`;
    await putBatch(store, 1, 'b1', Array.from({ length: n }, (_, i) => row(1, url(i), '20300101000000')));
    await runMerge(opts({ lakeColumns: 'lean' }));
    await putBatch(store, 1, 'b2', [
      ...Array.from({ length: n - 1 }, (_, i) => row(1, url(i), '20300102000000')),
      row(1, 'https://collider.example/', '20300102000000', { urlId: urlId(url(n - 1)) }),
    ]);
    const r = await runMerge(opts({ lakeColumns: 'lean' }));
    expect(r.newCollisions).toBe(1);
  }, 180_000);

  it("a domain whose runs straddle the index build's streamed chunks keeps every dataset and count", async () => {
    // 1,000 domains × 3 datasets = 3,000 runs, read sorted by (domain, dataset) in DuckDB chunks of 2,048: the runs
    // of domain 682 fall on both sides of the first chunk boundary
    const domains = Array.from({ length: 1000 }, (_, i) => `d${String(i).padStart(4, '0')}.example`);
    for (const ds of [1, 2, 3]) {
      await putBatch(store, ds, `b${ds}`, domains.flatMap((d) => Array.from({ length: ds }, (_, k) => row(ds, `https://${d}/${k}`, '20300101000000'))));
    }
    const r = await runMerge(opts());
    expect([r.domains, r.urls]).toEqual([1000, 6000]);
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      const v = (await src.current())!;
      for (const d of domains) expect(v.domain(d)!.datasets.map(urlCounts)).toEqual([1, 2, 3].map((ds) => ({ datasetId: ds, urlCount: ds })));
    } finally {
      await src.close();
    }
  });

  it('an incremental merge rewrites only the partitions with new rows', async () => {
    const domains = Array.from({ length: 40 }, (_, i) => `site${i}.example`);
    await putBatch(store, 1, 'b1', domains.map((d) => row(1, `https://${d}/`, '20300101000000')));
    const first = await runMerge(opts());
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    const v1 = (await src.current())!;
    const ids1 = domains.map((d) => v1.domain(d)!.domain64);
    expect(new Set(ids1).size).toBe(domains.length);
    await putBatch(store, 1, 'b2', [row(1, `https://${domains[3]}/new`, '20300102000000')]);
    await putBatch(store, 2, 'b3', [row(2, `https://${domains[5]}/`, '20300102000000'), row(2, 'https://late.example/', '20300102000000')]);
    const second = await runMerge(opts());
    expect(second.rewrittenFiles).toBe(3);
    // Domain ids are stable across versions; a new domain gets a new one.
    const v2 = (await src.current())!;
    expect(domains.map((d) => v2.domain(d)!.domain64)).toEqual(ids1);
    expect(ids1).not.toContain(v2.domain('late.example')!.domain64);
    expect(v2.domain(domains[5]!)!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 1 }, { datasetId: 2, urlCount: 1 }]);
    await src.close();
    await expect(runMerge(opts({ partitionBits: 4 }))).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_FORMAT' });
    expect(first.rewrittenFiles).toBeGreaterThan(10);
    const files = async (v: string) => JSON.parse(await readFile(join(dir, indexLayout.versionFile(v, 'files.json')), 'utf8')) as { key: string }[];
    const f1 = (await files('v000001')).map((f) => f.key);
    const f2 = (await files('v000002')).map((f) => f.key).filter((k) => k.startsWith('urls/dataset_id=1/'));
    expect(f2.filter((k) => !f1.includes(k))).toHaveLength(1);
    expect(f2).toHaveLength(f1.length);
    const lake = await readParquetRows((await store.get(f2.find((k) => k.includes('part-v000002'))!))!);
    expect(lake.map((r) => r['url']).sort()).toEqual([`https://${domains[3]}/`, `https://${domains[3]}/new`]);
    const third = await runMerge(opts());
    expect(third).toMatchObject({ published: false, version: 'v000002', batches: 0 });
  });

  describe('lake runs: a merge writes the new rows of a partition as a new file, folding in only small or superseded runs', () => {
    const page = (i: number): string => `https://www.runs.example/p/${String(i).padStart(5, '0')}`;
    const lakeKeys = async (v: string): Promise<LakeFileEntry[]> =>
      JSON.parse(await readFile(join(dir, indexLayout.versionFile(v, 'files.json')), 'utf8')) as LakeFileEntry[];
    /** Every row of the files a version lists, read back with hyparquet: what an external reader of that version sees. */
    const lakeRows = async (v: string) => (await Promise.all((await lakeKeys(v)).map(async (f) => readParquetRows((await store.get(f.key))!)))).flat();
    const walk = async (v: string, limit: number): Promise<string[]> => {
      const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
      try {
        const view = (await src.at(v))!;
        const seen: string[] = [];
        for (let off = 0; ; off += limit) {
          const p = await view.urls('runs.example', 1, off, limit);
          if (p.items.length === 0) return seen;
          seen.push(...p.items.map((i) => i.url));
        }
      } finally {
        await src.close();
      }
    };

    it('a small incremental merge leaves the big file alone and pages its rows first, then the new run', async () => {
      const old = Array.from({ length: 3000 }, (_, i) => page(2 * i));
      const added = Array.from({ length: 200 }, (_, i) => page(2 * i + 1));
      await putBatch(store, 1, 'b1', old.map((u) => row(1, u, '20300101000000')));
      await runMerge(opts({ partitionBits: 1 }));
      const v1 = await lakeKeys('v000001');
      await putBatch(store, 1, 'b2', added.map((u) => row(1, u, '20300102000000')));
      const r = await runMerge(opts());
      expect(r).toMatchObject({ version: 'v000002', rowsIn: 200, urls: 3200, rewrittenFiles: 1 });
      const v2 = await lakeKeys('v000002');
      expect(v2.map((f) => f.key)).toEqual([v1[0]!.key, v1[0]!.key.replace('part-v000001', 'part-v000002')]);
      expect(v2.map((f) => f.rows)).toEqual([3000, 200]);
      // external readers of v2's files see each URL once; the new file holds only the new rows
      expect((await readParquetRows((await store.get(v2[1]!.key))!)).map((x) => x['url']).sort()).toEqual(added);
      expect((await lakeRows('v000002')).map((x) => x['url']).sort()).toEqual([...old, ...added].sort());
      // pages: v1's run (sorted by URL), then the new run; a page of 700 straddles the boundary at 3,000
      expect(await walk('v000002', 700)).toEqual([...old, ...added]);
      const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
      try {
        const v = (await src.current())!;
        expect(v.domain('runs.example')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 3200 }]);
        expect(v.datasets()).toEqual([{ datasetId: 1, name: 'dataset-1', crawl: null, kind: 'crawl', source: [], urlCount: 3200, domainCount: 1, rows: 3200, rejects: 0 }]);
        expect((await v.urls('runs.example', 1, 2990, 20)).items.map((i) => i.url)).toEqual([...old.slice(2990), ...added.slice(0, 10)]);
        expect((await v.captures(added[5]!)).map((c) => c.ts)).toEqual(['2030-01-02T00:00:00Z']);
      } finally {
        await src.close();
      }
    });

    it('a run holding a row the new batch supersedes is rewritten without it: one row per URL, the latest capture', async () => {
      const old = Array.from({ length: 3000 }, (_, i) => page(i));
      await putBatch(store, 1, 'b1', old.map((u) => row(1, u, '20300101000000')));
      await runMerge(opts({ partitionBits: 1 }));
      await putBatch(store, 1, 'b2', [row(1, old[1234]!, '20300105000000', { status: 404 }), row(1, page(90_000), '20300105000000')]);
      const r = await runMerge(opts());
      expect(r).toMatchObject({ urls: 3001, rewrittenFiles: 1 });
      const v2 = await lakeKeys('v000002');
      expect(v2.map((f) => [f.key.replace(/.*\//, ''), f.rows])).toEqual([['part-v000002.parquet', 3001]]);
      const rows = await lakeRows('v000002');
      expect(rows).toHaveLength(3001);
      expect(rows.filter((x) => x['url'] === old[1234]).map((x) => x['status'])).toEqual([404]);
      expect(await walk('v000002', 1000)).toEqual([...old, page(90_000)].sort());
    });

    it('a partition whose new rows all lose to the lake gets no file (no empty run taking a lakeMaxRuns slot)', async () => {
      const old = Array.from({ length: 100 }, (_, i) => page(i));
      await putBatch(store, 1, 'b1', old.map((u) => row(1, u, '20300102000000')));
      await runMerge(opts({ partitionBits: 1 }));
      const v1 = await lakeKeys('v000001');
      await putBatch(store, 1, 'b2', [row(1, old[7]!, '20300101000000', { status: 500 })]); // an older capture
      const r = await runMerge(opts());
      expect(r).toMatchObject({ version: 'v000002', published: true, batches: 1, urls: 100, rewrittenFiles: 0, rowsWritten: 0 });
      expect(await lakeKeys('v000002')).toEqual(v1);
      expect(await walk('v000002', 30)).toEqual(old);
      // also with the partition at lakeMaxRuns: runs of 100, 4, 2, 1, then a batch whose only row loses
      for (const [id, n] of [['b3', 4], ['b4', 2], ['b5', 1]] as const) {
        await putBatch(store, 1, id, Array.from({ length: n }, (_, i) => row(1, page(1000 * n + i), '20300102000000')));
        await runMerge(opts());
      }
      const before = await lakeKeys('v000005');
      expect(before.map((f) => f.rows)).toEqual([100, 4, 2, 1]);
      await putBatch(store, 1, 'b6', [row(1, old[9]!, '20300101000000', { status: 500 })]);
      expect(await runMerge(opts())).toMatchObject({ version: 'v000006', rewrittenFiles: 0, rowsWritten: 0 });
      expect(await lakeKeys('v000006')).toEqual(before);
    });

    it('many small merges keep at most lakeMaxRuns files per partition (the cap binds at m = 4); lakeMaxRuns 1 rewrites it whole each time', async () => {
      await putBatch(store, 1, 'b0', Array.from({ length: 4000 }, (_, i) => row(1, page(i), '20300101000000')));
      await runMerge(opts({ partitionBits: 1, keepVersions: 1 }));
      const all = Array.from({ length: 4000 }, (_, i) => page(i));
      for (let m = 1; m <= 6; m++) {
        const batch = Array.from({ length: 50 * m }, (_, i) => page(10_000 * m + i));
        all.push(...batch);
        await putBatch(store, 1, `b${m}`, batch.map((u) => row(1, u, '20300102000000')));
        const r = await runMerge(opts({ lakeMaxRuns: 2, keepVersions: 1 }));
        const files = await lakeKeys(r.version!);
        expect(files.length).toBeLessThanOrEqual(2);
        expect(files.reduce((s, f) => s + f.rows, 0)).toBe(all.length);
      }
      expect((await walk('v000007', 997)).sort()).toEqual([...all].sort());
      await putBatch(store, 1, 'b7', [row(1, page(99_999), '20300103000000')]);
      const r = await runMerge(opts({ lakeMaxRuns: 1, keepVersions: 1 }));
      expect((await lakeKeys(r.version!)).map((f) => f.rows)).toEqual([all.length + 1]);
      expect(await walk(r.version!, 2000)).toEqual([...all, page(99_999)].sort());
      await expect(runMerge(opts({ lakeMaxRuns: 0 }))).rejects.toMatchObject({ code: 'CCP_ERR_CONFIG' });
    });

    it('compact folds every partition into one file in URL order, also those receiving no rows, and publishes nothing when none has runs', async () => {
      const first = Array.from({ length: 3000 }, (_, i) => page(2 * i));
      const second = Array.from({ length: 200 }, (_, i) => page(2 * i + 1));
      await putBatch(store, 1, 'b1', first.map((u) => row(1, u, '20300101000000')));
      await runMerge(opts({ partitionBits: 1 }));
      await putBatch(store, 1, 'b2', second.map((u) => row(1, u, '20300102000000')));
      await runMerge(opts());
      expect((await lakeKeys('v000002')).map((f) => f.rows)).toEqual([3000, 200]);
      // no new batch: dataset 1's partition is folded anyway
      const c = await runMerge(opts({ compact: true }));
      expect(c).toMatchObject({ version: 'v000003', published: true, batches: 0, rowsIn: 0, urls: 3200, rewrittenFiles: 1, rowsWritten: 3200, lakeFiles: 1 });
      const v3 = await lakeKeys('v000003');
      expect(v3.map((f) => [f.key.replace(/.*\//, ''), f.rows])).toEqual([['part-v000003.parquet', 3200]]);
      const all = [...first, ...second].sort();
      expect((await lakeRows('v000003')).map((x) => x['url'])).toEqual(all); // one file, in URL order
      expect(await walk('v000003', 700)).toEqual(all);
      // a compacted lake has nothing left to fold
      expect(await runMerge(opts({ compact: true }))).toMatchObject({ version: 'v000003', published: false });
      // with new batches: a partition receiving rows is rewritten whole, and a partition that receives none but
      // holds runs is folded too
      await putBatch(store, 2, 'c1', first.map((u) => row(2, u, '20300103000000')));
      await runMerge(opts());
      await putBatch(store, 2, 'c2', [row(2, page(90_001), '20300104000000')]);
      await putBatch(store, 1, 'b3', [row(1, page(90_000), '20300104000000')]);
      await runMerge(opts());
      expect((await lakeKeys('v000005')).map((f) => [f.datasetId, f.rows])).toEqual([[1, 3200], [1, 1], [2, 3000], [2, 1]]);
      await putBatch(store, 1, 'b4', [row(1, page(90_002), '20300105000000'), row(1, first[5]!, '20300105000000', { status: 404 })]);
      const d = await runMerge(opts({ compact: true }));
      expect(d).toMatchObject({ version: 'v000006', batches: 1, rowsIn: 2, urls: 3202 + 3001, rewrittenFiles: 2, rowsWritten: 3202 + 3001 });
      const v6 = await lakeKeys('v000006');
      expect(v6.map((f) => [f.datasetId, f.rows])).toEqual([[1, 3202], [2, 3001]]);
      const rows1 = await readParquetRows((await store.get(v6[0]!.key))!);
      expect(rows1.map((x) => x['url'])).toEqual([...all, page(90_000), page(90_002)].sort());
      expect(rows1.filter((x) => x['url'] === first[5]).map((x) => x['status'])).toEqual([404]);
      expect((await readParquetRows((await store.get(v6[1]!.key))!)).map((x) => x['url'])).toEqual([...first, page(90_001)].sort());
    });
  });

  it('a domain index split into shards answers like one shard; merges over it keep ids; a version written before shards still loads and is merged over', async () => {
    const domains = (from: number, n: number) => Array.from({ length: n }, (_, i) => `d${String(from + i * 2).padStart(3, '0')}.example`);
    const first = domains(0, 10); // d000, d002, … d018: the second batch's odd names fall between them
    const rowsOf = (names: string[], ts: string) => names.flatMap((d, i) => [row(1, `https://${d}/a`, ts), ...(i % 3 === 0 ? [row(2, `https://www.${d}/b`, ts)] : [])]);
    await putBatch(store, 1, 'b1', rowsOf(first, '20300101000000'));
    // the same batch merged into a second store with the default limits, in format 1 (as merges wrote it before
    // stop 16): one shard
    const plainDir = await mkdtemp(join(tmpdir(), 'ccpipe-index-plain-'));
    const plain = new FsObjectStore({ root: plainDir });
    try {
      await putBatch(plain, 1, 'b1', rowsOf(first, '20300101000000'));
      await runMerge(opts({ store: plain, dataDir: plainDir, indexShards: { format: 1 } }));
      await runMerge(opts({ indexShards: { maxDomains: 3 } }));
      const formatOf = async (s: FsObjectStore, v: string, file: string) => Buffer.from((await s.get(indexLayout.versionFile(v, file)))!).readUInt32LE(4);
      expect([await formatOf(plain, 'v000001', 'postings-0000.bin'), await formatOf(store, 'v000001', 'postings-0000.bin')]).toEqual([1, 2]);
      const shardsJson = async (v: string) => JSON.parse(await readFile(join(dir, indexLayout.versionFile(v, 'shards.json')), 'utf8')) as unknown;
      expect(await shardsJson('v000001')).toEqual({ v: 1, shards: [{ domains: 3 }, { domains: 3 }, { domains: 3 }, { domains: 1 }] });
      const sharded = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
      const single = await openIndexSource({ store: plain, dataDir: plainDir, pollMs: 0 });
      // the same sharded version with its index read in place from the shard files (FsObjectStore has localPath)
      const inPlace = await openIndexSource({ store, pollMs: 0, indexReads: 'files' });
      try {
        const [a, b, c] = [(await sharded.current())!, (await single.current())!, (await inPlace.current())!];
        expect(c.residentBytes).toBeLessThan(a.residentBytes);
        for (const d of [...first, 'd001.example', 'zzz.example']) {
          expect(a.domain(d)).toEqual(b.domain(d));
          expect(c.domain(d)).toEqual(b.domain(d));
          for (const ds of [1, 2]) {
            expect(await a.urls(d, ds, 0, 10)).toEqual(await b.urls(d, ds, 0, 10));
            expect(await c.urls(d, ds, 0, 10)).toEqual(await b.urls(d, ds, 0, 10));
          }
        }
        expect(a.domain('d018.example')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 1 }, { datasetId: 2, urlCount: 1 }]);
        const keys = new Map(first.map((d) => [d, a.domain(d)!.domain64]));
        // a second merge walks the sharded dictionary: old domains keep their keys, new ones land between them
        await putBatch(store, 1, 'b2', rowsOf(domains(1, 10), '20300102000000'));
        expect(await runMerge(opts({ indexShards: { maxDomains: 3 } }))).toMatchObject({ version: 'v000002', domains: 20 });
        expect(await shardsJson('v000002')).toEqual({ v: 1, shards: [...Array<unknown>(6).fill({ domains: 3 }), { domains: 2 }] });
        const v2 = (await sharded.current())!;
        expect(v2.version).toBe('v000002');
        for (const d of first) expect(v2.domain(d)!.domain64).toBe(keys.get(d));
        // a flip reaches the in-place source too, and does not close the view it replaced (kept for clients paging on it)
        const c2 = (await inPlace.current())!;
        expect(c2.version).toBe('v000002');
        for (const d of [...first, ...domains(1, 10)]) expect(c2.domain(d)).toEqual(v2.domain(d));
        expect(c.domain('d000.example')).toEqual(a.domain('d000.example'));
        for (const d of domains(1, 10)) expect((await v2.urls(d, 1, 0, 10)).items.map((x) => x.url)).toEqual([`https://${d}/a`]);
        // a new domain before every old one: the walk passes all the old shards in one go
        await putBatch(store, 1, 'b3', [row(1, 'https://a.example/x', '20300103000000')]);
        expect(await runMerge(opts({ indexShards: { maxDomains: 3 } }))).toMatchObject({ version: 'v000003', domains: 21 });
        expect(await shardsJson('v000003')).toEqual({ v: 1, shards: [...Array<unknown>(7).fill({ domains: 3 })] });
        const v3 = (await sharded.current())!;
        for (const d of ['a.example', ...first, ...domains(1, 10)]) expect(v3.domain(d)?.datasets[0]!.urlCount).toBe(1);
      } finally {
        await sharded.close();
        await single.close();
        await inPlace.close();
      }
      // shards.json that drops a shard, or lists one without a count, is refused (the dropped shard's domains would
      // silently be unknown)
      for (const table of [{ v: 1, shards: Array(6).fill({ domains: 3 }) }, { v: 1, shards: [null, ...Array(6).fill({ domains: 3 })] }]) {
        await rewriteVersion(store, 'v000003', (put) => put('shards.json', Buffer.from(JSON.stringify(table))));
        const bad = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
        try {
          // refused; the source serves the newest older version meanwhile, naming the refused one
          expect((await bad.current())!.version).toBe('v000002');
          expect(bad.loadFailure()).toMatchObject({ version: 'v000003', code: 'CCP_ERR_INDEX_FORMAT' });
        } finally {
          await bad.close();
        }
      }
      // The one-shard version rewritten the way merges wrote it before shards existed: domains.bin,
      // domain-datasets.bin, postings.bin, no shards.json.
      await rewriteVersion(plain, 'v000001', async (put, drop) => {
        for (const [now, legacy] of [['domains-0000.bin', 'domains.bin'], ['domain-datasets-0000.bin', 'domain-datasets.bin'], ['postings-0000.bin', 'postings.bin']] as const) {
          await put(legacy, (await plain.get(indexLayout.versionFile('v000001', now)))!);
          await drop(now);
        }
        await drop('shards.json');
      });
      const legacy = await openIndexSource({ store: plain, dataDir: plainDir, pollMs: 0 });
      try {
        const v1 = (await legacy.current())!;
        expect(v1.domain('d000.example')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 1 }, { datasetId: 2, urlCount: 1 }]);
        await putBatch(plain, 1, 'b2', rowsOf(domains(1, 10), '20300102000000'));
        expect(await runMerge(opts({ store: plain, dataDir: plainDir }))).toMatchObject({ version: 'v000002', domains: 20 });
        const v2 = (await legacy.current())!;
        expect([v2.version, v2.domain('d000.example')!.domain64, (await v2.urls('d001.example', 1, 0, 10)).total]).toEqual(['v000002', v1.domain('d000.example')!.domain64, 1]);
        // the merge over the format-1 version wrote format 2
        for (const f of ['domains-0000.bin', 'domain-datasets-0000.bin', 'postings-0000.bin']) expect(await formatOf(plain, 'v000002', f)).toBe(2);
        expect(v2.domain('d000.example')!.datasets).toEqual(v1.domain('d000.example')!.datasets);
      } finally {
        await legacy.close();
      }
    } finally {
      await rm(plainDir, { recursive: true, force: true });
    }
  });

  it('GC deletes a retired version only after the grace period, and never a file a kept version uses', async () => {
    for (let i = 1; i <= 3; i++) {
      await putBatch(store, 1, `b${i}`, [row(1, `https://s${i}.example/`, '20300101000000'), row(1, 'https://shared.example/', `2030010${i}000000`)]);
      await runMerge(opts({ keepVersions: 1 }));
      clock += 1000;
    }
    let m = await manifest();
    expect(m.versions.map((v) => v.version)).toEqual(['v000003']);
    expect(m.retired.map((v) => v.version)).toEqual(['v000001', 'v000002']);
    expect(await store.head(indexLayout.toc('v000001'))).not.toBeNull();
    const locators = async () => {
      const keys: string[] = [];
      for await (const o of store.list(indexLayout.locatorPrefix())) keys.push(o.key);
      return keys.sort();
    };
    const before = await locators();
    clock += 60_000 - 1500; // v000001 retired at +1 s, v000002 at +2 s: only v000001's grace is over
    await runMerge(opts({ keepVersions: 1 }));
    m = await manifest();
    expect(m.retired.map((v) => v.version)).toEqual(['v000002']);
    expect(await store.head(indexLayout.toc('v000001'))).toBeNull();
    expect(await store.head(indexLayout.toc('v000002'))).not.toBeNull();
    // Row-group locators go with their lake files: every lake file of a version left has its own, nothing else stays.
    const left: string[] = [];
    for (const v of ['v000002', 'v000003']) {
      for (const f of JSON.parse(await readFile(join(dir, indexLayout.versionFile(v, 'files.json')), 'utf8')) as LakeFileEntry[]) {
        expect(f.locator?.key).toBe(indexLayout.locatorOf(f.key));
        const b = (await store.get(f.locator!.key))!;
        expect({ bytes: b.length, crc32: crcOf(b) }).toEqual({ bytes: f.locator!.bytes, crc32: f.locator!.crc32 });
        left.push(f.locator!.key);
      }
    }
    expect(await locators()).toEqual([...new Set(left)].sort());
    expect(before.length).toBeGreaterThan(new Set(left).size); // v000001 had a locator of its own, now deleted
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      const v = (await src.current())!;
      for (let i = 1; i <= 3; i++) expect((await v.urls(`s${i}.example`, 1, 0, 5)).items).toHaveLength(1);
    } finally {
      await src.close();
    }
  });

  it('the grace period counts from the flip, not from the start of a long merge', async () => {
    await putBatch(store, 1, 'b1', [row(1, 'https://one.example/', '20300101000000')]);
    await runMerge(opts({ keepVersions: 1, graceMs: 600_000 }));
    await putBatch(store, 1, 'b2', [row(1, 'https://two.example/', '20300101000000')]);
    // a merge that takes 11 minutes: its first reading of the clock is its start, every later one 11 minutes on
    const start = clock;
    let calls = 0;
    await runMerge(opts({ keepVersions: 1, graceMs: 600_000, now: () => new Date(calls++ === 0 ? start : start + 660_000) }));
    const m = await manifest();
    expect(m.retired).toEqual([{ version: 'v000001', retiredAt: new Date(start + 660_000).toISOString() }]);
    expect(await store.head(indexLayout.toc('v000001'))).not.toBeNull(); // readers still holding it have their 10 minutes
  });

  it('a garbage collection that fails after the flip leaves the merge published; a later merge deletes what it left', async () => {
    for (let i = 1; i <= 2; i++) {
      await putBatch(store, 1, `b${i}`, [row(1, `https://s${i}.example/`, '20300101000000')]);
      await runMerge(opts({ keepVersions: 1, graceMs: 0 }));
    }
    await putBatch(store, 1, 'b3', [row(1, 'https://s3.example/', '20300101000000')]);
    // v000002 is retired by this merge and collected at once (grace 0), but every delete fails
    const failing = Object.create(store) as ObjectStore;
    failing.delete = async () => {
      throw new CcpError('CCP_ERR_STORE_IO', 'object store delete failed (InternalError 500)', { retryable: true });
    };
    const r = await runMerge(opts({ store: failing, keepVersions: 1, graceMs: 0 }));
    expect(r).toMatchObject({ version: 'v000003', published: true, gcError: 'CCP_ERR_STORE_IO' });
    const m = await manifest();
    expect([m.current, m.retired]).toEqual(['v000003', []]); // dropped from the manifest, its files still there
    expect(await store.head(indexLayout.toc('v000002'))).not.toBeNull();
    const r2 = await runMerge(opts({ keepVersions: 1, graceMs: 0 }));
    expect(r2.gcError).toBeUndefined();
    const left: string[] = [];
    for await (const o of store.list('index/')) left.push(o.key);
    expect(left.filter((k) => !k.startsWith('index/v000003/') && k !== indexLayout.manifest())).toEqual([]);
  });

  it('an index read in place: a view the source lets go of closes its files after the grace period, the rest when the source closes', async () => {
    await putBatch(store, 1, 'b1', [row(1, 'https://one.example/', '20300101000000')]);
    await runMerge(opts({ keepVersions: 1 }));
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0, indexReads: 'files', retireGraceMs: 50 });
    try {
      const v1 = (await src.current())!;
      expect(v1.domain('one.example')!.datasets.map(urlCounts)).toEqual([{ datasetId: 1, urlCount: 1 }]);
      await putBatch(store, 1, 'b2', [row(1, 'https://two.example/', '20300102000000')]);
      await runMerge(opts({ keepVersions: 1 })); // v1 leaves the manifest: the source cannot serve it again
      const v2 = (await src.current())!;
      expect(v2.version).toBe('v000002');
      expect(v1.domain('one.example')).not.toBeNull(); // within the grace period a request holding v1 still reads
      await new Promise((r) => setTimeout(r, 200));
      expect(() => v1.domain('one.example')).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_CLOSED' }));
      expect(v2.domain('two.example')).not.toBeNull();
      await src.close();
      expect(() => v2.domain('two.example')).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_CLOSED' }));
    } finally {
      await src.close();
    }
  });

  it('batches.json lists what a version folded in compactly, status.json their totals; a version written with neither is merged over without folding a batch twice', async () => {
    // real batch ids (crawl/block/seq) and one of another shape, which is kept as it is
    const ids = [batchId('CC-MAIN-2030-40', 7, 0), batchId('CC-MAIN-2030-40', 7, 1), batchId('CC-MAIN-2030-40', 9, 0), 'urls-list-1'];
    for (const [i, id] of ids.entries()) await putBatch(store, 1, batchKey(id), [row(1, `https://b${i}.example/`, '20300101000000')]);
    expect(await runMerge(opts())).toMatchObject({ version: 'v000001', batches: 4 });
    const json = (v: string) => store.get(indexLayout.versionFile(v, 'batches.json')).then((b) => JSON.parse(Buffer.from(b!).toString()));
    expect(await json('v000001')).toEqual({
      v: 2, count: 4, sets: [{ dataset_id: 1, crawl: 'CC-MAIN-2030-40', count: 3, runs: '7+2,2+1' }], other: [layout.batchMarker(1, 'urls-list-1')],
    });
    const statusOf = async (v: string) => JSON.parse(Buffer.from((await store.get(indexLayout.versionFile(v, 'status.json')))!).toString()) as Record<string, unknown>;
    expect((await statusOf('v000001'))['ingested']).toEqual([{ datasetId: 1, batches: 4, rows: 4, failed: 0 }]);
    // the same version as a writer before this format left it: every key in a sorted array, no ingest totals
    const keys = ids.map((id) => layout.batchMarker(1, batchKey(id))).sort();
    await rewriteVersion(store, 'v000001', async (put) => {
      await put('batches.json', Buffer.from(JSON.stringify(keys)));
      const st = await statusOf('v000001');
      delete st['ingested'];
      await put('status.json', Buffer.from(JSON.stringify(st)));
    });
    expect(await pendingMerge(store)).toMatchObject({ version: 'v000001', batches: 0 });
    const more = batchId('CC-MAIN-2030-40', 8, 0);
    await putBatch(store, 1, batchKey(more), [row(1, 'https://new.example/', '20300102000000')]);
    expect(await pendingMerge(store)).toMatchObject({ batches: 1, rows: 1 });
    expect(await runMerge(opts())).toMatchObject({ version: 'v000002', batches: 1, rowsIn: 1 });
    expect(await json('v000002')).toMatchObject({ v: 2, count: 5, sets: [{ crawl: 'CC-MAIN-2030-40', count: 4, runs: '7+2,1+1,1+1' }] });
    // the totals the old version lacked: its markers counted once by this merge, plus the new one
    expect((await statusOf('v000002'))['ingested']).toEqual([{ datasetId: 1, batches: 5, rows: 5, failed: 0 }]);
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      const v = (await src.current()) as unknown as { batchesMerged(): ReadonlyMap<number, number> };
      expect([...v.batchesMerged()]).toEqual([[1, 5]]);
    } finally {
      await src.close();
    }
  });

  it('a merge over a version whose dictionary holds a key its allocator never handed out is refused before it writes a file', async () => {
    await putBatch(store, 1, 'b1', ['a', 'b', 'c'].map((x) => row(1, `https://${x}.example/`, '20300101000000')));
    await runMerge(opts({ indexShards: { maxDomains: 2 } }));
    // the second shard's only key gets path bits: a block key never has them (checksummed again, so only the key check can tell)
    await rewriteVersion(store, 'v000001', async (put) => {
      const b = Buffer.from((await store.get(indexLayout.versionFile('v000001', 'domains-0001.bin')))!);
      b.writeUInt8(b.readUInt8(12) | 1, 12);
      await put('domains-0001.bin', b);
    });
    await putBatch(store, 1, 'b2', [row(1, 'https://d.example/', '20300102000000')]);
    await expect(runMerge(opts({ indexShards: { maxDomains: 2 } }))).rejects.toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT', message: expect.stringMatching(/never assigned/) }));
    const v2: string[] = [];
    for (const prefix of ['urls/', 'index/v000002/']) for await (const o of store.list(prefix)) if (o.key.includes('v000002')) v2.push(o.key);
    expect([(await manifest()).current, v2]).toEqual(['v000001', []]);
  });

  it('a merge over a version with a damaged or missing shard file fails before it publishes; rerunning after the repair completes', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((x) => `${x}.example`);
    await putBatch(store, 1, 'b1', names.map((d) => row(1, `https://${d}/`, '20300101000000')));
    await runMerge(opts({ indexShards: { maxDomains: 3 } }));
    await putBatch(store, 1, 'b2', [row(1, 'https://h.example/', '20300102000000')]);
    // the last shard: the merge reads the shards one at a time, and still checks every one of them
    const key = indexLayout.versionFile('v000001', 'postings-0002.bin');
    const good = Buffer.from((await store.get(key))!);
    const manifest = async () => JSON.parse(await readFile(join(dir, indexLayout.manifest()), 'utf8')) as IndexManifest;
    /** Keys a failed merge left of version 2: none, since the previous index is checked before anything is written. */
    const leftOfV2 = async () => {
      const keys: string[] = [];
      for (const prefix of ['urls/', 'lakeidx/', 'index/v000002/']) for await (const o of store.list(prefix)) if (o.key.includes('v000002')) keys.push(o.key);
      return keys;
    };
    await store.put(key, Buffer.from(good.map((b, i) => (i === good.length - 1 ? b ^ 0xff : b))));
    await expect(runMerge(opts({ indexShards: { maxDomains: 3 } }))).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC' });
    expect([(await manifest()).current, await leftOfV2()]).toEqual(['v000001', []]);
    await store.delete(key);
    await expect(runMerge(opts({ indexShards: { maxDomains: 3 } }))).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_MISSING' });
    expect([(await manifest()).current, await leftOfV2()]).toEqual(['v000001', []]);
    await store.put(key, good);
    expect(await runMerge(opts({ indexShards: { maxDomains: 3 } }))).toMatchObject({ version: 'v000002', domains: 8 });
  });

  /** Flips the last byte of a stored file (its CRC no longer matches); returns the good bytes. */
  const damage = async (key: string): Promise<Buffer> => {
    const good = Buffer.from((await store.get(key))!);
    const bad = Buffer.from(good);
    bad.writeUInt8(bad.readUInt8(bad.length - 1) ^ 0xff, bad.length - 1);
    await store.put(key, bad);
    return good;
  };

  it('a CRC mismatch in an index file is detected when the version is loaded', async () => {
    await putBatch(store, 1, 'b1', [row(1, 'https://one.example/', '20300101000000')]);
    await runMerge(opts());
    const key = indexLayout.versionFile('v000001', 'postings-0000.bin');
    const bytes = Buffer.from((await store.get(key))!);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 5) ^ 0xff, bytes.length - 5);
    await store.put(key, bytes);
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      await expect(src.current()).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC' });
    } finally {
      await src.close();
    }
    // With a good version already loaded, a corrupt new one is reported and the old view keeps serving.
    await store.put(key, Buffer.from(bytes.map((b, i) => (i === bytes.length - 5 ? b ^ 0xff : b))));
    const errors: unknown[] = [];
    const src2 = await openIndexSource({ store, dataDir: dir, pollMs: 0, onError: (e) => errors.push(e) });
    try {
      expect((await src2.current())!.version).toBe('v000001');
      await putBatch(store, 1, 'b2', [row(1, 'https://two.example/', '20300101000000')]);
      await runMerge(opts());
      const tocKey = indexLayout.versionFile('v000002', 'domains-0000.bin');
      const good = await damage(tocKey);
      expect((await src2.current())!.version).toBe('v000001');
      expect(errors).toEqual([expect.objectContaining({ code: 'CCP_ERR_INDEX_CRC' })]);
      // not read again at every poll (each attempt reads the whole index): after 10 s, then 20 s, …
      let now = Date.now();
      const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
      try {
        for (const _ of [1, 2, 3]) expect((await src2.current())!.version).toBe('v000001');
        expect(await src2.at('v000002')).toBeNull(); // a page pinned to it: gone for now, not a load per request
        expect(errors).toHaveLength(1);
        // what /v1/status shows: the version, why, and when it is tried again
        const failure = src2.loadFailure();
        expect(failure).toMatchObject({ version: 'v000002', code: 'CCP_ERR_INDEX_CRC' });
        expect(Date.parse(failure!.retryAt) - Date.parse(failure!.at)).toBe(10_000);
        now += 10_001;
        expect((await src2.current())!.version).toBe('v000001');
        expect(errors).toHaveLength(2);
        now += 10_001; // the pause has doubled
        expect((await src2.current())!.version).toBe('v000001');
        expect(errors).toHaveLength(2);
        // repaired (so the merger can build on it) and merged past: v000003 is loaded at the next poll, the pause on
        // v000002 holds nothing back
        await store.put(tocKey, good);
        await putBatch(store, 1, 'b3', [row(1, 'https://three.example/', '20300102000000')]);
        await runMerge(opts());
        expect((await src2.current())!.version).toBe('v000003');
        expect(errors).toHaveLength(2);
        expect(src2.loadFailure()).toBeNull(); // cleared by the load that succeeded
      } finally {
        clock.mockRestore();
      }
    } finally {
      await src2.close();
    }
  });
});
