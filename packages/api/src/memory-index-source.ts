import { Domain64Registry, NO_STATUS, NO_TIME, TOP_DOMAINS_KEPT, canonicalizeUrl, domain64ItemOf, domainFactsOf, formatDomain64, selectPage, surtOf, urlIdHex, urlId } from '@ccpipe/core';
import type {
  CaptureItem, CaptureOptions, DatasetSummary, DomainDatasets, IndexSource, IndexView, PageItem, PageQuery, PageResult, PageRow, UrlItem,
} from '@ccpipe/core';

/** One registered domain held by a {@link MemoryIndexView}. */
export interface MemoryDomain {
  /** The domain's domain64 prefix, text form. */
  domain64: string;
  /** datasetId → that dataset's URLs of the domain, already in listing order (domain64, then url). */
  urls: Map<number, UrlItem[]>;
}

/** A dataset as {@link buildMemoryView} takes it (counts are derived). */
export interface MemoryDataset {
  datasetId: number;
  name: string;
  crawl: string | null;
}

/** One capture as {@link buildMemoryView} takes it; `url` is canonicalized there. Language and size default to null. */
export type MemoryCapture = Omit<CaptureItem, 'urlId' | 'language' | 'contentLength' | 'text'> &
  Partial<Pick<CaptureItem, 'language' | 'contentLength' | 'text'>>;

/**
 * An {@link IndexView} over resident maps: for tests, benchmarks and small embedded indexes. Immutable once
 * built (nothing here mutates the maps it is given; callers must not either). `urls()` slices a resident array,
 * `domain()` is one Map lookup.
 */
export class MemoryIndexView implements IndexView {
  private readonly summaries: DatasetSummary[];

  /**
   * @param domains registered domain → its datasets and URL lists (lists already sorted).
   * @param captures canonical URL → its captures across datasets.
   * @param datasets every dataset of the version; `urlCount`/`domainCount` are computed from `domains`.
   */
  constructor(
    readonly version: string,
    datasets: readonly MemoryDataset[],
    private readonly domains: ReadonlyMap<string, MemoryDomain>,
    private readonly byUrl: ReadonlyMap<string, readonly CaptureItem[]>,
    private readonly rowsByDomain: ReadonlyMap<string, readonly PageRow[]> = new Map(),
  ) {
    const counts = new Map<number, { urls: number; domains: number }>(datasets.map((d) => [d.datasetId, { urls: 0, domains: 0 }]));
    for (const d of domains.values()) {
      for (const [id, list] of d.urls) {
        const c = counts.get(id);
        if (c === undefined) continue;
        c.urls += list.length;
        c.domains++;
      }
    }
    this.summaries = [...datasets]
      .sort((a, b) => a.datasetId - b.datasetId)
      .map((d) => ({
        kind: 'crawl' as const, source: d.crawl === null ? [] : [d.crawl], ...d,
        urlCount: counts.get(d.datasetId)?.urls ?? 0, domainCount: counts.get(d.datasetId)?.domains ?? 0,
      }));
  }

  domain(domain: string): DomainDatasets | null {
    const d = this.domains.get(domain);
    if (d === undefined) return null;
    const datasets: DomainDatasets['datasets'] = [];
    const rows = this.rowsByDomain.get(domain) ?? [];
    for (const [datasetId, list] of d.urls) {
      const facts = domainFactsOf(rows.filter((r) => r.datasetId === datasetId).map((r) => ({ ...r, host: new URL(r.url).hostname })));
      datasets.push({ datasetId, urlCount: list.length, ...(facts !== null && this.rowsByDomain.size > 0 && { facts }) });
    }
    datasets.sort((a, b) => a.datasetId - b.datasetId);
    return { domain, domain64: d.domain64, datasets };
  }

  async urls(domain: string, datasetId: number, offset: number, limit: number): Promise<{ total: number; items: UrlItem[] }> {
    const list = this.domains.get(domain)?.urls.get(datasetId);
    if (list === undefined) return { total: 0, items: [] };
    return { total: list.length, items: list.slice(offset, offset + limit) };
  }

  async captures(canonicalUrl: string, opts: CaptureOptions = {}): Promise<CaptureItem[]> {
    return (this.byUrl.get(canonicalUrl) ?? []).map((c) => {
      const { text, ...rest } = c;
      return opts.text === true ? { ...rest, text: text ?? null } : rest;
    });
  }

  async pages(domain: string, q: PageQuery): Promise<PageResult<PageItem>> {
    const page = selectPage(this.rowsByDomain.get(domain) ?? [], q);
    return { ...page, items: page.items.map((r) => ({ ...r, urlId: urlIdHex(urlId(r.url)) })) };
  }

  datasets(): DatasetSummary[] {
    return this.summaries.map((d) => ({ ...d }));
  }

  topDomains(datasetId: number, limit: number): { domain: string; urlCount: number }[] {
    const out: { domain: string; urlCount: number }[] = [];
    for (const [domain, d] of this.domains) {
      const n = d.urls.get(datasetId)?.length ?? 0;
      if (n > 0) out.push({ domain, urlCount: n });
    }
    out.sort((a, b) => b.urlCount - a.urlCount || (a.domain < b.domain ? -1 : 1));
    return out.slice(0, Math.min(limit, TOP_DOMAINS_KEPT));
  }

  /** Number of registered domains (benchmarks, tests). */
  get domainCount(): number {
    return this.domains.size;
  }
}

/**
 * Builds a {@link MemoryIndexView} from captures the way the merger lays out an index: URLs canonicalized
 * (invalid ones skipped and counted), grouped by ICANN registered domain (a public-suffix or IP host is its own
 * domain), domain64 keys assigned in (domain, url) order, each (domain, dataset) listing sorted by (domain64, url)
 * and showing the latest capture of each URL. Pure; deterministic for a given input set.
 */
export function buildMemoryView(
  version: string,
  datasets: readonly MemoryDataset[],
  captures: Iterable<MemoryCapture>,
): { view: MemoryIndexView; skipped: number } {
  let skipped = 0;
  const rows: { c: MemoryCapture; url: string; domain: string; host: string; icann: string | null }[] = [];
  for (const c of captures) {
    try {
      const cu = canonicalizeUrl(c.url);
      rows.push({ c, url: cu.url, host: cu.host, icann: cu.domain, domain: cu.domain ?? cu.host });
    } catch {
      skipped++;
    }
  }
  rows.sort((a, b) => cmp(a.domain, b.domain) || cmp(a.url, b.url));
  const registry = new Domain64Registry();
  const keys = new Map<string, bigint>();
  for (const r of rows) {
    if (!keys.has(r.url)) keys.set(r.url, registry.assign(domain64ItemOf({ host: r.host, domain: r.icann, url: r.url })));
  }
  const ids = new Map<string, string>();
  const idOf = (url: string): string => {
    let id = ids.get(url);
    if (id === undefined) ids.set(url, (id = urlIdHex(urlId(url))));
    return id;
  };
  // latest capture per (domain, dataset, url)
  const latest = new Map<string, Map<number, Map<string, MemoryCapture>>>();
  const byUrl = new Map<string, CaptureItem[]>();
  for (const r of rows) {
    let perDomain = latest.get(r.domain);
    if (perDomain === undefined) latest.set(r.domain, (perDomain = new Map()));
    let perDataset = perDomain.get(r.c.datasetId);
    if (perDataset === undefined) perDomain.set(r.c.datasetId, (perDataset = new Map()));
    const prev = perDataset.get(r.url);
    if (prev === undefined || (prev.ts ?? '') < (r.c.ts ?? '')) perDataset.set(r.url, r.c);
    const item: CaptureItem = {
      datasetId: r.c.datasetId, urlId: idOf(r.url), url: r.url, ts: r.c.ts, status: r.c.status, title: r.c.title, textLength: r.c.textLength,
      language: r.c.language ?? null, contentLength: r.c.contentLength ?? null, ...(r.c.text !== undefined && { text: r.c.text }), warc: r.c.warc === null ? null : { ...r.c.warc },
    };
    const list = byUrl.get(r.url);
    if (list === undefined) byUrl.set(r.url, [item]);
    else list.push(item);
  }
  for (const list of byUrl.values()) list.sort((a, b) => cmp(a.ts ?? '', b.ts ?? '') || a.datasetId - b.datasetId);
  const domains = new Map<string, MemoryDomain>();
  const pageRows = new Map<string, PageRow[]>();
  for (const [domain, perDomain] of latest) {
    const urls = new Map<number, UrlItem[]>();
    const rowsOfDomain: PageRow[] = [];
    pageRows.set(domain, rowsOfDomain);
    for (const [datasetId, perDataset] of perDomain) {
      for (const [url, c] of perDataset) {
        rowsOfDomain.push({
          datasetId, url, surt: surtOf(url), ts: c.ts === null ? NO_TIME : Date.parse(c.ts), status: c.status ?? NO_STATUS, title: c.title,
          contentLength: c.contentLength ?? null, language: c.language ?? null,
        });
      }
      const items = [...perDataset].map(([url, c]) => ({ key: keys.get(url) as bigint, item: { urlId: idOf(url), url, ts: c.ts, status: c.status, title: c.title } }));
      items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : cmp(a.item.url, b.item.url)));
      urls.set(datasetId, items.map((x) => x.item));
    }
    const lo = registry.rangesForDomain(domain)[0]?.lo ?? 0n;
    domains.set(domain, { domain64: formatDomain64(lo), urls });
  }
  return { view: new MemoryIndexView(version, datasets, domains, byUrl, pageRows), skipped };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * An {@link IndexSource} whose current version is whatever view was last {@link MemoryIndexSource.set set}: flips
 * are atomic (a request that already called `current()` keeps its view), and the last few versions set stay
 * reachable by name (`at`). `close()` is idempotent; afterwards
 * `current()` resolves to null.
 */
export class MemoryIndexSource implements IndexSource {
  private view: IndexView | null;
  private closed = false;
  /** The views set most recently, by version (at most `keep`), for {@link at}. */
  private readonly kept = new Map<string, IndexView>();

  constructor(view: IndexView | null = null, private readonly keep = 3) {
    this.view = view;
    if (view) this.kept.set(view.version, view);
  }

  /** Makes `view` the current version (a manifest flip); the last `keep` versions stay reachable through {@link at}. */
  set(view: IndexView | null): void {
    this.view = view;
    if (view === null) return;
    this.kept.delete(view.version);
    this.kept.set(view.version, view);
    for (const k of this.kept.keys()) if (this.kept.size > this.keep) this.kept.delete(k);
  }

  async current(): Promise<IndexView | null> {
    return this.closed ? null : this.view;
  }

  async at(version: string): Promise<IndexView | null> {
    return this.closed ? null : (this.kept.get(version) ?? null);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
