import type { LakeFileEntry } from './format';
import type { DatasetLinks, LinkFile } from './links';
import { targetKey } from './links';
import type { OrderingReads } from './pages-across';

/** What the link graph is read through: numeric and string columns of flat Parquet files by row range (ParquetLakeReader). */
export interface LinkReads extends OrderingReads {
  strings(file: LakeFileEntry, from: number, to: number, name: string): Promise<(string | null)[]>;
  /** The first row of a file sorted by a string column whose value is ≥ `key` (UTF-8 byte order). */
  lowerBoundString(file: LakeFileEntry, column: string, key: string): Promise<number>;
}

/** A link file as the reader addresses it. */
const asFile = (f: LinkFile, datasetId: number): LakeFileEntry => ({ key: f.key, datasetId, prefix: '', rows: f.rows, bytes: f.bytes, crc32: f.crc32, rowGroups: [] });

/**
 * The first row in [0, rows] whose value in a sorted column is ≥ `key`: the first row group whose footer maximum
 * reaches the key (a group without a kept maximum is decoded and looked at), then a binary search in that group.
 */
async function lowerBound<T>(
  stats: { starts: readonly number[]; max: ArrayLike<T | null> }, key: T, cmp: (a: T, b: T) => number, decode: (from: number, to: number) => Promise<ArrayLike<T>>,
): Promise<number> {
  const groups = stats.starts.length - 1;
  for (let g = 0; g < groups; g++) {
    const max = stats.max[g];
    if (max !== null && max !== undefined && !(typeof max === 'number' && Number.isNaN(max)) && cmp(max, key) < 0) continue;
    const from = stats.starts[g]!;
    const vals = await decode(from, stats.starts[g + 1]!);
    let lo = 0;
    let hi = vals.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(vals[mid]!, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo < vals.length) return from + lo;
  }
  return stats.starts[groups] ?? 0;
}

/** A target of the link graph: its row in the target table, its inlinks (exact) and where they start in `in`. */
export interface LinkTarget {
  row: number;
  inlinks: number;
  inStart: number;
}

/** A linked registered domain: its linking pages outside it, their registered domains, and where they start in `dom`. */
export interface LinkedDomain {
  pages: number;
  linkingDomains: number;
  domStart: number;
}

/**
 * Reads one version's link graphs (links.ts): lookups by target URL and by domain, each a footer-statistics search and
 * one row group's decode (cached by the reader), and pages of the edge tables by row range. Immutable; safe to share.
 */
export class LinkGraph {
  private readonly by: Map<number, DatasetLinks>;

  constructor(links: readonly DatasetLinks[], private readonly reads: LinkReads) {
    this.by = new Map(links.map((l) => [l.datasetId, l]));
  }

  /** Whether the version holds a link graph for the dataset (a dataset without any outlink has none). */
  has(datasetId: number): boolean {
    return this.by.has(datasetId);
  }

  private file(datasetId: number, kind: keyof DatasetLinks['files']): LakeFileEntry | null {
    const l = this.by.get(datasetId);
    return l === undefined ? null : asFile(l.files[kind], datasetId);
  }

  /** The target `url` (canonical) of registered domain `domain` in a dataset, or null when no page there links to it. */
  async target(datasetId: number, domain: string, url: string): Promise<LinkTarget | null> {
    const f = this.file(datasetId, 'targets');
    if (f === null || f.rows === 0) return null;
    const key = targetKey(domain, url);
    const row = await this.reads.lowerBoundString(f, 'key', key);
    if (row >= f.rows) return null;
    const [found] = await this.reads.strings(f, row, row + 1, 'key');
    if (found !== key) return null;
    const [inlinks, inStart] = await this.reads.numbers(f, row, row + 1, ['inlinks', 'in_start']);
    return { row, inlinks: inlinks![0]!, inStart: inStart![0]! };
  }

  /** Positions of the pages linking to a target, rows [offset, offset + limit) of its inlinks (by position). */
  async sources(datasetId: number, t: LinkTarget, offset: number, limit: number): Promise<number[]> {
    const f = this.file(datasetId, 'in')!;
    const from = t.inStart + Math.min(offset, t.inlinks);
    const to = t.inStart + Math.min(offset + limit, t.inlinks);
    if (to <= from) return [];
    return [...(await this.reads.numbers(f, from, to, ['pos']))[0]!];
  }

  /** The rows of `out` holding the outlinks of the pages at positions [from, to) (`to` defaults to from + 1: one page, exact count = to - from). */
  async outRange(datasetId: number, from: number, to = from + 1): Promise<{ from: number; to: number }> {
    const f = this.file(datasetId, 'out');
    if (f === null || f.rows === 0 || to <= from) return { from: 0, to: 0 };
    const stats = await this.reads.statsOf(f, 'pos');
    const decode = async (a: number, b: number): Promise<Float64Array> => (await this.reads.numbers(f, a, b, ['pos']))[0]!;
    const num = (x: number, y: number): number => x - y;
    return { from: await lowerBound(stats, from, num, decode), to: await lowerBound(stats, to, num, decode) };
  }

  /** Canonical URLs of the targets in rows [from, to) of `out` (a page's outlinks, by domain then URL). */
  async targetsAt(datasetId: number, from: number, to: number): Promise<{ domain: string; url: string }[]> {
    if (to <= from) return [];
    const out = this.file(datasetId, 'out')!;
    const targets = this.file(datasetId, 'targets')!;
    const rows = (await this.reads.numbers(out, from, to, ['target']))[0]!;
    return Promise.all(
      [...rows].map(async (r) => {
        const [key] = await this.reads.strings(targets, r, r + 1, 'key');
        const k = key ?? '';
        const sp = k.indexOf(' ');
        return { domain: k.slice(0, sp), url: k.slice(sp + 1) };
      }),
    );
  }

  /** The inlinks of every linked URL of registered domain `domain` in a dataset, by canonical URL. */
  async domainTargets(datasetId: number, domain: string): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const f = this.file(datasetId, 'targets');
    if (f === null || f.rows === 0) return out;
    // the domain's keys are those from `domain + ' '` up to `domain + '!'` (the next byte)
    const [from, to] = await Promise.all([this.reads.lowerBoundString(f, 'key', `${domain} `), this.reads.lowerBoundString(f, 'key', `${domain}!`)]);
    if (to <= from) return out;
    const [keys, [inlinks]] = await Promise.all([this.reads.strings(f, from, to, 'key'), this.reads.numbers(f, from, to, ['inlinks'])]);
    const skip = domain.length + 1;
    keys.forEach((k, i) => out.set((k ?? '').slice(skip), inlinks![i]!));
    return out;
  }

  /** The outlink count of each position in [from, to) of a dataset (0 for a page without outlinks). */
  async outCounts(datasetId: number, from: number, to: number): Promise<Int32Array> {
    const counts = new Int32Array(Math.max(0, to - from));
    const r = await this.outRange(datasetId, from, to);
    if (r.to <= r.from) return counts;
    const [pos] = await this.reads.numbers(this.file(datasetId, 'out')!, r.from, r.to, ['pos']);
    for (const p of pos!) counts[p - from]!++;
    return counts;
  }

  /** A registered domain's linking pages (outside it) in a dataset, or null when none links to it. */
  async domain(datasetId: number, domain: string): Promise<LinkedDomain | null> {
    const f = this.file(datasetId, 'domains');
    if (f === null || f.rows === 0) return null;
    const row = await this.reads.lowerBoundString(f, 'domain', domain);
    if (row >= f.rows) return null;
    const [found] = await this.reads.strings(f, row, row + 1, 'domain');
    if (found !== domain) return null;
    const [pages, linking, start] = await this.reads.numbers(f, row, row + 1, ['pages', 'linking_domains', 'dom_start']);
    return { pages: pages![0]!, linkingDomains: linking![0]!, domStart: start![0]! };
  }

  /** Positions of a domain's linking pages, rows [offset, offset + limit) of them (by position). */
  async domainSources(datasetId: number, d: LinkedDomain, offset: number, limit: number): Promise<number[]> {
    const f = this.file(datasetId, 'dom')!;
    const from = d.domStart + Math.min(offset, d.pages);
    const to = d.domStart + Math.min(offset + limit, d.pages);
    if (to <= from) return [];
    return [...(await this.reads.numbers(f, from, to, ['pos']))[0]!];
  }
}
