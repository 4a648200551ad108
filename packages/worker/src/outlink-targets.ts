import { canonicalizeUrl, type LinkTargets } from '@ccpipe/core';

/** A link as it canonicalizes: its canonical URL and registered domain (the host when none), or null when it does not. */
type CanonicalLink = { url: string; domain: string } | null;

/**
 * Canonical forms of links already seen, by the link as extracted. Made per batch ({@link newLinkCache}): a batch is a
 * run of one CDX block, whose pages share most of their navigation, so a link seen on one page is usually on the next.
 */
export type LinkCache = Map<string, CanonicalLink>;

/**
 * Entries a cache holds before it starts over (≈ 12 MB; a 500-record batch of the dev crawls has ≈ 10,000 distinct
 * links): a bound, not a tuning knob.
 */
const MAX_ENTRIES = 50_000;

/** An empty {@link LinkCache}. */
export function newLinkCache(): LinkCache {
  return new Map();
}

/**
 * Core's `linkTargets` with each distinct link canonicalized once per `cache`: the same result (canonical URLs in
 * document order, each once, the page left out; their domains in step; the links that do not canonicalize counted),
 * since canonicalizeUrl is pure. Outlinks were the main thread's largest per-record cost (issue #25). Never throws.
 */
export function outlinkTargets(pageUrl: string, outlinks: readonly string[], cache: LinkCache): LinkTargets {
  const urls: string[] = [];
  const domains: string[] = [];
  const seen = new Set<string>([pageUrl]);
  let invalid = 0;
  for (const link of outlinks) {
    let c = cache.get(link);
    if (c === undefined) {
      try {
        const u = canonicalizeUrl(link);
        c = { url: u.url, domain: u.domain ?? u.host };
      } catch {
        c = null;
      }
      if (cache.size >= MAX_ENTRIES) cache.clear();
      cache.set(link, c);
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
