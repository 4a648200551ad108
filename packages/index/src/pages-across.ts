import { NO_TIME, matchesPage, type AcrossKey, type AcrossQuery, type PageRow } from '@ccpipe/core';
import type { LakeFileEntry } from './format';
import type { OrderingFile } from './orderings';

/** How the across-domains reader reads ordering files (ParquetLakeReader's `numbers` and `statsOf`). */
export interface OrderingReads {
  numbers(file: LakeFileEntry, from: number, to: number, names: readonly string[]): Promise<Float64Array[]>;
  statsOf(file: LakeFileEntry, column: string): Promise<{ starts: readonly number[]; min: Float64Array; max: Float64Array }>;
}

/** One entry of an ordering: its sort value, its position in its dataset and (status ordering) its status. */
export interface OrderingEntry {
  datasetId: number;
  value: number;
  position: number;
}

/** Entries examined at most for one page (a filter no ordering answers is checked row by row). */
export const MAX_SCAN = 50_000;

/** An ordering file as the reader addresses it. */
const asFile = (o: OrderingFile): LakeFileEntry => ({ key: o.key, datasetId: o.datasetId, prefix: '', rows: o.rows, bytes: o.bytes, crc32: o.crc32, rowGroups: [] });

/** Lexicographic comparison of two tuples of equal length. */
function cmpTuple(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

/**
 * A contiguous range [lo, hi) of one ordering file whose entries share the filters' answer, read in one direction:
 * the time or size ordering under a range of its key, or one status class of the status ordering (sorted by time
 * within it).
 */
class Segment {
  private buf: { value: Float64Array; pos: Float64Array; status: Float64Array | null; at: number; from: number } | null = null;

  constructor(
    readonly o: OrderingFile,
    readonly reads: OrderingReads,
    /** Columns the entries are sorted by (the last is `pos`); `prefix` fixes the leading ones (the status class). */
    readonly cols: readonly string[],
    readonly prefix: readonly number[],
    public lo: number,
    public hi: number,
    /** Exact status codes an entry must have (status ordering with codes asked for), else null. */
    readonly codes: ReadonlySet<number> | null,
    readonly desc: boolean,
  ) {}

  get valueCol(): string {
    return this.cols[this.prefix.length]!;
  }

  /** The first index in [0, rows] whose sort tuple is ≥ `key` (a prefix of the columns' tuple). */
  static async firstAtLeast(o: OrderingFile, reads: OrderingReads, cols: readonly string[], key: readonly number[]): Promise<number> {
    const file = asFile(o);
    const stats = await Promise.all(cols.slice(0, key.length).map((c) => reads.statsOf(file, c)));
    const starts = stats[0]!.starts;
    const groups = starts.length - 1;
    // a group's maxima, column by column, bound its last entry from above: the first group whose bound reaches the key
    // is where the boundary may lie; when it does not, the next one (at most a few decodes)
    for (let g = 0; g < groups; g++) {
      const bound = stats.map((s) => (Number.isNaN(s.max[g]!) ? Infinity : s.max[g]!));
      if (cmpTuple(bound, key) < 0) continue;
      // every sort column, not only the key's: the page then reads this group from the cache, one fetch per group
      const cs = (await reads.numbers(file, starts[g]!, starts[g + 1]!, cols)).slice(0, key.length);
      const n = starts[g + 1]! - starts[g]!;
      let lo = 0;
      let hi = n;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (cmpTuple(cs.map((c) => c[mid]!), key) < 0) lo = mid + 1;
        else hi = mid;
      }
      if (lo < n) return starts[g]! + lo;
    }
    return starts[groups] ?? 0;
  }

  /** The next entry in this segment's direction (null at its end); entries failing `codes` are skipped. */
  async next(): Promise<(OrderingEntry & { status: number | null }) | null> {
    for (;;) {
      if (this.lo >= this.hi) return null;
      const i = this.desc ? this.hi - 1 : this.lo;
      if (this.buf === null || i < this.buf.from || i >= this.buf.from + this.buf.value.length) await this.fill(i);
      const b = this.buf!;
      const k = i - b.from;
      if (this.desc) this.hi--;
      else this.lo++;
      const status = b.status === null ? null : b.status[k]!;
      if (this.codes !== null && status !== null && !this.codes.has(status)) continue;
      return { datasetId: this.o.datasetId, value: b.value[k]!, position: b.pos[k]!, status };
    }
  }

  /** The sort value and position of the entry at `i`, without moving. */
  async peek(): Promise<OrderingEntry | null> {
    const save = [this.lo, this.hi];
    const e = await this.next();
    [this.lo, this.hi] = save as [number, number];
    return e;
  }

  private async fill(i: number): Promise<void> {
    const chunk = 2048;
    const from = this.desc ? Math.max(this.lo, i + 1 - chunk) : i;
    const to = this.desc ? i + 1 : Math.min(this.hi, i + chunk);
    const names = [this.valueCol, 'pos', ...(this.codes !== null ? ['status'] : [])];
    const [value, pos, status] = await this.reads.numbers(asFile(this.o), from, to, names);
    this.buf = { value: value!, pos: pos!, status: status ?? null, at: 0, from };
  }
}

/**
 * The rows an ordering page needs, fetched from the lake by dataset and position; null for an entry whose file was
 * replaced since its ordering was built (a dead entry of a base, orderings.ts: skipped).
 */
export type FetchRows = (entries: readonly OrderingEntry[]) => Promise<((PageRow & { domain: string; urlId: string }) | null)[]>;

/**
 * One page across domains (see {@link AcrossResult}): the orderings of each dataset asked for are cut to the filters
 * they answer — the time ordering to [from, to), the size ordering to [min_size, max_size], the status ordering (rows
 * outside 2xx) to the classes asked for (and [from, to) within each, which it sorts by time) — then merged across datasets by
 * (value, dataset, position) in the query's direction, starting after `q.after`; the lake rows of the entries are
 * fetched and checked against the filters no ordering answered. A dataset's base and delta (orderings.ts) are two
 * more ranges of the merge; the base's dead entries are skipped, and make `total` unknown for the datasets that have
 * them (`dead(datasetId)`). Returns null when a dataset asked for has no ordering of the kind needed.
 */
export async function pagesAcross(
  q: AcrossQuery, orderings: readonly OrderingFile[], reads: OrderingReads, fetch: FetchRows, dead: (datasetId: number) => boolean = () => false,
): Promise<{ items: (PageRow & { domain: string; urlId: string })[]; total: number | null; next: AcrossKey | null } | null> {
  const datasets = q.datasetIds ?? [...new Set(orderings.map((o) => o.datasetId))];
  // the status ordering holds the rows outside 2xx: a query naming 2xx walks the time ordering and checks each row
  const with2xx = q.status !== null && (q.status.classes.has(2) || [...q.status.codes].some((c) => Math.floor(c / 100) === 2));
  const useStatus = q.sort === 'ts' && q.status !== null && !with2xx;
  const kind = useStatus ? 'status' : q.sort;
  const desc = q.order === 'desc';
  const classes = q.status === null ? [] : [...new Set([...q.status.classes, ...[...q.status.codes].map((c) => Math.floor(c / 100))])].sort();
  const codes = useStatus && q.status !== null && q.status.codes.size > 0 ? new Set([...q.status.codes, ...[...q.status.classes].flatMap((c) => Array.from({ length: 100 }, (_, k) => c * 100 + k))]) : null;
  // a time bound leaves out the rows without a time (NO_TIME, first in the time ordering)
  const [lo, hi] = q.sort === 'ts' ? [q.from ?? (q.to !== null ? NO_TIME + 1 : -Infinity), q.to ?? Infinity] : [q.minSize ?? -Infinity, q.maxSize === null ? Infinity : q.maxSize + 1];
  const segments: Segment[] = [];
  /** Entries under the filters the orderings answer, before the cursor cuts them. */
  let inRange = 0;
  let withDead = false;
  for (const d of datasets) {
    const layers = orderings.filter((x) => x.datasetId === d && x.kind === kind);
    if (layers.length === 0) {
      if (orderings.some((x) => x.datasetId === d)) return null; // no such ordering (no content_length in the lake)
      continue; // a dataset without rows in this version
    }
    withDead ||= dead(d);
    const cols = kind === 'status' ? ['cls', 'ts', 'pos'] : [kind, 'pos'];
    const ranges: [OrderingFile, number[]][] = layers.flatMap((o): [OrderingFile, number[]][] => (kind === 'status' ? classes.map((c) => [o, [c]]) : [[o, []]]));
    for (const [o, prefix] of ranges) {
      const start = await Segment.firstAtLeast(o, reads, cols, [...prefix, lo]);
      const end = await Segment.firstAtLeast(o, reads, cols, [...prefix, hi]);
      if (end <= start) continue;
      inRange += end - start;
      const seg = new Segment(o, reads, cols, prefix, start, end, codes, desc);
      if (q.after !== null) {
        // the first entry after the cursor in (value, dataset, position) order, within this segment
        const a = q.after;
        const pos = d > a.datasetId ? -Infinity : d < a.datasetId ? Infinity : desc ? a.position : a.position + 1;
        const cut = await Segment.firstAtLeast(o, reads, cols, [...prefix, a.value, pos]);
        if (desc) seg.hi = Math.min(seg.hi, cut);
        else seg.lo = Math.max(seg.lo, cut);
      }
      segments.push(seg);
    }
  }
  // the residual filters: what the chosen ordering does not answer
  const residual = {
    datasetIds: null, status: useStatus ? null : q.status,
    from: q.sort === 'ts' ? null : q.from, to: q.sort === 'ts' ? null : q.to,
    minSize: q.sort === 'size' ? null : q.minSize, maxSize: q.sort === 'size' ? null : q.maxSize,
  };
  const exact = residual.status === null && residual.from === null && residual.to === null && residual.minSize === null && residual.maxSize === null && codes === null;
  const total = exact && !withDead ? inRange : null;

  const heads = await Promise.all(segments.map((s) => s.peek()));
  const dir = desc ? -1 : 1;
  const order = (a: OrderingEntry, b: OrderingEntry): number => dir * (a.value - b.value || a.datasetId - b.datasetId || a.position - b.position);
  const items: (PageRow & { domain: string; urlId: string })[] = [];
  let last: OrderingEntry | null = null;
  let scanned = 0;
  let more = true;
  while (items.length < q.limit && scanned < MAX_SCAN) {
    const want = Math.min(Math.max(q.limit - items.length, 64), MAX_SCAN - scanned);
    const batch: OrderingEntry[] = [];
    while (batch.length < want) {
      let best = -1;
      heads.forEach((h, k) => {
        if (h !== null && (best < 0 || order(h, heads[best]!) < 0)) best = k;
      });
      if (best < 0) break;
      const e = (await segments[best]!.next())!;
      heads[best] = await segments[best]!.peek();
      batch.push({ datasetId: e.datasetId, value: e.value, position: e.position });
    }
    if (batch.length === 0) {
      more = false;
      break;
    }
    scanned += batch.length;
    const rows = await fetch(batch);
    for (let k = 0; k < batch.length; k++) {
      const row = rows[k];
      if (row === null || row === undefined || !matchesPage(row, residual)) continue;
      items.push(row);
      last = batch[k]!;
      if (items.length === q.limit) {
        // the page ends here: the entries after it in this batch are read again by the next page
        if (k < batch.length - 1) more = true;
        else more = heads.some((h) => h !== null);
        return { items, total, next: more ? last : null };
      }
    }
    last = batch[batch.length - 1]!;
  }
  more = more && heads.some((h) => h !== null);
  return { items, total, next: more && last !== null ? last : null };
}
