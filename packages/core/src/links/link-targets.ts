import { canonicalizeUrl } from '../url';

/** A page's outlinks as the link graph keeps them: canonical URLs and, in step, their registered domains. */
export interface LinkTargets {
  /** Canonical target URLs, in document order, each once, the page itself left out. */
  urls: string[];
  /** `domains[i]` is the registered domain of `urls[i]` (the host when the PSL knows no registered domain). */
  domains: string[];
  /** Links dropped because they do not canonicalize (bad host, over-long, …). */
  invalid: number;
}

/**
 * The link graph's view of a page's outlinks (docs/links.md): each link canonicalized as the URL index canonicalizes
 * its rows, so an inlink of a URL is counted under the same key as the URL's own row; links to the page itself
 * (after canonicalization: `#top`, an empty href, a differently-cased host) dropped; duplicates counted once.
 * `pageUrl` must already be canonical. Never throws.
 */
export function linkTargets(pageUrl: string, outlinks: readonly string[]): LinkTargets {
  const urls: string[] = [];
  const domains: string[] = [];
  const seen = new Set<string>([pageUrl]);
  let invalid = 0;
  for (const link of outlinks) {
    let c;
    try {
      c = canonicalizeUrl(link);
    } catch {
      invalid++;
      continue;
    }
    if (seen.has(c.url)) continue;
    seen.add(c.url);
    urls.push(c.url);
    domains.push(c.domain ?? c.host);
  }
  return { urls, domains, invalid };
}
