import { NO_STATUS, PAGE_SORTS, isoOfMs, parseStatusMatch, type AcrossKey, type AcrossQuery, type PageFilter, type PageItem, type PageKey, type PageOrder, type PageQuery, type PageSort } from '@ccpipe/core';
import { ApiError } from './api-error';
import { badCursor, decodeCursor, encodeCursor, queryDigest, type PageCursor } from './cursor';
import { datasetNames, domainOfParam, intParam, limitParam, onlyParams, visible, type RequestContext } from './handlers';

/** The query parameters of the web-table page routes. */
export const PAGE_PARAMS = ['dataset_id', 'from', 'to', 'status', 'min_size', 'max_size', 'sort', 'order', 'cursor', 'limit'] as const;
/** The per-domain route's link filters besides (docs/links.md). */
export const DOMAIN_PAGE_PARAMS = [...PAGE_PARAMS, 'min_inlinks', 'max_outlinks'] as const;

const TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/**
 * An ISO 8601 date (`2024-03-01`, midnight UTC) or date-time (`2024-03-01T12:00:00Z`; no zone means UTC; an offset
 * `+02:00` is honoured; a fraction is cut to milliseconds) as epoch ms, or null when absent.
 * @throws ApiError CCP_ERR_API_BAD_REQUEST (naming `name`) for anything else, an impossible date included (`02-30`)
 */
export function timeParam(raw: string | null, name: string): number | null {
  if (raw === null || raw === '') return null;
  const m = TIME.exec(raw);
  const bad = () => new ApiError('CCP_ERR_API_BAD_REQUEST', `${name} must be an ISO 8601 date or date-time (UTC unless an offset is given)`, { param: name });
  if (m === null) throw bad();
  const [y, mo, d, h = 0, mi = 0, s = 0] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((x) => (x === undefined ? undefined : Number(x))) as number[];
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  const t = Date.UTC(y!, mo! - 1, d!, h, mi, s, ms);
  const back = new Date(t);
  // Date.UTC rolls 02-30 over into March and 24:00 into the next day: refuse what does not come back as written
  if (!Number.isFinite(t) || back.getUTCFullYear() !== y || back.getUTCMonth() !== mo! - 1 || back.getUTCDate() !== d || back.getUTCHours() !== h || back.getUTCMinutes() !== mi || back.getUTCSeconds() !== s) throw bad();
  const zone = m[8];
  if (zone === undefined || zone === 'Z') return t;
  const sign = zone[0] === '-' ? -1 : 1;
  const [zh, zm] = [Number(zone.slice(1, 3)), Number(zone.slice(4, 6))];
  if (zh > 23 || zm > 59) throw bad();
  return t - sign * (zh * 60 + zm) * 60_000;
}

function oneOf<T extends string>(raw: string | null, name: string, values: readonly T[], dflt: T): T {
  if (raw === null || raw === '') return dflt;
  if (!(values as readonly string[]).includes(raw)) throw new ApiError('CCP_ERR_API_BAD_REQUEST', `${name} must be one of ${values.join(', ')}`, { param: name });
  return raw as T;
}

/** The filters, order and page size every page route shares, checked; `datasetIds` is left to the route. */
export interface PageTerms extends Omit<PageFilter, 'datasetIds'> {
  sort: PageSort;
  order: PageOrder;
  limit: number;
  /** The `status` parameter as given (for the cursor's query digest). */
  statusRaw: string | null;
}

/** Parses the shared page parameters. @throws ApiError CCP_ERR_API_BAD_REQUEST naming the parameter at fault */
export function pageTermsOf(query: URLSearchParams): PageTerms {
  const from = timeParam(query.get('from'), 'from');
  const to = timeParam(query.get('to'), 'to');
  if (from !== null && to !== null && from > to) throw new ApiError('CCP_ERR_API_BAD_REQUEST', 'from must not be after to', { param: 'from' });
  const statusRaw = query.get('status');
  let status = null;
  if (statusRaw !== null && statusRaw !== '') {
    status = parseStatusMatch(statusRaw);
    if (status === null) throw new ApiError('CCP_ERR_API_BAD_REQUEST', 'status takes codes (404) and classes (4xx), comma-separated', { param: 'status' });
  }
  const minSize = query.get('min_size') ? intParam(query.get('min_size'), 'min_size', 0, Number.MAX_SAFE_INTEGER) : null;
  const maxSize = query.get('max_size') ? intParam(query.get('max_size'), 'max_size', 0, Number.MAX_SAFE_INTEGER) : null;
  if (minSize !== null && maxSize !== null && minSize > maxSize) throw new ApiError('CCP_ERR_API_BAD_REQUEST', 'min_size must not be above max_size', { param: 'min_size' });
  const minInlinks = query.get('min_inlinks') ? intParam(query.get('min_inlinks'), 'min_inlinks', 0, 0x7fffffff) : null;
  const maxOutlinks = query.get('max_outlinks') ? intParam(query.get('max_outlinks'), 'max_outlinks', 0, 0x7fffffff) : null;
  return {
    from, to, status, minSize, maxSize, minInlinks, maxOutlinks, statusRaw: statusRaw === '' ? null : statusRaw,
    sort: oneOf(query.get('sort'), 'sort', PAGE_SORTS, 'surt'),
    order: oneOf(query.get('order'), 'order', ['asc', 'desc'] as const, 'asc'),
    limit: limitParam(query.get('limit')),
  };
}

/** A page item as the API answers it. */
export function pageItemJson(r: PageItem, names: ReadonlyMap<number, string>): object {
  return {
    url_id: r.urlId, url: r.url, surt: r.surt, dataset_id: r.datasetId, dataset: names.get(r.datasetId) ?? null,
    ts: isoOfMs(r.ts), status: r.status === NO_STATUS ? null : r.status, title: r.title,
    content_length: r.contentLength, language: r.language,
    ...(r.inlinks !== undefined && { inlinks: r.inlinks }), ...(r.outlinks !== undefined && { outlinks: r.outlinks }),
  };
}

/**
 * `GET /v1/domain/{domain}/pages`: the domain's web-table rows (one per URL and visible dataset: its latest capture
 * there), filtered by `from`/`to`/`status`/`min_size`/`max_size`, in row-key (SURT) order or by `ts`/`size`, paged by
 * `cursor`. `total` is exact (every row of the domain is read). 404 when no visible dataset holds the domain, or the
 * `dataset_id` asked for does not hold it (or is hidden) — alike, so nothing leaks.
 */
export async function getDomainPages(ctx: RequestContext, segment: string, query: URLSearchParams): Promise<object> {
  onlyParams(query, DOMAIN_PAGE_PARAMS);
  const domain = domainOfParam(segment);
  const terms = pageTermsOf(query);
  const datasetRaw = query.get('dataset_id');
  const datasetId = datasetRaw === null || datasetRaw === '' ? null : intParam(datasetRaw, 'dataset_id', 0, 0xffffffff);
  const found = ctx.view.domain(domain);
  const shown = (found?.datasets ?? []).map((d) => d.datasetId).filter((id) => visible(ctx, id));
  if (found === null || shown.length === 0) throw new ApiError('CCP_ERR_API_DOMAIN_NOT_FOUND', 'no dataset holds this domain');
  if (datasetId !== null && !shown.includes(datasetId)) throw new ApiError('CCP_ERR_API_DATASET_NOT_FOUND', 'this domain has no URLs in this dataset');
  const digest = queryDigest(['domain', domain, datasetId, terms.from, terms.to, terms.statusRaw, terms.minSize, terms.maxSize, terms.minInlinks, terms.maxOutlinks, terms.sort, terms.order]);
  const rawCursor = query.get('cursor');
  const cursor = rawCursor === null || rawCursor === '' ? null : decodeCursor(rawCursor);
  if (cursor !== null && (cursor.query !== digest || cursor.version !== ctx.view.version)) {
    throw new ApiError('CCP_ERR_API_BAD_REQUEST', 'cursor belongs to another query', { param: 'cursor' });
  }
  const q: PageQuery = { ...terms, datasetIds: datasetId === null ? shown : [datasetId], after: cursor === null ? null : domainKeyOf(cursor.key, terms.sort) };
  const page = await ctx.view.pages(domain, q);
  const names = datasetNames(ctx.view);
  return {
    domain, version: ctx.view.version, sort: terms.sort, order: terms.order, limit: terms.limit, total: page.total,
    items: page.items.map((r) => pageItemJson(r, names)),
    next_cursor: page.next === null ? null : encodeCursor({ version: ctx.view.version, query: digest, key: [page.next.value, page.next.surt, page.next.url, page.next.datasetId] }),
  };
}

/** A /domain/{d}/pages cursor's key: [sort value (null for row-key order), surt, url, dataset id]. */
function domainKeyOf(k: PageCursor['key'], sort: PageSort): PageKey {
  const [value, surt, url, datasetId] = k;
  if (k.length !== 4 || typeof surt !== 'string' || typeof url !== 'string' || typeof datasetId !== 'number' || !Number.isSafeInteger(datasetId)) throw badCursor();
  if (value === undefined || typeof value === 'string' || (value === null) !== (sort === 'surt')) throw badCursor();
  return { value, surt, url, datasetId };
}

/** An across-domains cursor's key: [sort value, dataset id, position]. */
function acrossKeyOf(k: PageCursor['key']): AcrossKey {
  const [value, datasetId, position] = k;
  if (k.length !== 3 || typeof value !== 'number' || typeof datasetId !== 'number' || typeof position !== 'number') throw badCursor();
  if (!Number.isSafeInteger(datasetId) || !Number.isSafeInteger(position)) throw badCursor();
  return { value, datasetId, position };
}

/**
 * `GET /v1/pages`: web-table rows across every domain of the visible datasets (or `dataset_id`), answered from the
 * version's secondary orderings — pages captured in a time range (`from`/`to`, `sort=ts`, the default), the largest
 * pages (`min_size`/`max_size`, `sort=size`, the default when only sizes bound the query; `order=desc` for largest
 * first), pages that answered errors (`status=4xx`, sorted by time). Row-key order is per domain
 * (`/v1/domain/{d}/pages`): `sort=surt` is refused here. 404 for a hidden or unknown `dataset_id`, and when the
 * version keeps no orderings.
 */
export async function getPagesAcross(ctx: RequestContext, query: URLSearchParams): Promise<object> {
  onlyParams(query, PAGE_PARAMS);
  const terms = pageTermsOf(query);
  const sortRaw = query.get('sort');
  if (sortRaw === 'surt') throw new ApiError('CCP_ERR_API_BAD_REQUEST', 'row-key order is per domain: /v1/domain/{domain}/pages', { param: 'sort' });
  if (sortRaw === 'inlinks' || sortRaw === 'outlinks') throw new ApiError('CCP_ERR_API_BAD_REQUEST', 'link-count order is per domain: /v1/domain/{domain}/pages', { param: 'sort' });
  const onlySizes = terms.from === null && terms.to === null && terms.status === null && (terms.minSize !== null || terms.maxSize !== null);
  const sort: 'ts' | 'size' = sortRaw === null || sortRaw === '' ? (onlySizes ? 'size' : 'ts') : (terms.sort as 'ts' | 'size');
  const datasetRaw = query.get('dataset_id');
  const datasetId = datasetRaw === null || datasetRaw === '' ? null : intParam(datasetRaw, 'dataset_id', 0, 0xffffffff);
  const shown = ctx.view.datasets().map((d) => d.datasetId).filter((id) => visible(ctx, id));
  if (datasetId !== null && !shown.includes(datasetId)) throw new ApiError('CCP_ERR_API_DATASET_NOT_FOUND', 'no such dataset');
  const digest = queryDigest(['pages', datasetId, terms.from, terms.to, terms.statusRaw, terms.minSize, terms.maxSize, sort, terms.order]);
  const rawCursor = query.get('cursor');
  const cursor = rawCursor === null || rawCursor === '' ? null : decodeCursor(rawCursor);
  if (cursor !== null && (cursor.query !== digest || cursor.version !== ctx.view.version)) {
    throw new ApiError('CCP_ERR_API_BAD_REQUEST', 'cursor belongs to another query', { param: 'cursor' });
  }
  const q: AcrossQuery = { ...terms, sort, datasetIds: datasetId === null ? shown : [datasetId], after: cursor === null ? null : acrossKeyOf(cursor.key) };
  const page = (await ctx.view.pagesAcross?.(q)) ?? null;
  if (page === null) throw new ApiError('CCP_ERR_API_NOT_FOUND', 'this index version keeps no page orderings (merged before they existed, or with them off)');
  const names = datasetNames(ctx.view);
  return {
    version: ctx.view.version, sort, order: terms.order, limit: terms.limit, ...(page.total !== null && { total: page.total }),
    items: page.items.map((r) => ({ domain: r.domain, ...pageItemJson(r, names) })),
    next_cursor: page.next === null ? null : encodeCursor({ version: ctx.view.version, query: digest, key: [page.next.value, page.next.datasetId, page.next.position] }),
  };
}
