import type { PageFilter, PageOrder, PageQuery, PageResult, PageRow } from '../pages';

/**
 * The read side of one immutable index version, as the API uses it. The merger's package implements it over the
 * files of `index/<version>/` (resident or memory-mapped); tests use an in-memory one. Everything a response needs
 * comes from ONE view, so a manifest flip never mixes versions inside a response.
 */

/** Datasets holding one registered domain, with exact URL counts. */
export interface DomainDatasets {
  /** Registered domain (eTLD+1, ICANN section), punycode. */
  domain: string;
  /** The domain's domain64 prefix in text form `tt:dddddd:00:000000`. */
  domain64: string;
  /** Sorted by datasetId. */
  datasets: { datasetId: number; urlCount: number; facts?: DomainFacts }[];
}

/**
 * What one dataset holds of one registered domain, like Common Crawl's host index: exact, computed at merge over the
 * rows the version holds for (domain, dataset) — one row per canonical URL, its latest capture in the dataset.
 */
export interface DomainFacts {
  /** Distinct hostnames. */
  hosts: number;
  /** Rows by status class; classes without rows are 0. A status outside 200–599 counts in none. */
  statusClasses: { '2xx': number; '3xx': number; '4xx': number; '5xx': number };
  /** The most frequent primary languages (first ISO 639-3 code of the row's languages), count descending then code; at most 10. */
  languages: { code: string; count: number }[];
  /** Oldest and newest capture time, ISO 8601 UTC whole seconds; null when no row has a time (an import without one). */
  firstTs: string | null;
  lastTs: string | null;
  /** Nearest-rank median and 90th percentile of content_length (bytes of the HTTP body as stored); null when no row has one. */
  contentLengthMedian: number | null;
  contentLengthP90: number | null;
}

/** One URL of a (domain, dataset), as the URL listing shows it (the latest capture in that dataset). */
export interface UrlItem {
  /** 16 lowercase hex digits of the unsigned xxh3-64. */
  urlId: string;
  url: string;
  /** Capture time, ISO 8601 UTC; null for an imported row whose source gave none. */
  ts: string | null;
  /** HTTP status; null for an imported row whose source gave none. */
  status: number | null;
  title: string | null;
}

/** One capture of a URL in one dataset. */
export interface CaptureItem {
  datasetId: number;
  urlId: string;
  url: string;
  /** ISO 8601 UTC; null for an imported row whose source gave none. */
  ts: string | null;
  status: number | null;
  title: string | null;
  textLength: number | null;
  /** Primary language the record carried (ISO 639-3); null when none, or the lake does not hold languages. */
  language: string | null;
  /** Bytes of the HTTP response body as the record stores it; null when the lake does not hold it. */
  contentLength: number | null;
  /** The extracted main text, only when asked for (`captures(url, {text: true})`); null when there is none. */
  text?: string | null;
  /** Where the record is; null for an imported row (no WARC record behind it). */
  warc: { filename: string; offset: number; length: number } | null;
  /** An imported row's other source columns, as imported (`ccpipe import`); absent for captures and rows with none. */
  extras?: Record<string, unknown>;
  /** The language of the extracted text (ISO 639-3) and its confidence 0–1; null when undetermined or not recorded. */
  textLanguage?: string | null;
  textLanguageConfidence?: number | null;
}

/** One row of a link listing (`/v1/url/links`, `/v1/domain/{d}/inlinks`). */
export interface LinkItem {
  datasetId: number;
  /** The linking page (inlinks), or the linked URL (outlinks: crawled or not). */
  url: string;
  /** Registered domain of `url`. */
  domain: string;
  /** The linking page's capture time (ISO 8601); null for an outlink. */
  ts: string | null;
}

/** A page of the link graph of one URL (`direction: 'out'`: its outlinks; `'in'`: the pages linking to it). */
export interface LinkQuery {
  /** Canonical URL and its registered domain. */
  url: string;
  domain: string;
  direction: 'in' | 'out';
  /** The datasets to answer from (visible to the caller), ascending. */
  datasetIds: readonly number[];
  offset: number;
  limit: number;
}

/** A page of a link listing: `total` is exact (the sum over the datasets asked). */
export interface LinkPage {
  total: number;
  items: LinkItem[];
  /** Per dataset asked that holds a link graph: its count. */
  byDataset: { datasetId: number; total: number; linkingDomains?: number }[];
}

/** A full-text search over the version's search shards (#21). */
export interface SearchQuery {
  /** The user's query as typed (`parseSearchQuery` reads it: words, "phrases", -exclusions). */
  q: string;
  /** The datasets searched (the caller's visible ones, or the one asked): no hit comes from any other. */
  datasetIds: readonly number[];
  /** Only pages of this registered domain (already normalized by the caller). */
  domain?: string;
  /** Only captures at or after / at or before these times, epoch ms. */
  from?: number;
  to?: number;
  offset: number;
  /** 1–100. */
  limit: number;
}

/** One search hit: a capture whose title or extracted text matches. */
export interface SearchItem {
  url: string;
  datasetId: number;
  /** Capture time, ISO 8601 UTC; null for an imported row whose source gave none. */
  ts: string | null;
  title: string | null;
  /** The best passage, HTML: matched words in `<mark>…</mark>`, everything else escaped. */
  snippet: string;
  /** The same passage as plain-text parts. */
  snippetParts: { text: string; hit: boolean }[];
  /** Relevance (−BM25 over title and text, higher is better), comparable within one answer. */
  score: number;
}

/** A page of search hits, best first. */
export interface SearchPage {
  /** Matches over the datasets searched; an estimate when `totalExact` is false. */
  total: number;
  totalExact: boolean;
  /** Shards searched. */
  shards: number;
  items: SearchItem[];
}

/** The pages outside a registered domain that link to any page of it. */
export interface DomainInlinksQuery {
  domain: string;
  datasetIds: readonly number[];
  offset: number;
  limit: number;
}

/** What {@link IndexView.captures} reads besides the capture's facts. */
export interface CaptureOptions {
  /** Read each capture's extracted text (default false: only its length). */
  text?: boolean;
}

/** A dataset as the API lists it. */
export interface DatasetSummary {
  datasetId: number;
  name: string;
  crawl: string | null;
  /** What fills it: a crawl's captures, or rows imported from files. */
  kind: 'crawl' | 'import';
  /** Where its rows came from: the crawl's name, or an import's file names. */
  source: string[];
  urlCount: number;
  domainCount: number;
  /** Rows its completed batches wrote, and records they could not index (an import's rejected rows), up to this version. */
  rows?: number;
  rejects?: number;
  /** When its newest batch in this version was completed (ISO time). */
  updatedAt?: string;
}

/** A web table row as a page of `/v1/domain/{d}/pages` shows it. */
export interface PageItem extends PageRow {
  /** 16 lowercase hex digits of the unsigned xxh3-64. */
  urlId: string;
}

/** Where a page of `/v1/pages` ends: the sort value of its last row, that row's dataset and its position there. */
export interface AcrossKey {
  value: number;
  datasetId: number;
  /** The row's position in its dataset (its row number over the dataset's lake files in the version's order). */
  position: number;
}

/** A page query across domains, answered from the secondary orderings (time, size, status) of a version. */
export interface AcrossQuery extends PageFilter {
  sort: 'ts' | 'size';
  order: PageOrder;
  after: AcrossKey | null;
  limit: number;
}

/** A web table row found across domains: a page item with its registered domain. */
export interface AcrossItem extends PageItem {
  domain: string;
}

/**
 * One page across domains. `total` is exact when one ordering answers every filter (a time range alone, a size range
 * alone, status classes with or without a time range), else null. A page may hold fewer than `limit` rows while
 * `next` is not null: a filter no ordering answers is checked row by row, and a page stops after a bounded scan.
 */
export interface AcrossResult {
  items: AcrossItem[];
  total: number | null;
  next: AcrossKey | null;
}

/** How many of a dataset's largest domains a version keeps for {@link IndexView.topDomains}. */
export const TOP_DOMAINS_KEPT = 1000;

/** One pinned index version. */
export interface IndexView {
  readonly version: string;
  /** The datasets of a registered domain (already normalized by the caller), or null when the index has none. */
  domain(domain: string): DomainDatasets | null;
  /**
   * URLs of (domain, dataset) in an order stable for the version (the lake: its runs oldest first, each by domain64
   * then url): rows [offset, offset + limit). `total` is the exact count. Reads only the row groups the page needs.
   */
  urls(domain: string, datasetId: number, offset: number, limit: number): Promise<{ total: number; items: UrlItem[] }>;
  /**
   * Captures of one canonical URL across datasets (one per dataset: the latest there), oldest first (then by
   * dataset id): the page's version history.
   */
  captures(canonicalUrl: string, opts?: CaptureOptions): Promise<CaptureItem[]>;
  /**
   * One page of the web table rows of a registered domain (already normalized by the caller): its rows in the
   * datasets `q.datasetIds` names (null: all), filtered, ordered and paged as {@link selectPage} does. `total` is exact.
   */
  pages(domain: string, q: PageQuery): Promise<PageResult<PageItem>>;
  datasets(): DatasetSummary[];
  /**
   * The registered domains of a dataset with the most URLs, most first (ties by domain), at most `limit` (which is at
   * most {@link TOP_DOMAINS_KEPT}). Exact for the version. Optional: a version written before it was kept has none.
   */
  topDomains?(datasetId: number, limit: number): { domain: string; urlCount: number }[] | null;
  /**
   * Rows across every domain of the datasets `q.datasetIds` names, through the version's secondary orderings. Null
   * when the version keeps none (written before them, or merged with orderings off). Optional: in-memory views omit it.
   */
  pagesAcross?(q: AcrossQuery): Promise<AcrossResult | null>;
  /**
   * A URL's outlinks or inlinks in the datasets asked, in dataset order, then by URL (outlinks: by domain and URL;
   * inlinks: by the linking page's position). Null when the version keeps no link graph (written before #21, with
   * links off, or from a lake without outlinks). Optional: in-memory views omit it.
   */
  links?(q: LinkQuery): Promise<LinkPage | null>;
  /** The pages outside `q.domain` linking to any page of it; `linkingDomains` per dataset. Null as for {@link links}. */
  domainInlinks?(q: DomainInlinksQuery): Promise<LinkPage | null>;
  /** Per dataset of `datasetIds` holding a link graph: the URL's inlinks and outlinks (exact). Null as for {@link links}. */
  linkCounts?(url: string, domain: string, datasetIds: readonly number[]): Promise<Map<number, { inlinks: number; outlinks: number }> | null>;
  /**
   * Full-text search (BM25 over title and extracted text) over the search shards of the datasets asked. Null when the
   * version keeps none (written before search, with search off, or from a lake without text). Optional: in-memory
   * views omit it. @throws SearchError CCP_ERR_SEARCH_QUERY (a query or option that cannot be searched),
   *   CCP_ERR_SEARCH_TIMEOUT (past the time limit)
   */
  search?(q: SearchQuery): Promise<SearchPage | null>;
  /** Completed batches the version holds, per dataset id (for ingest status). Optional: in-memory views omit it. */
  batchesMerged?(): ReadonlyMap<number, number>;
  /**
   * The content-versions policy the version's lake obeys: only the newest N captures of a URL across datasets keep
   * their text (core textKept). Absent or null: every capture keeps it.
   */
  readonly textVersions?: number | null;
}

/**
 * What the threads running full-text searches have done since start: searches answered; failed in or past a thread
 * (timeouts included; refused queries not); past their time limit; threads replaced (silent past a deadline, or
 * dead); waiting for a thread; threads searching.
 */
export interface SearchRunnerCounters {
  completed: number;
  failed: number;
  timeouts: number;
  restarts: number;
  queued: number;
  busy: number;
}

/** The current version, following manifest flips. */
export interface IndexSource {
  /** The view of the current version (null before the first merge). Cheap: call once per request. */
  current(): Promise<IndexView | null>;
  /**
   * The view of `version` while the source still keeps it (the current one or a retained older one), else null.
   * Lets a client page through one version across manifest flips. Optional: sources without history omit it.
   */
  at?(version: string): Promise<IndexView | null>;
  /** Counters of the lake reader behind the source, when it reads a lake (undefined otherwise). Optional. */
  cacheStats?(): LakeReaderStats | undefined;
  /** Counters of the threads running full-text searches, once a search has started them (undefined before). Optional. */
  searchStats?(): SearchRunnerCounters | undefined;
  /** The newest version the source could not load and will try again (null when none failed since its last load). Optional. */
  loadFailure?(): IndexLoadFailure | null;
  close(): Promise<void>;
}

/** A version a source could not load: which, why (an error code), when, and when it is tried again (ISO 8601). */
export interface IndexLoadFailure {
  version: string;
  code: string;
  at: string;
  retryAt: string;
}

/**
 * A lake reader's counters: its decoded-chunk cache (estimated bytes held, entries, hits, misses, evictions) and the
 * lake files it read by their footer because their row-group locator was missing or damaged.
 */
export interface LakeReaderStats {
  bytes: number;
  entries: number;
  hits: number;
  misses: number;
  evictions: number;
  locatorFallbacks: number;
  /** Lake column chunks refused because their bytes did not match their locator's CRC32. */
  damagedChunks: number;
}
