/**
 * Page queries of the web table: the rows of a registered domain (one per canonical URL and dataset, its latest
 * capture there) filtered by capture time, status and size, ordered by row key (the URL's SURT: reversed host, then
 * path and sorted query) or by time or size, and paged by the last row's key — the way a web table is scanned from a
 * start row. Pure: the index reads the rows, this decides which of them a page holds.
 */

/** Orders a page query can ask for. `surt` is the row key; `inlinks`/`outlinks` need the link graph (per domain only). */
export const PAGE_SORTS = ['surt', 'ts', 'size', 'inlinks', 'outlinks'] as const;
export type PageSort = (typeof PAGE_SORTS)[number];
export type PageOrder = 'asc' | 'desc';

/**
 * The `ts` of a row without a capture time (an import whose source gave none): below every real time, so it sorts
 * first by time ascending (last descending), and never inside a time filter. A safe integer, so cursors carry it
 * as they carry any time. Shown as null.
 */
export const NO_TIME = Number.MIN_SAFE_INTEGER;
/** The `status` of a row without one (an import whose source gave none): in no status class. Shown as null. */
export const NO_STATUS = 0;

/** Epoch ms as ISO 8601 UTC in whole seconds (`2024-05-01T12:00:00Z`), null for {@link NO_TIME} or NaN. */
export function isoOfMs(ms: number): string | null {
  if (ms === NO_TIME || !Number.isFinite(ms)) return null;
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** One row of the web table: a canonical URL's latest capture in one dataset. */
export interface PageRow {
  datasetId: number;
  url: string;
  /** The row key: the URL's SURT (`com,example,blog)/a?b=1`). */
  surt: string;
  /** Capture time, epoch milliseconds (whole seconds); {@link NO_TIME} when the row has none. */
  ts: number;
  /** HTTP status; {@link NO_STATUS} when the row has none. */
  status: number;
  title: string | null;
  /** Bytes of the HTTP response body as the record stores it; null when the lake does not hold it. */
  contentLength: number | null;
  /** Primary language (first ISO 639-3 code the record carried); null when none. */
  language: string | null;
  /** Distinct pages of the dataset linking to the URL, when the version keeps the dataset's link graph (docs/links.md). */
  inlinks?: number;
  /** Distinct targets of the page's links, likewise. */
  outlinks?: number;
}

/** Which statuses match: exact codes and whole classes (`4` for `4xx`). */
export interface StatusMatch {
  codes: ReadonlySet<number>;
  classes: ReadonlySet<number>;
}

/** Filters of a page query; null means "no bound". */
export interface PageFilter {
  /** Datasets whose rows count (the caller has applied its ACL); null = every dataset. */
  datasetIds: readonly number[] | null;
  /** Capture time bounds, epoch ms: `from` inclusive, `to` exclusive. */
  from: number | null;
  to: number | null;
  status: StatusMatch | null;
  /** Bounds on `contentLength`, inclusive; a row without one never matches a size bound. */
  minSize: number | null;
  maxSize: number | null;
  /** At least this many inlinks / at most this many outlinks (`0`: dead ends); a row without link counts never matches. */
  minInlinks?: number | null;
  maxOutlinks?: number | null;
}

/** Where a page ends: the ordering value of its last row (for `ts`/`size`) and that row's key. Unique per row. */
export interface PageKey {
  /** The sort value: ts (ms) for `ts`, content length for `size`, the count for `inlinks`/`outlinks` (-1 when absent), null for `surt`. */
  value: number | null;
  surt: string;
  url: string;
  datasetId: number;
}

/** A page query: filters, order, where the previous page ended and how many rows to return. */
export interface PageQuery extends PageFilter {
  sort: PageSort;
  order: PageOrder;
  after: PageKey | null;
  limit: number;
}

/** One page: its rows, the exact number of rows matching the filters, and where the next page starts (null: none). */
export interface PageResult<R extends PageRow = PageRow> {
  items: R[];
  total: number;
  next: PageKey | null;
}

/** Whether a row passes a query's filters. */
export function matchesPage(row: PageRow, f: PageFilter): boolean {
  if (f.datasetIds !== null && !f.datasetIds.includes(row.datasetId)) return false;
  if (f.from !== null && row.ts < f.from) return false;
  if (f.to !== null && (row.ts >= f.to || row.ts === NO_TIME)) return false;
  if (f.status !== null && !f.status.codes.has(row.status) && !f.status.classes.has(Math.floor(row.status / 100))) return false;
  if (f.minSize !== null && (row.contentLength === null || row.contentLength < f.minSize)) return false;
  if (f.maxSize !== null && (row.contentLength === null || row.contentLength > f.maxSize)) return false;
  if (f.minInlinks != null && (row.inlinks === undefined || row.inlinks < f.minInlinks)) return false;
  if (f.maxOutlinks != null && (row.outlinks === undefined || row.outlinks > f.maxOutlinks)) return false;
  return true;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The sort value of a row under `sort` (null for the row key order). */
export function sortValueOf(row: PageRow, sort: PageSort): number | null {
  switch (sort) {
    case 'ts': return row.ts;
    case 'size': return row.contentLength ?? -1;
    case 'inlinks': return row.inlinks ?? -1;
    case 'outlinks': return row.outlinks ?? -1;
    default: return null;
  }
}

/** The key of a row under `sort`. */
export function pageKeyOf(row: PageRow, sort: PageSort): PageKey {
  return { value: sortValueOf(row, sort), surt: row.surt, url: row.url, datasetId: row.datasetId };
}

/**
 * Ascending order of keys under one sort: the sort value first (none for `surt`), then the row key (SURT), the URL
 * (several URLs may share a SURT: `http`/`https`, `www.`) and the dataset — a total order, so a key marks one place.
 */
export function comparePageKeys(a: PageKey, b: PageKey): number {
  if (a.value !== b.value) return (a.value ?? 0) - (b.value ?? 0);
  return cmp(a.surt, b.surt) || cmp(a.url, b.url) || a.datasetId - b.datasetId;
}

/**
 * The rows matching a query's filters in its order (`desc` reverses the whole key, ties included); `after` and
 * `limit` are not applied. `rows` is not modified. O(n log n).
 */
export function sortMatches<R extends PageRow>(rows: readonly R[], q: Omit<PageQuery, 'after' | 'limit'>): R[] {
  const dir = q.order === 'desc' ? -1 : 1;
  const keyed: { row: R; key: PageKey }[] = [];
  for (const row of rows) if (matchesPage(row, q)) keyed.push({ row, key: pageKeyOf(row, q.sort) });
  keyed.sort((a, b) => dir * comparePageKeys(a.key, b.key));
  return keyed.map((x) => x.row);
}

/**
 * The page of rows already filtered and ordered by {@link sortMatches} for query `q`: those after `q.after` (a
 * binary search), at most `q.limit`. `total` is their number; `next` the key of the page's last row when more follow.
 */
export function pageAfter<R extends PageRow>(sorted: readonly R[], q: PageQuery): PageResult<R> {
  const dir = q.order === 'desc' ? -1 : 1;
  let start = 0;
  if (q.after !== null) {
    // first row strictly after the cursor in this order
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (dir * comparePageKeys(pageKeyOf(sorted[mid]!, q.sort), q.after) <= 0) lo = mid + 1;
      else hi = mid;
    }
    start = lo;
  }
  const page = sorted.slice(start, start + Math.max(0, q.limit));
  const more = start + page.length < sorted.length;
  return { items: page, total: sorted.length, next: more && page.length > 0 ? pageKeyOf(page[page.length - 1]!, q.sort) : null };
}

/**
 * The page of `rows` that a query asks for: the matching rows in the query's order, those after `q.after`, at most
 * `q.limit` ({@link sortMatches} then {@link pageAfter}). Paging with `next` visits every matching row exactly once.
 */
export function selectPage<R extends PageRow>(rows: readonly R[], q: PageQuery): PageResult<R> {
  return pageAfter(sortMatches(rows, q), q);
}

/**
 * Parses a status filter: comma-separated three-digit codes (`404`) and classes (`4xx`, any letter case).
 * Returns null for an empty list or any item that is neither.
 */
export function parseStatusMatch(raw: string): StatusMatch | null {
  const codes = new Set<number>();
  const classes = new Set<number>();
  const items = raw.split(',');
  for (const item of items) {
    const s = item.trim().toLowerCase();
    if (/^[1-5]xx$/.test(s)) classes.add(Number(s[0]));
    else if (/^[1-5]\d\d$/.test(s)) codes.add(Number(s));
    else return null;
  }
  return codes.size + classes.size > 0 ? { codes, classes } : null;
}

/** The primary language of a CDX-style language list (`"eng,deu"` → `eng`), null when empty. */
export function primaryLanguage(languages: string | null | undefined): string | null {
  if (languages === null || languages === undefined) return null;
  const comma = languages.indexOf(',');
  const first = (comma < 0 ? languages : languages.slice(0, comma)).trim();
  return first === '' ? null : first;
}
