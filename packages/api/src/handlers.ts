import { domainToUnicode } from 'node:url';
import { NO_TIME, TOP_DOMAINS_KEPT, UrlError, canonicalizeUrl, registeredDomainOf, textKept } from '@ccpipe/core';
import type { DomainFacts, IndexView } from '@ccpipe/core';
import type { AclPrincipal } from './acl';
import { ApiError } from './api-error';
import { badCursor, decodeCursor } from './cursor';

/** Default and maximum page size of the URL listing. */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/** What every /v1 handler gets: ONE pinned view and what the caller may see. */
export interface RequestContext {
  view: IndexView;
  /** null when no ACL is configured (everything is visible). */
  principal: AclPrincipal | null;
}

/** id → name of the datasets of a view, built once per view. */
const namesByView = new WeakMap<IndexView, Map<number, string>>();
export function datasetNames(view: IndexView): Map<number, string> {
  let m = namesByView.get(view);
  if (m === undefined) namesByView.set(view, (m = new Map(view.datasets().map((d) => [d.datasetId, d.name]))));
  return m;
}

export function visible(ctx: RequestContext, datasetId: number): boolean {
  return ctx.principal === null || ctx.principal.canSee(datasetId, datasetNames(ctx.view).get(datasetId));
}

/**
 * A host as the path segment may name it: a name or IPv4 address with an optional numeric `:port`, a bracketed IPv6
 * address with one, or a bare IPv6 address — not a URL, a path, a query or credentials (a URL's captures are
 * /v1/url's), and no code point the WHATWG URL standard forbids in a host (`< > ^ | %`, controls), which no
 * canonical URL in the lake can have. The port is checked to be at most 65535 apart ({@link PORT_SUFFIX}).
 */
const HOST_PARAM = /^(?:[^\s/?#@\\[\]:<>^|%\x00-\x1f\x7f]+(?::\d{1,5})?|\[[0-9A-Fa-f:.]+\](?::\d{1,5})?|[0-9A-Fa-f]*(?::[0-9A-Fa-f.]*){2,})$/;
/** The `:port` after a name, IPv4 address or bracketed IPv6 address (a bare IPv6 address has none). */
const PORT_SUFFIX = /(?:^[^:]*|\])(?::(\d{1,5}))$/;

/**
 * The registered domain named by a path segment: percent-decoded, any host accepted (`WWW.Example.CO.UK` →
 * `example.co.uk`, IDN → punycode, `:port` and one trailing dot dropped). An IP is its own domain.
 * @throws ApiError CCP_ERR_API_BAD_DOMAIN when it is not a host (a URL, a path, a query, a port that is not a number
 *   up to 65535, an empty label, a forbidden host code point), or is a public suffix itself.
 */
export function domainOfParam(segment: string): string {
  let s: string;
  try {
    s = decodeURIComponent(segment);
  } catch {
    throw new ApiError('CCP_ERR_API_BAD_DOMAIN', 'domain is not valid percent-encoding');
  }
  // IDNA maps the ideographic and full-width full stops to '.': map them first, so 'example.com。。' is an empty label too
  s = s.replace(/[\u3002\uff0e\uff61]/g, '.');
  const port = PORT_SUFFIX.exec(s)?.[1];
  const host = s.length > 0 && s.length <= 300 && HOST_PARAM.test(s) && !/\.\.(?::\d+)?$/.test(s) && (port === undefined || Number(port) <= 65535);
  const d = host ? registeredDomainOf(s) : null;
  // registeredDomainOf('exa..com') yields '.com': an empty label is never a host
  if (d === null || d.charCodeAt(0) === 46 || d.includes('..')) throw new ApiError('CCP_ERR_API_BAD_DOMAIN', 'not a host with a registered domain', { detail: { domain: s.slice(0, 300) } });
  return d;
}

/**
 * The page size: `dflt` ({@link DEFAULT_LIMIT}) when absent, any positive decimal integer served as at most `max`
 * ({@link MAX_LIMIT}; however many digits it has). @throws ApiError CCP_ERR_API_BAD_REQUEST for 0 or what is not a decimal integer
 */
export function limitParam(raw: string | null, dflt = DEFAULT_LIMIT, max = MAX_LIMIT): number {
  if (raw === null || raw === '') return dflt;
  if (!/^\d+$/.test(raw) || !/[1-9]/.test(raw)) throw new ApiError('CCP_ERR_API_BAD_REQUEST', `limit must be a positive integer (at most ${max} are served)`, { param: 'limit' });
  const digits = raw.replace(/^0+/, '');
  return digits.length > 4 ? max : Math.min(Number(digits), max);
}

/** A decimal query/path integer in [min, max], or `dflt` when absent. @throws ApiError CCP_ERR_API_BAD_REQUEST */
export function intParam(raw: string | null | undefined, name: string, min: number, max: number, dflt?: number): number {
  if (raw === null || raw === undefined || raw === '') {
    if (dflt !== undefined) return dflt;
    throw new ApiError('CCP_ERR_API_BAD_REQUEST', `${name} is required`, { param: name });
  }
  const n = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new ApiError('CCP_ERR_API_BAD_REQUEST', `${name} must be an integer from ${min} to ${max}`, { param: name });
  return n;
}

/**
 * Refuses a query holding a parameter the route does not define, or one given twice: a misspelt filter would
 * otherwise be ignored and answer as if it matched. @throws ApiError CCP_ERR_API_BAD_REQUEST naming the parameter
 */
export function onlyParams(query: URLSearchParams, allowed: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (!allowed.includes(name)) throw new ApiError('CCP_ERR_API_BAD_REQUEST', 'unknown query parameter', { param: name });
    if (seen.has(name)) throw new ApiError('CCP_ERR_API_BAD_REQUEST', 'query parameter given more than once', { param: name });
    seen.add(name);
  }
}

/** Longest `text` answered, in UTF-8 bytes; a longer one is cut at a character boundary with `text_truncated: true`. */
export const MAX_TEXT_BYTES = 1024 * 1024;

/** `text` cut to at most {@link MAX_TEXT_BYTES} UTF-8 bytes, never inside a character. */
export function cutText(text: string): { text: string; truncated: boolean } {
  if (text.length * 3 <= MAX_TEXT_BYTES) return { text, truncated: false };
  const b = Buffer.from(text, 'utf8');
  if (b.length <= MAX_TEXT_BYTES) return { text, truncated: false };
  let end = MAX_TEXT_BYTES;
  while (end > 0 && (b[end]! & 0xc0) === 0x80) end--; // back off a continuation byte: the cut lands on a lead byte
  return { text: b.toString('utf8', 0, end), truncated: true };
}

/** `GET /v1/domain/{domain}`. */
export function getDomain(ctx: RequestContext, segment: string, query: URLSearchParams): object {
  onlyParams(query, []);
  const domain = domainOfParam(segment);
  const found = ctx.view.domain(domain);
  const names = datasetNames(ctx.view);
  const datasets = (found?.datasets ?? [])
    .filter((d) => visible(ctx, d.datasetId))
    .map((d) => ({ dataset_id: d.datasetId, name: names.get(d.datasetId) ?? null, url_count: d.urlCount, ...(d.facts !== undefined && factsJson(d.facts)) }));
  // a domain whose every dataset is hidden does not exist for this caller
  if (found === null || datasets.length === 0) throw new ApiError('CCP_ERR_API_DOMAIN_NOT_FOUND', 'no dataset holds this domain');
  return { domain: found.domain, ...unicodeOf(found.domain), domain64: found.domain64, version: ctx.view.version, datasets };
}

/** `{domain_unicode}` for an IDN domain (its Unicode form beside the punycode), nothing for any other. */
export function unicodeOf(domain: string): { domain_unicode?: string } {
  if (!domain.includes('xn--')) return {};
  const u = domainToUnicode(domain);
  return u !== '' && u !== domain ? { domain_unicode: u } : {};
}

/** A dataset's facts of a domain as `/v1/domain` answers them (beside `url_count`). */
export function factsJson(f: DomainFacts): object {
  return {
    hosts: f.hosts, status_classes: f.statusClasses, languages: f.languages, first_ts: f.firstTs, last_ts: f.lastTs,
    content_length_median: f.contentLengthMedian, content_length_p90: f.contentLengthP90,
  };
}

/** `GET /v1/domain/{domain}/datasets/{dataset_id}/urls?offset&limit`: limit defaults to 100, capped at 1000. */
export async function getUrls(ctx: RequestContext, segment: string, datasetSegment: string, query: URLSearchParams): Promise<object> {
  onlyParams(query, ['offset', 'limit']);
  const domain = domainOfParam(segment);
  const datasetId = intParam(datasetSegment, 'dataset_id', 0, 0xffffffff);
  const offset = intParam(query.get('offset'), 'offset', 0, Number.MAX_SAFE_INTEGER, 0);
  const limit = limitParam(query.get('limit'));
  const found = ctx.view.domain(domain);
  // hidden and absent answer alike: no existence leak
  if (found === null || !found.datasets.some((d) => d.datasetId === datasetId) || !visible(ctx, datasetId)) {
    throw new ApiError('CCP_ERR_API_DATASET_NOT_FOUND', 'this domain has no URLs in this dataset');
  }
  const page = await ctx.view.urls(domain, datasetId, offset, limit);
  const end = offset + page.items.length;
  return {
    domain,
    dataset_id: datasetId,
    total: page.total,
    offset,
    limit,
    items: page.items.map((u) => ({ url_id: u.urlId, url: u.url, ts: u.ts, status: u.status, title: u.title })),
    next_offset: end < page.total && page.items.length > 0 ? end : null,
  };
}

/**
 * The `url` parameter canonicalized, with its registered domain (the host when it has none).
 * @throws ApiError CCP_ERR_API_BAD_REQUEST when absent, CCP_ERR_API_BAD_URL when over 8192 characters or not an
 *   absolute http(s) URL
 */
export function urlParam(query: URLSearchParams): { url: string; domain: string } {
  const raw = query.get('url');
  if (raw === null || raw.length === 0) throw new ApiError('CCP_ERR_API_BAD_REQUEST', 'url is required', { param: 'url' });
  if (raw.length > 8192) throw new ApiError('CCP_ERR_API_BAD_URL', 'url is longer than 8192 characters', { param: 'url' });
  try {
    const c = canonicalizeUrl(raw);
    return { url: c.url, domain: c.domain ?? c.host };
  } catch (err) {
    if (err instanceof UrlError) throw new ApiError('CCP_ERR_API_BAD_URL', 'not an absolute http(s) URL', { cause: err, param: 'url' });
    throw err;
  }
}

/** `GET /v1/url?url=…`: the captures of one URL (canonicalized first) across the datasets the caller may see. */
export async function getUrl(ctx: RequestContext, query: URLSearchParams): Promise<object> {
  onlyParams(query, ['url', 'include']);
  const include = includeParam(query.get('include'));
  const { url, domain } = urlParam(query);
  const names = datasetNames(ctx.view);
  const every = await ctx.view.captures(url, { text: include.has('text') });
  // the content-versions policy ranks a URL's captures in every dataset (hidden ones too: their texts were dropped alike)
  const versions = ctx.view.textVersions ?? null;
  const kept = textKept(every.map((c) => ({ datasetId: c.datasetId, ts: c.ts === null ? NO_TIME : Date.parse(c.ts) })), versions);
  const captures = every.flatMap((c, i) => (visible(ctx, c.datasetId) ? [{ c, dropped: !kept[i] }] : []));
  if (captures.length === 0) throw new ApiError('CCP_ERR_API_URL_NOT_FOUND', 'no capture of this URL');
  // the link graph's counts of the URL in each dataset of a capture shown (none for a version without links)
  const links = ctx.view.linkCounts === undefined ? null : await ctx.view.linkCounts(url, domain, [...new Set(captures.map(({ c }) => c.datasetId))]);
  return {
    url,
    url_id: captures[0]!.c.urlId,
    domain,
    ...(domain !== null && unicodeOf(domain)),
    version: ctx.view.version,
    ...(versions !== null && { text_versions: versions }),
    captures: captures.map(({ c, dropped }) => ({
      dataset_id: c.datasetId,
      dataset: names.get(c.datasetId) ?? null,
      ts: c.ts,
      status: c.status,
      title: c.title,
      // a text the policy drops is hidden here even while its lake file still holds it (dropped at a later rewrite)
      text_length: dropped ? null : c.textLength,
      language: c.language,
      text_language: c.textLanguage ?? null,
      text_language_confidence: c.textLanguageConfidence ?? null,
      content_length: c.contentLength,
      ...(include.has('text') && textField(dropped ? null : (c.text ?? null))),
      ...(dropped && { text_dropped: true }),
      ...linkCountsOf(links, c.datasetId),
      warc: c.warc === null ? null : { filename: c.warc.filename, offset: c.warc.offset, length: c.warc.length },
      ...(c.extras !== undefined && { extras: c.extras }),
    })),
  };
}

/** A capture's `inlinks` and `outlinks` (exact within its dataset), when the version keeps that dataset's link graph. */
function linkCountsOf(links: ReadonlyMap<number, { inlinks: number; outlinks: number }> | null, datasetId: number): { inlinks?: number; outlinks?: number } {
  const l = links?.get(datasetId);
  return l === undefined ? {} : { inlinks: l.inlinks, outlinks: l.outlinks };
}

/** What `include=` may name (comma-separated). */
const INCLUDES = ['text'] as const;

function includeParam(raw: string | null): Set<string> {
  const out = new Set<string>();
  if (raw === null || raw === '') return out;
  for (const item of raw.split(',')) {
    if (!(INCLUDES as readonly string[]).includes(item)) throw new ApiError('CCP_ERR_API_BAD_REQUEST', `include names what to add: ${INCLUDES.join(', ')}`, { param: 'include' });
    out.add(item);
  }
  return out;
}

function textField(text: string | null): { text: string | null; text_truncated?: true } {
  if (text === null) return { text: null };
  const cut = cutText(text);
  return cut.truncated ? { text: cut.text, text_truncated: true } : { text: cut.text };
}

/** `GET /v1/datasets`: the datasets the caller may see. */
export function getDatasets(ctx: RequestContext, query: URLSearchParams): object {
  onlyParams(query, []);
  return {
    version: ctx.view.version,
    datasets: ctx.view
      .datasets()
      .filter((d) => visible(ctx, d.datasetId))
      .map((d) => ({
        dataset_id: d.datasetId, name: d.name, crawl: d.crawl, kind: d.kind, source: d.source, url_count: d.urlCount, domain_count: d.domainCount,
        rows: d.rows ?? null, rejects: d.rejects ?? null, updated_at: d.updatedAt ?? null,
      })),
  };
}

/**
 * `GET /v1/datasets/{dataset_id}/domains?limit=`: the dataset's registered domains with the most URLs (at most
 * {@link TOP_DOMAINS_KEPT}), most first. 404 for a dataset that does not exist or is hidden (alike), and for a version
 * that keeps no such list.
 */
export function getTopDomains(ctx: RequestContext, datasetSegment: string, query: URLSearchParams): object {
  onlyParams(query, ['limit']);
  const datasetId = intParam(datasetSegment, 'dataset_id', 0, 0xffffffff);
  const raw = query.get('limit');
  const limit = raw === null || raw === '' ? 100 : intParam(raw, 'limit', 1, TOP_DOMAINS_KEPT);
  const exists = ctx.view.datasets().some((d) => d.datasetId === datasetId);
  const items = exists && visible(ctx, datasetId) ? (ctx.view.topDomains?.(datasetId, limit) ?? null) : null;
  if (items === null) throw new ApiError('CCP_ERR_API_DATASET_NOT_FOUND', 'no such dataset, or no list of its domains in this version');
  return { dataset_id: datasetId, version: ctx.view.version, limit, items: items.map((d) => ({ domain: d.domain, ...unicodeOf(d.domain), url_count: d.urlCount })) };
}

/**
 * The datasets a request answers from: `dataset_id` (404 when hidden or unknown) or every dataset the caller may see,
 * by id. @throws ApiError CCP_ERR_API_BAD_REQUEST for a `dataset_id` that is not an id, CCP_ERR_API_DATASET_NOT_FOUND
 */
export function datasetsOf(ctx: RequestContext, query: URLSearchParams): number[] {
  const raw = query.get('dataset_id');
  const all = ctx.view.datasets().map((d) => d.datasetId).filter((id) => visible(ctx, id)).sort((a, b) => a - b);
  if (raw === null || raw === '') return all;
  const id = intParam(raw, 'dataset_id', 0, 0xffffffff);
  if (!all.includes(id)) throw new ApiError('CCP_ERR_API_DATASET_NOT_FOUND', 'no such dataset');
  return [id];
}

/**
 * The offset an offset-paged route's `cursor` continues from (0 without one): the cursor must belong to this query
 * (`digest`) and to the version answering. @throws ApiError CCP_ERR_API_BAD_REQUEST (param `cursor`)
 */
export function offsetOf(ctx: RequestContext, query: URLSearchParams, digest: string): number {
  const raw = query.get('cursor');
  if (raw === null || raw === '') return 0;
  const c = decodeCursor(raw);
  if (c.query !== digest || c.version !== ctx.view.version) throw new ApiError('CCP_ERR_API_BAD_REQUEST', 'cursor belongs to another query', { param: 'cursor' });
  const [offset] = c.key;
  if (c.key.length !== 1 || typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) throw badCursor();
  return offset;
}
