import { RoaringBitmap32 } from 'roaring';
import {
  canonicalizeUrl, formatDomain64, isoOfMs, registeredDomainOf, pageAfter, runLanes, sortMatches, surtOf, urlId, urlIdHex, type AcrossItem, type AcrossQuery,
  type AcrossResult, type CaptureItem, type CaptureOptions, type DatasetSummary, type DomainDatasets, type DomainFacts, type DomainInlinksQuery, type IndexView,
  type LinkItem, type LinkPage, type LinkQuery, type PageItem, type PageQuery,
  type PageResult, type PageRow, type SearchPage, type SearchQuery, type UrlItem,
} from '@ccpipe/core';
import { decodeFactsRecords, toDomainFacts } from './domain-facts';
import { type DomainEntries, type LakeFileEntry, type Posting } from './format';
import { deadRows, positionsOf, type OrderingFile } from './orderings';
import type { TopDomainsFile } from './top-domains';
import { pagesAcross, type OrderingEntry, type OrderingReads } from './pages-across';
import type { LinkGraph } from './links-read';
import type { SearchIndex } from './search-read';
import type { LakeReads, LakeUrlRow } from './lake-reader';
import { RowGroupCache } from './row-group-cache';
import type { LoadedVersion } from './version-files';

/**
 * The terms of a page query that select and order rows — every field but where the page starts, its size and the
 * datasets (the rows' key names those) — as a cache key. Taken whole, not field by field: a filter added to the query
 * model is part of the key without a change here (listing fields once left the link filters out, and a dead-ends
 * query was answered from the unfiltered query's rows). Sets are keyed by their sorted members.
 */
function scanTermsOf(q: PageQuery): string {
  const { after: _after, limit: _limit, datasetIds: _datasets, ...terms } = q;
  return JSON.stringify(terms, (_k, v: unknown) => (v instanceof Set ? [...v].sort() : v));
}

/** Estimated heap bytes of one web-table row held by the page caches (object, URL, SURT, title). */
const ROW_BYTES = 400;

/** Runs a `captures()` call scans at once. */
const CAPTURE_READS = 8;

/**
 * One index version, read side: `domain()` and `datasets()` answer from resident structures (dictionary, Roaring
 * bitmaps, postings with exact counts); `urls()` reads only the rows [offset, offset + limit) of the (domain, dataset)
 * rows — its runs in the lake files one after another, usually one — through `reads`, which touches only the row
 * groups covering them (and serves hot ones from memory); `captures()` reads the domain's runs in each dataset and
 * keeps the rows of that URL. A row read without its `url_id` (the Parquet reader never reads it; a lake may not hold it) gets
 * `collisions[url] ?? urlId(url)` from this version's collisions map — what the merger stores in `url_id`.
 * Immutable; safe to share. The view does not own `reads` (its source closes it).
 */
export class LakeIndexView implements IndexView {
  readonly version: string;
  /** The web-table rows of domains recently paged (bounded, estimated bytes). */
  private readonly domainRows = new RowGroupCache<PageRow[]>(96 * 1024 * 1024);
  /** Filtered, ordered rows of recent page queries: a walk's later pages are binary searches. */
  private readonly scans = new RowGroupCache<PageRow[]>(32 * 1024 * 1024);
  private readonly index: DomainEntries;
  private readonly files: LakeFileEntry[];

  constructor(
    private readonly loaded: LoadedVersion,
    private readonly reads: LakeReads,
    private readonly names: ReadonlyMap<number, { name: string; crawl: string | null; kind?: 'crawl' | 'import'; sources?: readonly string[] }>,
    /** The version's secondary orderings and how to read them; null when the view answers no /v1/pages. */
    private readonly orderings: { files: readonly OrderingFile[]; reads: OrderingReads } | null = null,
    /** The version's largest-domains lists (top-domains.json); null for a version written before them. */
    private readonly top: TopDomainsFile | null = null,
    /** The version's link graphs (links.json); null for a version without (or a view not reading Parquet). */
    private readonly graph: LinkGraph | null = null,
    /** The version's search shards (search.json); null for a version without. */
    private readonly searchIndex: SearchIndex | null = null,
  ) {
    this.version = loaded.toc.version;
    this.index = loaded.index;
    this.files = loaded.files;
  }

  domain(domain: string): DomainDatasets | null {
    const i = this.index.indexOf(domain);
    if (i < 0) return null;
    const ids = RoaringBitmap32.deserialize(this.index.bitmap(i), 'portable').toArray();
    const counts = new Map<number, number>();
    for (const p of this.index.postings(i)) counts.set(p.datasetId, (counts.get(p.datasetId) ?? 0) + p.rows);
    const facts = this.factsOf(i);
    return {
      domain, domain64: formatDomain64(this.index.d64(i)),
      datasets: ids.map((datasetId) => {
        const f = facts.get(datasetId);
        return { datasetId, urlCount: counts.get(datasetId) ?? 0, ...(f !== undefined && { facts: f }) };
      }),
    };
  }

  async urls(domain: string, datasetId: number, offset: number, limit: number): Promise<{ total: number; items: UrlItem[] }> {
    const runs = this.postings(domain, datasetId);
    const total = runs.reduce((s, p) => s + p.rows, 0);
    // The dataset's rows are its runs one after another (each sorted by URL); a page may span two.
    let from = Math.max(0, offset);
    let left = Math.min(total - from, Math.max(0, limit));
    const slices: { p: Posting; from: number; to: number }[] = [];
    for (const p of runs) {
      if (left <= 0) break;
      if (from >= p.rows) {
        from -= p.rows;
        continue;
      }
      const n = Math.min(left, p.rows - from);
      slices.push({ p, from: p.first + from, to: p.first + from + n });
      left -= n;
      from = 0;
    }
    // the runs a page straddles are read at once, then joined in paging order
    const parts = await Promise.all(slices.map((x) => this.reads.rows(this.files[x.p.file]!, x.from, x.to)));
    return { total, items: parts.flat().map((r) => this.item(r)) };
  }

  async search(q: SearchQuery): Promise<SearchPage | null> {
    if (this.searchIndex === null) return null;
    let files: Set<string> | null = null;
    if (q.domain !== undefined) {
      // the lake files holding the domain: a domain-scoped search opens their shards only (none: nothing matches,
      // but the query is still parsed and refused when bad)
      const i = this.index.indexOf(q.domain);
      files = new Set(i < 0 ? [] : this.index.postings(i).map((p) => this.files[p.file]!.key));
    }
    return this.searchIndex.search(q, files);
  }

  async captures(canonicalUrl: string, opts: CaptureOptions = {}): Promise<CaptureItem[]> {
    let domain: string;
    try {
      const c = canonicalizeUrl(canonicalUrl);
      domain = c.domain ?? c.host;
    } catch {
      return [];
    }
    const i = this.index.indexOf(domain);
    if (i < 0) return [];
    // every (dataset, run) of the domain may hold the URL: up to CAPTURE_READS scanned at once (a domain in a hundred
    // crawls is a hundred reads, each a ranged GET on first touch), answered in dataset and run order
    const runs = this.index.postings(i);
    const found: CaptureItem[][] = new Array(runs.length);
    await runLanes(runs.length, CAPTURE_READS, async (k) => {
      const p = runs[k]!;
      const rows = await this.reads.find(this.files[p.file]!, p.first, p.first + p.rows, canonicalUrl, opts);
      found[k] = rows.map((r) => ({
        datasetId: p.datasetId, ...this.item(r), textLength: r.textLength, language: r.language, contentLength: r.contentLength,
        ...(opts.text === true && { text: r.text ?? null }), warc: r.warc, ...extrasOf(r.extras), textLanguage: r.textLanguage, textLanguageConfidence: r.textLanguageConfidence,
      }));
    });
    // the page's history: oldest capture first (ISO strings of one shape sort as times; a row without a time before
    // every timed one), then by dataset
    return found.flat().sort((a, b) => {
      const ta = a.ts ?? '';
      const tb = b.ts ?? '';
      return ta < tb ? -1 : ta > tb ? 1 : a.datasetId - b.datasetId;
    });
  }

  async pages(domain: string, q: PageQuery): Promise<PageResult<PageItem>> {
    const i = this.index.indexOf(domain);
    if (i < 0) return { items: [], total: 0, next: null };
    const runs = this.index.postings(i).filter((p) => q.datasetIds === null || q.datasetIds.includes(p.datasetId));
    const rowsKey = `${domain}\u0000${runs.map((p) => `${p.datasetId}:${p.file}:${p.first}`).join(',')}`;
    const scanKey = `${rowsKey}\u0000${scanTermsOf(q)}`;
    // a walk's next page is a binary search in the filtered, ordered rows its first page made (kept per view: the
    // version is immutable); the domain's rows themselves are kept too, for the same domain under other filters
    const sorted = await this.scans.getOrLoad(scanKey, async () => {
      const rows = await this.domainRows.getOrLoad(rowsKey, async () => {
        const parts: PageRow[][] = new Array(runs.length);
        await runLanes(runs.length, CAPTURE_READS, async (k) => {
          const p = runs[k]!;
          const got = await this.reads.scan(this.files[p.file]!, p.first, p.first + p.rows);
          parts[k] = got.map((r) => ({ datasetId: p.datasetId, url: r.url, surt: r.surt ?? rowKeyOf(r.url), ts: r.ts, status: r.status, title: r.title, contentLength: r.contentLength, language: r.language }));
          await this.addLinkCounts(domain, p, parts[k]!);
        });
        const value = parts.flat();
        return { value, bytes: 64 + value.length * ROW_BYTES };
      });
      const value = sortMatches(rows, q);
      return { value, bytes: 64 + value.length * 8 };
    });
    const page = pageAfter(sorted, q);
    return { ...page, items: page.items.map((r) => ({ ...r, urlId: this.idOf(r.url) })) };
  }

  /** Per dataset, its files by position and whether its base ordering has dead entries: fixed for the view's version. */
  private readonly positionsBy = new Map<number, { file: LakeFileEntry; base: number }[]>();
  private readonly deadBy = new Map<number, boolean>();

  /** A dataset's files by position (computed once per view). */
  private positionList(datasetId: number): { file: LakeFileEntry; base: number }[] {
    let list = this.positionsBy.get(datasetId);
    if (list === undefined) this.positionsBy.set(datasetId, (list = positionsOf(this.files, datasetId)));
    return list;
  }

  /** The position of row 0 of a lake file of a dataset. */
  private baseOf(datasetId: number, file: LakeFileEntry): number {
    return this.positionList(datasetId).find((x) => x.file === file)?.base ?? 0;
  }

  /** The lake file and row a position of a dataset names; null for a position no file of this version holds. */
  private at(datasetId: number, position: number): { file: LakeFileEntry; row: number } | null {
    const list = this.positionList(datasetId);
    let lo = 0;
    let hi = list.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (list[mid]!.base <= position) lo = mid;
      else hi = mid - 1;
    }
    const f = list[lo];
    if (f === undefined || position < f.base || position - f.base >= f.file.rows) return null;
    return { file: f.file, row: position - f.base };
  }

  async pagesAcross(q: AcrossQuery): Promise<AcrossResult | null> {
    if (this.orderings === null || this.orderings.files.length === 0) return null;
    // null: a position of a file replaced since the dataset's base ordering was built (a dead entry, skipped)
    const at = (datasetId: number, position: number) => this.at(datasetId, position);
    const fetch = async (entries: readonly OrderingEntry[]) => {
      const rows = new Array<AcrossItem | null>(entries.length).fill(null);
      await runLanes(entries.length, CAPTURE_READS, async (k) => {
        const e = entries[k]!;
        const found = at(e.datasetId, e.position);
        if (found === null) return;
        const { file, row } = found;
        const [r] = await this.reads.scan(file, row, row + 1);
        const url = r!.url;
        rows[k] = {
          datasetId: e.datasetId, url, surt: r!.surt ?? rowKeyOf(url), ts: r!.ts, status: r!.status, title: r!.title, contentLength: r!.contentLength,
          language: r!.language, urlId: this.idOf(url), domain: registeredDomainOf(url) ?? new URL(url).hostname,
        };
      });
      return rows;
    };
    const files = this.orderings.files;
    const dead = (d: number): boolean => {
      let v = this.deadBy.get(d);
      if (v === undefined) this.deadBy.set(d, (v = deadRows(this.files, files, d) > 0));
      return v;
    };
    return pagesAcross(q, files, this.orderings.reads, fetch, dead);
  }

  /** Sets `inlinks` and `outlinks` on the rows of one run of a domain, when the version keeps its dataset's link graph. */
  private async addLinkCounts(domain: string, run: Posting, rows: PageRow[]): Promise<void> {
    const g = this.graph;
    if (g === null || !g.has(run.datasetId)) return;
    const base = this.baseOf(run.datasetId, this.files[run.file]!) + run.first;
    const [inlinks, outlinks] = await Promise.all([
      this.domainTargetsOf(run.datasetId, domain),
      g.outCounts(run.datasetId, base, base + run.rows),
    ]);
    rows.forEach((r, i) => {
      r.inlinks = inlinks.get(r.url) ?? 0;
      r.outlinks = outlinks[i] ?? 0;
    });
  }

  /** A domain's linked URLs and their inlinks in a dataset, shared by the domain's runs there (one read per view and domain). */
  private readonly targetsBy = new Map<string, Promise<Map<string, number>>>();
  private domainTargetsOf(datasetId: number, domain: string): Promise<Map<string, number>> {
    const key = `${datasetId}\u0000${domain}`;
    let p = this.targetsBy.get(key);
    if (p === undefined) {
      p = this.graph!.domainTargets(datasetId, domain);
      this.targetsBy.set(key, p);
      // the page rows that use it are cached themselves; this only spans one load
      void p.finally(() => this.targetsBy.delete(key)).catch(() => undefined);
    }
    return p;
  }

  /** The position of a URL's row in a dataset (its latest capture there), or null when the dataset has no row of it. */
  private async positionOfUrl(url: string, domain: string, datasetId: number): Promise<number | null> {
    const i = this.index.indexOf(domain);
    if (i < 0) return null;
    for (const p of this.index.postings(i)) {
      if (p.datasetId !== datasetId) continue;
      const file = this.files[p.file]!;
      const [r] = await this.reads.find(file, p.first, p.first + p.rows, url);
      if (r?.row !== undefined) return this.baseOf(datasetId, file) + r.row;
    }
    return null;
  }

  /** The linking pages at `positions` of a dataset (positions the link graph names are rows of this version). */
  private async linkingPages(datasetId: number, positions: readonly number[]): Promise<LinkItem[]> {
    const out = new Array<LinkItem | null>(positions.length).fill(null);
    await runLanes(positions.length, CAPTURE_READS, async (k) => {
      const found = this.at(datasetId, positions[k]!);
      if (found === null) return;
      const [r] = await this.reads.scan(found.file, found.row, found.row + 1);
      if (r === undefined) return;
      out[k] = { datasetId, url: r.url, domain: registeredDomainOf(r.url) ?? new URL(r.url).hostname, ts: isoOfMs(r.ts) };
    });
    return out.filter((x): x is LinkItem => x !== null);
  }

  /**
   * One page of a listing that runs through the datasets of `datasetIds` in order (those with a link graph): `count`
   * gives a dataset's total (and what `read` needs), `read` its items [skip, skip + room); offsets run over the
   * datasets' items end to end.
   */
  private async linkListing<T>(
    datasetIds: readonly number[], offset: number, limit: number,
    count: (g: LinkGraph, d: number) => Promise<{ total: number; linkingDomains?: number; found: T | null }>,
    read: (g: LinkGraph, d: number, found: T, skip: number, room: number) => Promise<LinkItem[]>,
  ): Promise<LinkPage | null> {
    const g = this.graph;
    if (g === null) return null;
    const items: LinkItem[] = [];
    const byDataset: LinkPage['byDataset'] = [];
    let skip = offset;
    for (const d of datasetIds) {
      if (!g.has(d)) continue;
      const room = limit - items.length;
      const { total, linkingDomains, found } = await count(g, d);
      if (found !== null && room > 0 && skip < total) items.push(...(await read(g, d, found, skip, room)));
      byDataset.push({ datasetId: d, total, ...(linkingDomains !== undefined && { linkingDomains }) });
      skip = Math.max(0, skip - total);
    }
    return { total: byDataset.reduce((n, x) => n + x.total, 0), items, byDataset };
  }

  async links(q: LinkQuery): Promise<LinkPage | null> {
    if (q.direction === 'in') {
      return this.linkListing(q.datasetIds, q.offset, q.limit,
        async (g, d) => {
          const t = await g.target(d, q.domain, q.url);
          return { total: t?.inlinks ?? 0, found: t };
        },
        async (g, d, t, skip, room) => this.linkingPages(d, await g.sources(d, t, skip, room)));
    }
    return this.linkListing(q.datasetIds, q.offset, q.limit,
      async (g, d) => {
        const p = await this.positionOfUrl(q.url, q.domain, d);
        const r = p === null ? null : await g.outRange(d, p);
        return { total: r === null ? 0 : r.to - r.from, found: r };
      },
      async (g, d, r, skip, room) => (await g.targetsAt(d, r.from + skip, Math.min(r.to, r.from + skip + room))).map((x) => ({ datasetId: d, url: x.url, domain: x.domain, ts: null })));
  }

  async domainInlinks(q: DomainInlinksQuery): Promise<LinkPage | null> {
    return this.linkListing(q.datasetIds, q.offset, q.limit,
      async (g, d) => {
        const dom = await g.domain(d, q.domain);
        return { total: dom?.pages ?? 0, linkingDomains: dom?.linkingDomains ?? 0, found: dom };
      },
      async (g, d, dom, skip, room) => this.linkingPages(d, await g.domainSources(d, dom, skip, room)));
  }

  async linkCounts(url: string, domain: string, datasetIds: readonly number[]): Promise<Map<number, { inlinks: number; outlinks: number }> | null> {
    const g = this.graph;
    if (g === null) return null;
    const out = new Map<number, { inlinks: number; outlinks: number }>();
    await Promise.all(
      datasetIds.filter((d) => g.has(d)).map(async (d) => {
        const [t, p] = await Promise.all([g.target(d, domain, url), this.positionOfUrl(url, domain, d)]);
        const r = p === null ? { from: 0, to: 0 } : await g.outRange(d, p);
        out.set(d, { inlinks: t?.inlinks ?? 0, outlinks: r.to - r.from });
      }),
    );
    return out;
  }

  /**
   * Reads a first URL page and the captures of its first URL for up to `domains` domains spread over the dictionary
   * (each a row-group first touch): compiles the read path before real requests meet it. Returns the pages read.
   */
  async warm(domains = 4): Promise<number> {
    let pages = 0;
    const n = this.index.size;
    for (let k = 0; k < Math.min(domains, n); k++) {
      const i = Math.floor((k * n) / Math.min(domains, n));
      const name = this.index.name(i);
      const [p] = this.index.postings(i);
      if (p === undefined) continue;
      const page = await this.urls(name, p.datasetId, 0, 10);
      if (page.items[0] !== undefined) await this.captures(page.items[0].url);
      pages++;
    }
    return pages;
  }

  datasets(): DatasetSummary[] {
    const ingested = new Map((this.loaded.status.ingested ?? []).map((t) => [t.datasetId, t]));
    return this.loaded.status.datasets.map((d) => {
      const n = this.names.get(d.datasetId);
      const t = ingested.get(d.datasetId);
      const kind = n?.kind ?? 'crawl';
      return {
        datasetId: d.datasetId, name: n?.name ?? `dataset-${d.datasetId}`, crawl: n?.crawl ?? null, kind,
        source: kind === 'import' ? [...(n?.sources ?? [])] : n?.crawl != null ? [n.crawl] : [],
        urlCount: d.urlCount, domainCount: d.domainCount,
        ...(t !== undefined && { rows: t.rows, rejects: t.failed }), ...(t?.updatedAt !== undefined && { updatedAt: t.updatedAt }),
      };
    });
  }

  topDomains(datasetId: number, limit: number): { domain: string; urlCount: number }[] | null {
    if (this.top === null) return null;
    const d = this.top.datasets.find((x) => x.datasetId === datasetId);
    return (d?.domains ?? []).slice(0, Math.max(0, limit)).map(([domain, urlCount]) => ({ domain, urlCount }));
  }

  /** Bytes of the resident index files behind this view (its domain index). */
  get residentBytes(): number {
    return this.index.bytes;
  }

  /** Lets go of files the view's index holds open (an index read in place); reads afterwards throw. Idempotent. */
  async close(): Promise<void> {
    await this.index.close?.();
  }

  get textVersions(): number | null {
    return this.loaded.status.textVersions ?? null;
  }

  /** Progress facts of this version (status.json) for /v1/status. */
  status(): LoadedVersion['status'] {
    return this.loaded.status;
  }

  private mergedBy: Map<number, number> | null = null;

  /** Completed batches this version holds, per dataset id (batches.json's counts). */
  batchesMerged(): ReadonlyMap<number, number> {
    this.mergedBy ??= this.loaded.batches.countByDataset();
    return this.mergedBy;
  }

  /** The runs of (domain, dataset) in paging order (none when the domain is not in that dataset). */
  private postings(domain: string, datasetId: number): Posting[] {
    const i = this.index.indexOf(domain);
    if (i < 0) return [];
    return this.index.postings(i).filter((p) => p.datasetId === datasetId);
  }

  private item(r: LakeUrlRow): UrlItem {
    return { urlId: r.urlId === null ? this.idOf(r.url) : urlIdHex(r.urlId), url: r.url, ts: r.ts, status: r.status, title: r.title };
  }

  /** `url_id` of a lake URL: `collisions[url] ?? urlId(url)`, what the merger stores. */
  private idOf(url: string): string {
    const sub = this.loaded.collisions[url];
    return urlIdHex(sub !== undefined ? BigInt(sub) : urlId(url));
  }

  /** Entry i's facts by dataset (none for a version written without facts, or a dataset without a record). */
  private factsOf(i: number): Map<number, DomainFacts> {
    const b = this.index.facts(i);
    return new Map(b === null ? [] : decodeFactsRecords(b).map(({ record }) => [record.datasetId, toDomainFacts(record)]));
  }
}

/** The row key of a lake URL without a `surt` column: its SURT (every lake URL is canonical, so it parses). */
function rowKeyOf(url: string): string {
  try {
    return surtOf(url);
  } catch {
    return url;
  }
}

/** An imported row's `extras` JSON as the capture's `extras` field (none when absent or unreadable: it was written as JSON). */
function extrasOf(json: string | null): { extras?: Record<string, unknown> } {
  if (json === null || json === '') return {};
  try {
    const v = JSON.parse(json) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? { extras: v as Record<string, unknown> } : {};
  } catch {
    return {};
  }
}
