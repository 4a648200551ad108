/** Checks a running API against cc-mirror-dev's oracle.json: the end-to-end tests' shared assertion. */
import { canonicalizeUrl } from '@ccpipe/core';
import { DEV_CRAWLS, loadOracle } from './corpus';

/** GET `url` as JSON with the index version the answer names. */
export async function getJson(url: string): Promise<{ status: number; version: string | null; body: any }> {
  const res = await fetch(url);
  return { status: res.status, version: res.headers.get('x-index-version'), body: await res.json() };
}

const canon = (u: string): string => canonicalizeUrl(u).url;

/**
 * For every (domain, crawl) of oracle.json: `/v1/domain` lists exactly the oracle's datasets with its exact URL
 * counts, and paging `/urls` (40 at a time) returns every canonical URL of the oracle exactly once. Every answer must
 * name one version (`version` when given). Then 404 for an unknown domain, 400 for an invalid one.
 * Returns the version the answers named.
 */
export async function expectApiMatchesOracle(base: string, opts: { version?: string } = {}): Promise<string> {
  const oracle = loadOracle();
  const datasets = await getJson(`${base}/v1/datasets`);
  const idOf = new Map<string, number>((datasets.body.datasets as { dataset_id: number; name: string }[]).map((d) => [d.name, d.dataset_id]));
  expect([...idOf.keys()].sort()).toEqual([...DEV_CRAWLS]);

  // domain → {crawl → oracle entry}
  const byDomain = new Map<string, Map<string, { count: number; urls: string[] }>>();
  for (const crawl of DEV_CRAWLS) {
    for (const [domain, d] of Object.entries(oracle.crawls[crawl]!.domains)) {
      if (!byDomain.has(domain)) byDomain.set(domain, new Map());
      byDomain.get(domain)!.set(crawl, d);
    }
  }
  expect(byDomain.size).toBeGreaterThan(150);
  let version = opts.version ?? null;
  for (const [domain, crawls] of byDomain) {
    const r = await getJson(`${base}/v1/domain/${encodeURIComponent(domain)}`);
    expect(r.status).toBe(200);
    version ??= r.version;
    expect(r.version).toBe(version);
    const got = new Map<number, number>((r.body.datasets as { dataset_id: number; url_count: number }[]).map((d) => [d.dataset_id, d.url_count]));
    for (const [crawl, want] of crawls) {
      const id = idOf.get(crawl)!;
      const wantUrls = new Set(want.urls.map(canon));
      expect({ domain, crawl, count: got.get(id) }).toEqual({ domain, crawl, count: wantUrls.size });
      const seen: string[] = [];
      for (let offset: number | null = 0; offset !== null; ) {
        const page = await getJson(`${base}/v1/domain/${encodeURIComponent(domain)}/datasets/${id}/urls?offset=${offset}&limit=40`);
        expect(page.status).toBe(200);
        seen.push(...(page.body.items as { url: string }[]).map((i) => i.url));
        offset = page.body.next_offset as number | null;
      }
      expect(seen).toHaveLength(new Set(seen).size);
      expect(new Set(seen.map(canon))).toEqual(wantUrls);
    }
    expect(got.size).toBe(crawls.size);
  }
  expect((await getJson(`${base}/v1/domain/not-in-the-index.example`)).status).toBe(404);
  expect((await getJson(`${base}/v1/domain/${encodeURIComponent('exa..com')}`)).status).toBe(400);
  return version!;
}
