import { MAX_SEARCH_LIMIT, MAX_SEARCH_WINDOW, SearchError, parseSearchQuery, type SearchPage } from '@ccpipe/core';
import { ApiError } from './api-error';
import { encodeCursor, queryDigest } from './cursor';
import { datasetNames, datasetsOf, domainOfParam, limitParam, offsetOf, onlyParams, type RequestContext } from './handlers';
import { timeParam } from './pages';

/** Hits per page when `limit` is absent (at most core's MAX_SEARCH_LIMIT are served; a search pages to MAX_SEARCH_WINDOW). */
export const SEARCH_DEFAULT_LIMIT = 10;
/** Seconds a client is told to wait after a search ran past its time limit. */
export const SEARCH_RETRY_AFTER_S = 2;

/** The search's errors as the API answers them: a query the engine cannot take is the client's (400), a timeout 503. */
function apiErrorOf(err: unknown): unknown {
  if (!(err instanceof SearchError)) return err;
  if (err.code === 'CCP_ERR_SEARCH_QUERY') return new ApiError('CCP_ERR_API_BAD_SEARCH', err.message, { param: 'q' });
  if (err.code === 'CCP_ERR_SEARCH_TIMEOUT') {
    return new ApiError('CCP_ERR_API_SEARCH_TIMEOUT', 'the search ran past its time limit: try again later, or narrow it (a domain, a dataset, a phrase)', { retryAfterS: SEARCH_RETRY_AFTER_S });
  }
  return err;
}

/**
 * `GET /v1/search?q=…&domain=&dataset_id=&from=&to=&cursor=&limit=`: pages whose title or extracted text match `q`
 * (words, "phrases", -exclusions; BM25, the title weighted twice), best first, across the visible datasets or one,
 * each hit with a highlighted snippet. A search over datasets the caller may not see returns nothing of them: only
 * visible datasets' shards are opened. `total` is exact up to 10,000 matches per shard, then estimated
 * (`total_exact: false`). Paging goes to the 1,000th hit. @throws ApiError 400 for a query that cannot be searched
 *   (empty, over 1,000 characters, no searchable word, …: the message names it), 503 + Retry-After past the time
 *   limit, 404 `CCP_ERR_API_NO_SEARCH` for a version without search shards
 */
export async function getSearch(ctx: RequestContext, query: URLSearchParams): Promise<object> {
  onlyParams(query, ['q', 'domain', 'dataset_id', 'from', 'to', 'cursor', 'limit']);
  const q = query.get('q') ?? '';
  let normalized: string;
  try {
    normalized = parseSearchQuery(q).normalized;
  } catch (err) {
    throw apiErrorOf(err);
  }
  const rawDomain = query.get('domain');
  const domain = rawDomain === null || rawDomain === '' ? undefined : domainOfParam(encodeURIComponent(rawDomain));
  const datasetIds = datasetsOf(ctx, query);
  const from = timeParam(query.get('from'), 'from');
  const to = timeParam(query.get('to'), 'to');
  const limit = limitParam(query.get('limit'), SEARCH_DEFAULT_LIMIT, MAX_SEARCH_LIMIT);
  const digest = queryDigest(['search', normalized, domain ?? null, datasetIds, from, to]);
  const offset = offsetOf(ctx, query, digest);
  if (offset + limit > MAX_SEARCH_WINDOW) {
    throw new ApiError('CCP_ERR_API_BAD_REQUEST', `a search pages to its ${MAX_SEARCH_WINDOW}th hit at most: narrow the query`, { param: offset > 0 ? 'cursor' : 'limit' });
  }
  let page: SearchPage | null;
  try {
    page = ctx.view.search === undefined ? null : await ctx.view.search({ q, datasetIds, ...(domain !== undefined && { domain }), ...(from !== null && { from }), ...(to !== null && { to }), offset, limit });
  } catch (err) {
    throw apiErrorOf(err);
  }
  if (page === null) throw new ApiError('CCP_ERR_API_NO_SEARCH', 'this index version keeps no search shards (merged before search existed, with search off, or from a lake without text)');
  const names = datasetNames(ctx.view);
  const end = offset + page.items.length;
  return {
    q: normalized, ...(domain !== undefined && { domain }), version: ctx.view.version, limit,
    total: page.total, total_exact: page.totalExact, shards: page.shards,
    items: page.items.map((h) => ({
      url: h.url, dataset_id: h.datasetId, dataset: names.get(h.datasetId) ?? null, ts: h.ts, title: h.title, snippet: h.snippet, snippet_parts: h.snippetParts,
      score: Math.round(h.score * 1e4) / 1e4,
    })),
    next_cursor: page.items.length >= limit && end < Math.min(page.total, MAX_SEARCH_WINDOW)
      ? encodeCursor({ version: ctx.view.version, query: digest, key: [end] })
      : null,
  };
}
