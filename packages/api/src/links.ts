import type { LinkItem, LinkPage } from '@ccpipe/core';
import { ApiError } from './api-error';
import { encodeCursor, queryDigest } from './cursor';
import { datasetNames, datasetsOf, domainOfParam, limitParam, offsetOf, onlyParams, unicodeOf, urlParam, type RequestContext } from './handlers';

const noGraph = (): ApiError =>
  new ApiError('CCP_ERR_API_NO_LINKS', 'this index version keeps no link graph (merged before links existed, with links off, or from a lake without outlinks)');

function itemJson(i: LinkItem, names: ReadonlyMap<number, string>): object {
  return { url: i.url, domain: i.domain, dataset_id: i.datasetId, dataset: names.get(i.datasetId) ?? null, ...(i.ts !== null && { ts: i.ts }) };
}

function pageJson(ctx: RequestContext, page: LinkPage, offset: number, limit: number, digest: string): object {
  const names = datasetNames(ctx.view);
  const end = offset + page.items.length;
  return {
    total: page.total,
    by_dataset: page.byDataset.map((d) => ({
      dataset_id: d.datasetId, dataset: names.get(d.datasetId) ?? null, total: d.total, ...(d.linkingDomains !== undefined && { linking_domains: d.linkingDomains }),
    })),
    items: page.items.map((i) => itemJson(i, names)),
    next_cursor: end < page.total && page.items.length > 0 && page.items.length >= limit
      ? encodeCursor({ version: ctx.view.version, query: digest, key: [end] })
      : null,
  };
}

/**
 * `GET /v1/url/links?url=…&direction=out|in&dataset_id=&cursor=&limit=`: a page's outlinks (by domain, then URL) or the
 * pages linking to it (by their position in the dataset), in dataset order, across the visible datasets or one.
 * `total` is exact: per dataset the distinct targets or linking pages, summed over datasets (a page linking in two
 * crawls counts once in each). A URL no visible page links to (or without outlinks) answers `total: 0`.
 */
export async function getUrlLinks(ctx: RequestContext, query: URLSearchParams): Promise<object> {
  onlyParams(query, ['url', 'direction', 'dataset_id', 'cursor', 'limit']);
  const { url, domain } = urlParam(query);
  const dirRaw = query.get('direction') ?? 'out';
  if (dirRaw !== 'out' && dirRaw !== 'in') throw new ApiError('CCP_ERR_API_BAD_REQUEST', "direction is 'out' or 'in'", { param: 'direction' });
  const datasetIds = datasetsOf(ctx, query);
  const limit = limitParam(query.get('limit'));
  const digest = queryDigest(['links', url, dirRaw, datasetIds]);
  const offset = offsetOf(ctx, query, digest);
  const page = ctx.view.links === undefined ? null : await ctx.view.links({ url, domain, direction: dirRaw, datasetIds, offset, limit });
  if (page === null) throw noGraph();
  return { url, domain, ...unicodeOf(domain), direction: dirRaw, version: ctx.view.version, limit, ...pageJson(ctx, page, offset, limit, digest) };
}

/**
 * `GET /v1/domain/{d}/inlinks?dataset_id=&cursor=&limit=`: the pages outside registered domain `d` that link to any page
 * of it, by dataset then position. `total` counts distinct linking pages and `linking_domains` their distinct registered
 * domains, each per dataset and summed over the datasets answered. A domain nothing visible links to answers 200 with
 * `total: 0` (never 404: the answer says nothing about datasets the caller may not see).
 */
export async function getDomainInlinks(ctx: RequestContext, segment: string, query: URLSearchParams): Promise<object> {
  onlyParams(query, ['dataset_id', 'cursor', 'limit']);
  const domain = domainOfParam(segment);
  const datasetIds = datasetsOf(ctx, query);
  const limit = limitParam(query.get('limit'));
  const digest = queryDigest(['inlinks', domain, datasetIds]);
  const offset = offsetOf(ctx, query, digest);
  const page = ctx.view.domainInlinks === undefined ? null : await ctx.view.domainInlinks({ domain, datasetIds, offset, limit });
  if (page === null) throw noGraph();
  return {
    domain, ...unicodeOf(domain), version: ctx.view.version, limit,
    linking_domains: page.byDataset.reduce((n, d) => n + (d.linkingDomains ?? 0), 0),
    ...pageJson(ctx, page, offset, limit, digest),
  };
}
