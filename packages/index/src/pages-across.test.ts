import { parseStatusMatch, type AcrossKey, type AcrossQuery, type PageRow } from '@ccpipe/core';
import type { LakeFileEntry } from './format';
import type { OrderingFile } from './orderings';
import { pagesAcross, type OrderingEntry, type OrderingReads } from './pages-across';

/** One dataset's rows by position, with what the orderings and the filters read. */
interface Row {
  ts: number;
  size: number;
  status: number;
}

/** Deterministic rows: many ties in time and size, statuses of four classes. */
function rowsOf(n: number, seed: number): Row[] {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const statuses = [200, 200, 200, 204, 301, 404, 410, 500];
  return Array.from({ length: n }, () => ({ ts: 1000 + Math.floor(rnd() * 300), size: Math.floor(rnd() * 50) * 100, status: statuses[Math.floor(rnd() * statuses.length)]! }));
}

/** Ordering files held as sorted column arrays, cut into row groups of `group` rows with min/max per group. */
class ArrayOrderings implements OrderingReads {
  readonly files: OrderingFile[] = [];
  private readonly cols = new Map<string, Record<string, number[]>>();
  groupsRead = new Set<string>();

  constructor(data: Map<number, Row[]>, private readonly group: number) {
    for (const [d, rows] of data) {
      const idx = rows.map((_, i) => i);
      const add = (kind: OrderingFile['kind'], order: number[], cols: Record<string, (i: number) => number>): void => {
        const key = `order/${d}/${kind}`;
        this.cols.set(key, Object.fromEntries(Object.entries(cols).map(([n, f]) => [n, order.map(f)])));
        this.files.push({ datasetId: d, kind, key, bytes: 0, crc32: 0, rows: order.length });
      };
      const by = (...keys: ((i: number) => number)[]) => [...idx].sort((a, b) => { for (const k of keys) if (k(a) !== k(b)) return k(a) - k(b); return 0; });
      const [ts, size, cls, pos] = [(i: number) => rows[i]!.ts, (i: number) => rows[i]!.size, (i: number) => Math.floor(rows[i]!.status / 100), (i: number) => i];
      add('ts', by(ts, pos), { ts, pos });
      add('size', by(size, pos), { size, pos });
      add('status', by(cls, ts, pos).filter((i) => cls(i) !== 2), { cls, ts, pos, status: (i) => rows[i]!.status });
    }
  }

  async numbers(file: LakeFileEntry, from: number, to: number, names: readonly string[]): Promise<Float64Array[]> {
    for (let g = Math.floor(from / this.group); g * this.group < to; g++) this.groupsRead.add(`${file.key}#${g}`);
    return names.map((n) => Float64Array.from(this.cols.get(file.key)![n]!.slice(from, to)));
  }

  async statsOf(file: LakeFileEntry, column: string): Promise<{ starts: number[]; min: Float64Array; max: Float64Array }> {
    const v = this.cols.get(file.key)![column]!;
    const starts: number[] = [];
    for (let i = 0; i < v.length; i += this.group) starts.push(i);
    starts.push(v.length);
    const groups = starts.length - 1;
    const min = new Float64Array(groups);
    const max = new Float64Array(groups);
    for (let g = 0; g < groups; g++) {
      const part = v.slice(starts[g], starts[g + 1]);
      min[g] = Math.min(...part);
      max[g] = Math.max(...part);
    }
    return { starts, min, max };
  }
}

const data = new Map([[1, rowsOf(900, 3)], [2, rowsOf(500, 11)]]);
const fetchOf = (rows: Map<number, Row[]>) => async (entries: readonly OrderingEntry[]) =>
  entries.map((e) => {
    const r = rows.get(e.datasetId)![e.position]!;
    return { datasetId: e.datasetId, url: `https://d${e.datasetId}.example/${e.position}`, surt: '', ts: r.ts, status: r.status, title: null, contentLength: r.size, language: null, domain: 'x', urlId: '0' } satisfies PageRow & { domain: string; urlId: string };
  });

const base: AcrossQuery = { datasetIds: null, from: null, to: null, status: null, minSize: null, maxSize: null, sort: 'ts', order: 'asc', after: null, limit: 37 };

async function walk(o: ArrayOrderings, q: AcrossQuery) {
  const seen: string[] = [];
  const totals = new Set<number | null>();
  let after: AcrossKey | null = null;
  for (let guard = 0; guard < 1000; guard++) {
    const p: Awaited<ReturnType<typeof pagesAcross>> & object = (await pagesAcross({ ...q, after }, o.files, o, fetchOf(data)))!;
    seen.push(...p.items.map((i) => i.url));
    totals.add(p.total);
    if (p.next === null) return { seen, totals };
    after = p.next;
  }
  throw new Error('paging did not end');
}

describe('pagesAcross over orderings cut into many row groups', () => {
  const expected = (keep: (r: Row) => boolean, value: (r: Row) => number, desc: boolean): string[] => {
    const all: { url: string; v: number; d: number; p: number }[] = [];
    for (const [d, rows] of data) rows.forEach((r, p) => keep(r) && all.push({ url: `https://d${d}.example/${p}`, v: value(r), d, p }));
    all.sort((a, b) => (desc ? -1 : 1) * (a.v - b.v || a.d - b.d || a.p - b.p));
    return all.map((x) => x.url);
  };

  it.each([
    ['a time range', { from: 1100, to: 1200 }, (r: Row) => r.ts >= 1100 && r.ts < 1200, (r: Row) => r.ts, true],
    ['a time range, newest first', { from: 1100, to: 1200, order: 'desc' as const }, (r: Row) => r.ts >= 1100 && r.ts < 1200, (r: Row) => r.ts, true],
    ['sizes, largest first', { sort: 'size' as const, minSize: 2000, order: 'desc' as const }, (r: Row) => r.size >= 2000, (r: Row) => r.size, true],
    ['status classes by time', { status: parseStatusMatch('3xx,5xx') }, (r: Row) => r.status >= 300 && r.status < 400 || r.status >= 500, (r: Row) => r.ts, true],
    ['a status code and a time range', { status: parseStatusMatch('404'), from: 1050, order: 'desc' as const }, (r: Row) => r.status === 404 && r.ts >= 1050, (r: Row) => r.ts, false],
    ['2xx by time, checked row by row on the time ordering', { status: parseStatusMatch('2xx,404'), to: 1200 }, (r: Row) => (r.status < 300 || r.status === 404) && r.ts < 1200, (r: Row) => r.ts, false],
    ['a time range checked for size row by row', { from: 1000, to: 1150, minSize: 3000 }, (r: Row) => r.ts < 1150 && r.size >= 3000, (r: Row) => r.ts, false],
  ])('%s: every matching row once, in (value, dataset, position) order, with the right total', async (_n, q, keep, value, exact) => {
    const o = new ArrayOrderings(data, 64);
    const want = expected(keep, value, (q as { order?: string }).order === 'desc');
    const { seen, totals } = await walk(o, { ...base, ...q });
    expect(seen).toEqual(want);
    expect(totals).toEqual(new Set([exact ? want.length : null]));
  });

  it('a first page reads the row groups around its start, not the ordering', async () => {
    const o = new ArrayOrderings(data, 64);
    const p = (await pagesAcross({ ...base, from: 1150, to: 1160, datasetIds: [1], limit: 20 }, o.files, o, fetchOf(data)))!;
    expect(p.items.length).toBeGreaterThan(0);
    expect(o.groupsRead.size).toBeLessThanOrEqual(3);
  });

  it('null when a dataset asked for lacks the ordering a query needs', async () => {
    const o = new ArrayOrderings(data, 64);
    const noSize = o.files.filter((f) => f.kind !== 'size');
    expect(await pagesAcross({ ...base, sort: 'size' }, noSize, o, fetchOf(data))).toBeNull();
  });
});
