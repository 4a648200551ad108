import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsObjectStore, closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { readParquetRows } from '../../../tests/support/parquet';
import { partRow, putBatch } from '../../../tests/support/batches';
import { indexLayout, parseJson, type LakeFileEntry } from './format';
import { ORDERINGS_FILE, positionsOf, type OrderingFile } from './orderings';
import { runMerge, type MergeOptions } from './run-merge';
import { openIndexSource } from './index-source';
import { parseStatusMatch, type AcrossKey, type AcrossQuery, type AcrossResult } from '@ccpipe/core';

let dir: string;
let store: FsObjectStore;
let clock = Date.parse('2030-01-01T00:00:00Z');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-orderings-'));
  store = new FsObjectStore({ root: dir });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterAll(async () => {
  await closeDuckDbParquetEngine();
});

const opts = (over: Partial<MergeOptions> = {}): MergeOptions => ({
  store, dataDir: dir, rowGroupSize: 2048, keepVersions: 1, graceMs: 0, now: () => new Date(clock), partitionBits: 2, ...over,
});

async function json<T>(version: string, name: string): Promise<T> {
  return parseJson<T>((await store.get(indexLayout.versionFile(version, name)))!, name);
}

/** Rows of `n` URLs over a few domains, with sizes, statuses and times that tie. */
function rowsOf(datasetId: number, n: number, tag: string) {
  return Array.from({ length: n }, (_, i) =>
    partRow(datasetId, `https://d${i % 7}.example/${tag}/${i}`, `2030010${1 + (i % 3)}00000${i % 5}`, { status: [200, 404, 301, 500][i % 4]!, contentLength: (i * 37) % 1000 }),
  );
}

describe('secondary orderings at merge', () => {
  it('orderings sort every row of the dataset by time, size and status class; untouched datasets carry theirs over; old ones are collected', async () => {
    await putBatch(store, 1, 'a', rowsOf(1, 120, 'a'));
    await putBatch(store, 2, 'b', rowsOf(2, 50, 'b'));
    const r1 = await runMerge(opts());
    const o1 = await json<OrderingFile[]>(r1.version!, ORDERINGS_FILE);
    // status: the rows outside 2xx (statuses cycle 200, 404, 301, 500)
    expect(o1.map((o) => [o.datasetId, o.kind, o.rows])).toEqual([[1, 'ts', 120], [1, 'size', 120], [1, 'status', 90], [2, 'ts', 50], [2, 'size', 50], [2, 'status', 37]]);

    // each ordering against the lake read back: positions over files.json order, sorted by the ordering's key
    const files = await json<LakeFileEntry[]>(r1.version!, 'files.json');
    for (const d of [1, 2]) {
      const rows: { ts: number; size: number; status: number; pos: number }[] = [];
      for (const { file, base } of positionsOf(files, d)) {
        (await readParquetRows((await store.get(file.key))!)).forEach((r, i) => rows.push({ ts: Number(r['ts']) / 1000, size: Number(r['content_length']), status: Number(r['status']), pos: base + i }));
      }
      const read = async (kind: string) => readParquetRows((await store.get(o1.find((o) => o.datasetId === d && o.kind === kind)!.key))!);
      const by = (...k: ((r: (typeof rows)[number]) => number)[]) => [...rows].sort((a, b) => k.map((f) => f(a) - f(b)).find((x) => x !== 0) ?? 0).map((r) => r.pos);
      expect((await read('ts')).map((r) => Number(r['pos']))).toEqual(by((r) => r.ts, (r) => r.pos));
      expect((await read('size')).map((r) => Number(r['pos']))).toEqual(by((r) => r.size, (r) => r.pos));
      const st = await read('status');
      const outside2xx = new Set(rows.filter((r) => Math.floor(r.status / 100) !== 2).map((r) => r.pos));
      expect(st.map((r) => Number(r['pos']))).toEqual(by((r) => Math.floor(r.status / 100), (r) => r.ts, (r) => r.pos).filter((p) => outside2xx.has(p)));
      expect(st.map((r) => Number(r['status']))).toEqual(st.map((r) => rows.find((x) => x.pos === Number(r['pos']))!.status));
    }

    // a merge writing only dataset 1 (30 rows: 20 % of it): dataset 2's orderings are carried over by key, dataset 1
    // keeps its base and gets a delta over the files written since
    clock += 1000;
    await putBatch(store, 1, 'c', rowsOf(1, 30, 'c'));
    const r2 = await runMerge(opts());
    const o2 = await json<OrderingFile[]>(r2.version!, ORDERINGS_FILE);
    expect(o2.filter((o) => o.datasetId === 2)).toEqual(o1.filter((o) => o.datasetId === 2));
    expect(o2.filter((o) => o.datasetId === 1 && o.layer === undefined)).toEqual(o1.filter((o) => o.datasetId === 1));
    const delta = o2.filter((o) => o.datasetId === 1 && o.layer === 'delta');
    expect(delta.map((o) => [o.kind, o.key.includes(`-delta-${r2.version!}`)])).toEqual([['ts', true], ['size', true], ['status', true]]);
    // the delta covers the files written since the base (new rows, and the runs they folded in)
    expect(delta[0]!.rows).toBe(r2.rowsWritten);

    // v1 is collected (keepVersions 1, no grace): its dataset-1 orderings go, dataset 2's stay (v2 lists them)
    const left = (await readdir(join(dir, 'order'), { recursive: true })).filter((f) => f.endsWith('.parquet')).map((f) => `order/${f}`).sort();
    expect(left).toEqual(o2.map((o) => o.key).sort());
  });

  it('orderings: false writes none', async () => {
    await putBatch(store, 1, 'a', rowsOf(1, 10, 'a'));
    const r = await runMerge(opts({ orderings: false }));
    const toc = await json<{ files: Record<string, unknown> }>(r.version!, 'version.json');
    expect(Object.keys(toc.files)).not.toContain(ORDERINGS_FILE);
  });

  it('a base and its delta across many small merges: every live row once in order, dead entries skipped, the base rebuilt past its share', async () => {
    const layers: string[] = [];
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      for (let m = 0; m < 7; m++) {
        clock += 1000;
        // new URLs, and recaptures of earlier ones (they supersede rows, so runs are folded and base entries die)
        const fresh = rowsOf(1, m === 0 ? 800 : 20, `m${m}`);
        const again = m % 2 === 0 ? [] : rowsOf(1, 2, 'm0').map((r) => ({ ...r, timestamp: `2030020${m}000000`, contentLength: 5000 + m }));
        await putBatch(store, 1, `b${m}`, [...fresh, ...again]);
        const r = await runMerge(opts({ partitionBits: 4 }));
        const o = await json<OrderingFile[]>(r.version!, ORDERINGS_FILE);
        layers.push(o.some((x) => x.layer === 'delta') ? 'delta' : 'base');
        // the lake read back: each live row with its position
        const files = await json<LakeFileEntry[]>(r.version!, 'files.json');
        const rows: { url: string; ts: number; size: number; status: number; pos: number }[] = [];
        for (const { file, base } of positionsOf(files, 1)) {
          expect(file.posBase).toBe(base);
          (await readParquetRows((await store.get(file.key))!)).forEach((x, i) =>
            rows.push({ url: x['url'] as string, ts: Number(x['ts']) / 1000, size: Number(x['content_length']), status: Number(x['status']), pos: base + i }));
        }
        const v = (await src.current())!;
        expect(v.version).toBe(r.version);
        const walk = async (q: Partial<AcrossQuery>) => {
          const seen: string[] = [];
          let after: AcrossKey | null = null;
          for (let guard = 0; guard < 1000; guard++) {
            const p: AcrossResult = (await v.pagesAcross!({ datasetIds: null, from: null, to: null, status: null, minSize: null, maxSize: null, sort: 'ts', order: 'asc', limit: 17, ...q, after }))!;
            seen.push(...p.items.map((i) => i.url));
            if (p.next === null) return seen;
            after = p.next;
          }
          throw new Error('paging did not end');
        };
        const want = (keep: (x: (typeof rows)[number]) => boolean, value: (x: (typeof rows)[number]) => number, desc = false) =>
          rows.filter(keep).sort((a, b) => (desc ? -1 : 1) * (value(a) - value(b) || a.pos - b.pos)).map((x) => x.url);
        expect(await walk({})).toEqual(want(() => true, (x) => x.ts));
        expect(await walk({ order: 'desc' })).toEqual(want(() => true, (x) => x.ts, true));
        expect(await walk({ sort: 'size', order: 'desc', minSize: 300 })).toEqual(want((x) => x.size >= 300, (x) => x.size, true));
        expect(await walk({ status: parseStatusMatch('4xx,5xx') })).toEqual(want((x) => x.status >= 400, (x) => x.ts));
        expect(new Set(rows.map((x) => x.url)).size).toBe(rows.length);
      }
    } finally {
      await src.close();
    }
    // small merges write deltas; once the delta (or the dead part of the base) passes its share, the base is rebuilt
    expect(layers[0]).toBe('base');
    expect(layers).toContain('delta');
    expect(layers.slice(1)).toContain('base');
  });
});
