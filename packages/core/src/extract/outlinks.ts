import type { DomDocument } from './dom-types';

/** What {@link collectOutlinks} returns. */
export interface Outlinks {
  links: string[];
  /** True when the page had more distinct links than the cap. */
  truncated: boolean;
}

/** Links longer than this are dropped: no crawler or index keeps them. */
export const MAX_OUTLINK_CHARS = 4096;

function parseUrl(href: string, base?: URL): URL | undefined {
  try {
    return new URL(href, base);
  } catch {
    return undefined;
  }
}

/**
 * The page's `<a href>` and `<area href>` targets: resolved against the first `<base href>` (itself
 * resolved against `pageUrl`) or `pageUrl`, http/https only, fragment dropped, deduplicated in
 * document order, at most `max` of them. Same-page anchors (`href="#…"`) are skipped. Not
 * canonicalized beyond WHATWG URL serialization. Never throws on bad hrefs or a bad `pageUrl`.
 */
export function collectOutlinks(document: DomDocument, pageUrl: string, max: number): Outlinks {
  let base = parseUrl(pageUrl);
  const baseHref = document.querySelector('base[href]')?.getAttribute('href')?.trim();
  if (baseHref) base = parseUrl(baseHref, base) ?? base;

  const seen = new Set<string>();
  const anchors = document.querySelectorAll('a[href], area[href]');
  for (let i = 0; i < anchors.length; i++) {
    const href = anchors[i]?.getAttribute('href')?.trim();
    if (!href || href.startsWith('#') || href.length > MAX_OUTLINK_CHARS) continue;
    const u = parseUrl(href, base);
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) continue;
    u.hash = '';
    const s = u.href;
    if (s.length > MAX_OUTLINK_CHARS || seen.has(s)) continue;
    if (seen.size >= max) return { links: [...seen], truncated: true };
    seen.add(s);
  }
  return { links: [...seen], truncated: false };
}
