import type { DomDocument, DomElement } from './dom-types';

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

/** An element's attribute list as both DOMs expose it (linkedom keeps the source's letter case). */
interface WithAttributes {
  readonly attributes?: ArrayLike<{ readonly name: string; readonly value: string }>;
}

/**
 * The `href` of `el` in any letter case. jsdom (an HTML-standard parser) lower-cases attribute names; linkedom keeps
 * them as written, so `<A HREF="…">` has no `href` there: a page of 113 such links recorded none (#21). Only anchors
 * without a lower-case `href` pay for the scan of their attributes.
 */
function hrefOf(el: DomElement): string | null {
  const href = el.getAttribute('href');
  if (href !== null) return href;
  const attrs = (el as DomElement & WithAttributes).attributes;
  if (!attrs) return null;
  for (let i = 0; i < attrs.length; i++) {
    const a = attrs[i];
    if (a && a.name.length === 4 && a.name.toLowerCase() === 'href') return a.value;
  }
  return null;
}

/**
 * The page's `<a href>` and `<area href>` targets: resolved against the first `<base href>` (itself
 * resolved against `pageUrl`) or `pageUrl`, as WHATWG resolves them (an empty href is the base URL), attribute
 * names in any letter case, http/https only, fragment dropped, deduplicated in document order, at most `max` of
 * them. Same-page anchors (`href="#…"`) are skipped. Not canonicalized beyond WHATWG URL serialization (the merge
 * canonicalizes and drops self links). Never throws on bad hrefs or a bad `pageUrl`.
 */
export function collectOutlinks(document: DomDocument, pageUrl: string, max: number): Outlinks {
  let base = parseUrl(pageUrl);
  const bases = document.querySelectorAll('base');
  for (let i = 0; i < bases.length; i++) {
    const el = bases[i];
    const baseHref = el ? hrefOf(el)?.trim() : undefined;
    if (baseHref === undefined || baseHref === null) continue;
    // the first <base> with an href sets the base, even an empty or unparsable one (which leaves the page URL)
    if (baseHref) base = parseUrl(baseHref, base) ?? base;
    break;
  }

  const seen = new Set<string>();
  const anchors = document.querySelectorAll('a, area');
  for (let i = 0; i < anchors.length; i++) {
    const el = anchors[i];
    const raw = el ? hrefOf(el) : null;
    if (raw === null) continue;
    const href = raw.trim();
    if (href.startsWith('#') || href.length > MAX_OUTLINK_CHARS) continue;
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
