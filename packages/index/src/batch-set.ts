import { layout } from '@ccpipe/core';
import { IndexFormatError, jsonBytes, parseJson } from './format';

/**
 * The batch markers a version has folded in (`batches.json`), held compactly. Marker keys are
 * `batches/dataset_id=<id>/<crawl>__<block, 8 digits>__<seq, 4 digits>/_SUCCESS.json` (core's `batchId` and `layout`),
 * and a crawl's batches are numbered densely: each CDX block yields seq 0, 1, … So each (dataset, crawl) is kept as
 * sorted runs of consecutive numbers `block × 10⁴ + seq`, one run per block in the common case — a Common Crawl crawl
 * (≈ 2.5M batches of 500 records) is ≈ 1M runs instead of 2.5M strings of ≈ 70 B: batches.json ≈ 6 MB instead of
 * ≈ 170 MB, and no longer 0.5 GB of JS strings in the merger and in every API replica. A key of any other shape is
 * kept as it is (`other`).
 *
 * File (version 2): `{"v": 2, "count": n, "sets": [{"dataset_id", "crawl", "count", "runs"}], "other": [keys]}`, where
 * `runs` is comma-separated tokens `<block delta>[.<first seq>]+<length>` in base 36 (block delta from the previous
 * run's block; first seq omitted when 0). Version 1, a sorted JSON array of every key, is still read.
 */
export class BatchSet {
  private constructor(
    private readonly groups: Map<string, Group>,
    private readonly other: ReadonlySet<string>,
    readonly size: number,
  ) {}

  static empty(): BatchSet {
    return new BatchSet(new Map(), new Set(), 0);
  }

  /** Version 1 (array of keys) or 2. @throws IndexFormatError CCP_ERR_INDEX_FORMAT */
  static parse(b: Uint8Array): BatchSet {
    const j = parseJson<unknown>(b, 'batches.json');
    if (Array.isArray(j)) return BatchSet.empty().with(j.map(String));
    const bad = (reason: string) => new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'batches.json cannot be read', { reason });
    const f = j as Partial<BatchesFile> | null;
    if (f === null || typeof f !== 'object' || f.v !== 2 || !Array.isArray(f.sets) || !Array.isArray(f.other)) throw bad('not version 1 or 2');
    const groups = new Map<string, Group>();
    let size = f.other.length;
    for (const s of f.sets) {
      if (!Number.isInteger(s.dataset_id) || typeof s.crawl !== 'string' || !CRAWL.test(s.crawl) || !Number.isInteger(s.count) || typeof s.runs !== 'string') throw bad('set');
      groups.set(groupKey(s.dataset_id, s.crawl), { datasetId: s.dataset_id, crawl: s.crawl, count: s.count, encoded: s.runs, runs: null });
      size += s.count;
    }
    if (size !== f.count) throw bad('count');
    return new BatchSet(groups, new Set(f.other.map(String)), size);
  }

  /** Whether the marker `key` is in the set. */
  has(key: string): boolean {
    const p = parseMarker(key);
    if (p === null) return this.other.has(key);
    const g = this.groups.get(groupKey(p.datasetId, p.crawl));
    if (g === undefined) return false;
    const { starts, ends } = runsOf(g);
    // the last run starting at or before n
    let lo = 0;
    let hi = starts.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid]! <= p.n) {
        at = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return at >= 0 && p.n < ends[at]!;
  }

  /** A new set holding these markers and `keys` (duplicates count once). */
  with(keys: Iterable<string>): BatchSet {
    const added = new Map<string, { datasetId: number; crawl: string; ns: number[] }>();
    const other = new Set(this.other);
    for (const key of keys) {
      const p = parseMarker(key);
      if (p === null) {
        other.add(key);
        continue;
      }
      const gk = groupKey(p.datasetId, p.crawl);
      let a = added.get(gk);
      if (a === undefined) added.set(gk, (a = { datasetId: p.datasetId, crawl: p.crawl, ns: [] }));
      a.ns.push(p.n);
    }
    const groups = new Map(this.groups);
    for (const [gk, a] of added) {
      const old = groups.get(gk);
      const runs = mergeRuns(old === undefined ? { starts: [], ends: [] } : runsOf(old), a.ns);
      groups.set(gk, { datasetId: a.datasetId, crawl: a.crawl, count: countOf(runs), encoded: null, runs });
    }
    let size = other.size;
    for (const g of groups.values()) size += g.count;
    return new BatchSet(groups, other, size);
  }

  /** Markers per dataset id (keys of another shape are counted under the dataset their path names, when it does). */
  countByDataset(): Map<number, number> {
    const by = new Map<number, number>();
    for (const g of this.groups.values()) by.set(g.datasetId, (by.get(g.datasetId) ?? 0) + g.count);
    for (const key of this.other) {
      const id = layout.batchDatasetOf(key);
      if (id !== null) by.set(id, (by.get(id) ?? 0) + 1);
    }
    return by;
  }

  /** Every marker key, sorted within each (dataset, crawl), then the others. */
  *keys(): Generator<string> {
    for (const g of this.groups.values()) {
      const { starts, ends } = runsOf(g);
      for (let r = 0; r < starts.length; r++) for (let n = starts[r]!; n < ends[r]!; n++) yield markerKey(g.datasetId, g.crawl, n);
    }
    yield* this.other;
  }

  /** batches.json, version 2. */
  toBytes(): Buffer {
    const sets = [...this.groups.values()]
      .sort((a, b) => a.datasetId - b.datasetId || (a.crawl < b.crawl ? -1 : a.crawl > b.crawl ? 1 : 0))
      .map((g) => ({ dataset_id: g.datasetId, crawl: g.crawl, count: g.count, runs: g.encoded ?? encodeRuns(g.runs!) }));
    const file: BatchesFile = { v: 2, count: this.size, sets, other: [...this.other].sort() };
    return jsonBytes(file);
  }
}

interface BatchesFile {
  v: 2;
  count: number;
  sets: { dataset_id: number; crawl: string; count: number; runs: string }[];
  other: string[];
}

/** Runs of consecutive batch numbers: [starts[i], ends[i]), sorted, disjoint and not touching. */
interface Runs {
  starts: number[];
  ends: number[];
}

/** One (dataset, crawl): its runs decoded on first use (the API only ever needs `count`). */
interface Group {
  datasetId: number;
  crawl: string;
  count: number;
  encoded: string | null;
  runs: Runs | null;
}

const SEQS = 10_000; // batchId: seq < 10⁴, block < 10⁸, so numbers stay below 2⁵³
const CRAWL = /^[A-Za-z0-9._-]+$/;
const MARKER = /^batches\/dataset_id=(\d{1,10})\/([A-Za-z0-9._-]+)__(\d{8})__(\d{4})\/_SUCCESS\.json$/;

const groupKey = (datasetId: number, crawl: string): string => `${datasetId}\u0000${crawl}`;

function markerKey(datasetId: number, crawl: string, n: number): string {
  const block = Math.floor(n / SEQS);
  return `batches/dataset_id=${datasetId}/${crawl}__${String(block).padStart(8, '0')}__${String(n - block * SEQS).padStart(4, '0')}/_SUCCESS.json`;
}

/** (dataset, crawl, number) of a marker key of the regular shape; null for any other (kept verbatim). */
function parseMarker(key: string): { datasetId: number; crawl: string; n: number } | null {
  const m = MARKER.exec(key);
  if (m === null) return null;
  const datasetId = Number(m[1]);
  const n = Number(m[3]) * SEQS + Number(m[4]);
  // only a key that prints back the same (no leading zeros in the id, …) is held as a number
  return markerKey(datasetId, m[2]!, n) === key ? { datasetId, crawl: m[2]!, n } : null;
}

function runsOf(g: Group): Runs {
  if (g.runs === null) {
    g.runs = decodeRuns(g.encoded!);
    if (countOf(g.runs) !== g.count) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'batches.json cannot be read', { reason: 'runs', crawl: g.crawl });
  }
  return g.runs;
}

const countOf = (r: Runs): number => r.starts.reduce((a, s, i) => a + (r.ends[i]! - s), 0);

/** `old` with the numbers `ns` added (unsorted, may repeat or overlap old runs). */
function mergeRuns(old: Runs, ns: number[]): Runs {
  ns.sort((a, b) => a - b);
  const out: Runs = { starts: [], ends: [] };
  const push = (s: number, e: number): void => {
    const last = out.ends.length - 1;
    if (last >= 0 && s <= out.ends[last]!) out.ends[last] = Math.max(out.ends[last]!, e);
    else {
      out.starts.push(s);
      out.ends.push(e);
    }
  };
  let i = 0;
  let j = 0;
  while (i < old.starts.length || j < ns.length) {
    if (j >= ns.length || (i < old.starts.length && old.starts[i]! <= ns[j]!)) {
      push(old.starts[i]!, old.ends[i]!);
      i++;
    } else {
      push(ns[j]!, ns[j]! + 1);
      j++;
    }
  }
  return out;
}

function encodeRuns(r: Runs): string {
  const tokens: string[] = new Array(r.starts.length);
  let prevBlock = 0;
  for (let i = 0; i < r.starts.length; i++) {
    const block = Math.floor(r.starts[i]! / SEQS);
    const seq = r.starts[i]! - block * SEQS;
    tokens[i] = `${(block - prevBlock).toString(36)}${seq > 0 ? `.${seq.toString(36)}` : ''}+${(r.ends[i]! - r.starts[i]!).toString(36)}`;
    prevBlock = block;
  }
  return tokens.join(',');
}

function decodeRuns(s: string): Runs {
  const out: Runs = { starts: [], ends: [] };
  if (s === '') return out;
  let block = 0;
  let prevEnd = -1;
  for (const t of s.split(',')) {
    const m = /^([0-9a-z]+)(?:\.([0-9a-z]+))?\+([0-9a-z]+)$/.exec(t);
    if (m === null) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'batches.json cannot be read', { reason: 'run token' });
    block += parseInt(m[1]!, 36);
    const start = block * SEQS + (m[2] === undefined ? 0 : parseInt(m[2], 36));
    const len = parseInt(m[3]!, 36);
    if (start <= prevEnd || len < 1) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'batches.json cannot be read', { reason: 'runs out of order' });
    out.starts.push(start);
    out.ends.push((prevEnd = start + len));
  }
  return out;
}
