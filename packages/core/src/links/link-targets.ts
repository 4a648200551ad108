import { canonicalLinkTarget } from '../url';

/** A page's outlinks as the link graph keeps them: canonical URLs and, in step, their registered domains. */
export interface LinkTargets {
  /** Canonical target URLs, in document order, each once, the page itself left out. */
  urls: string[];
  /** `domains[i]` is the registered domain of `urls[i]` (the host when the PSL knows no registered domain). */
  domains: string[];
  /** Links dropped because they do not canonicalize (bad host, over-long, …). */
  invalid: number;
}

/** A link as it canonicalizes: its canonical URL and registered domain (the host when none), or null when it does not. */
type CanonicalLink = { url: string; domain: string } | null;

/**
 * Canonical forms of links already seen, by the link as extracted: one per batch in the worker, whose pages (a run of
 * one CDX block) share most of their navigation, so a link seen on one page is usually on the next. A cache over
 * {@link MAX_CACHED} links starts over.
 */
export type LinkCache = Map<string, CanonicalLink>;

/** Entries a {@link LinkCache} holds before it starts over (≈ 12 MB; a 500-record batch of the dev crawls has ≈ 10,000 distinct links). */
const MAX_CACHED = 50_000;

/** An empty {@link LinkCache}. */
export function newLinkCache(): LinkCache {
  return new Map();
}

/**
 * The link graph's view of a page's outlinks (docs/links.md): each link canonicalized as the URL index canonicalizes
 * its rows, so an inlink of a URL is counted under the same key as the URL's own row; links to the page itself
 * (after canonicalization: `#top`, an empty href, a differently-cased host) dropped; duplicates counted once.
 * `pageUrl` must already be canonical. With `cache`, each distinct link is canonicalized once across the calls that
 * share it (the same answer: canonicalization is pure). Never throws.
 */
export function linkTargets(pageUrl: string, outlinks: readonly string[], cache?: LinkCache): LinkTargets {
  const urls: string[] = [];
  const domains: string[] = [];
  const seen = new Set<string>([pageUrl]);
  let invalid = 0;
  for (const link of outlinks) {
    let c = cache?.get(link);
    if (c === undefined) {
      // canonicalizeUrl's url and domain, without the SURT and the private domain a link target does not need
      c = canonicalLinkTarget(link);
      if (cache !== undefined) {
        if (cache.size >= MAX_CACHED) cache.clear();
        cache.set(link, c);
      }
    }
    if (c === null) {
      invalid++;
      continue;
    }
    if (seen.has(c.url)) continue;
    seen.add(c.url);
    urls.push(c.url);
    domains.push(c.domain);
  }
  return { urls, domains, invalid };
}
