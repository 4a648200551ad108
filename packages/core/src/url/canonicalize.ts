import { normalizePercent } from './percent';
import { icannDomainOfHost, registeredDomainsOfHost } from './registered-domain';
import { buildSurt } from './surt';
import { UrlError } from './url-error';

/** An http(s) URL in the one form the index stores, plus the parts every stage needs. */
export interface CanonicalUrl {
  /** The input, untouched. */
  raw: string;
  /** Canonical serialisation: `scheme://host[:port]path[?query]` (see docs/urls.md). */
  url: string;
  scheme: 'http' | 'https';
  /** Lower-case ASCII (punycode) host without trailing dot; IPv4 dotted-quad; IPv6 in brackets. */
  host: string;
  /** null for the scheme's default port. */
  port: number | null;
  /** Starts with `/`; dot segments resolved, `//` runs collapsed, percent-escapes normalised. */
  path: string;
  /** Without the `?`; parameters stably sorted by key; '' when there is none. */
  query: string;
  /** ICANN-section registered domain (eTLD+1); the IP for IP hosts; null when the host is a public suffix. */
  domain: string | null;
  /** Registered domain with the PSL private section too (`x.blogspot.com`, `x.github.io`). */
  privateDomain: string | null;
  /** Common Crawl CDX key (`com,example)/path?a=1`). */
  surt: string;
}

// A `.` or `..` segment: WHATWG resolved every one, unless it followed an empty segment (`//..`).
const DOT_SEGMENT = /\/\.\.?(?:\/|$)/;

function canonicalPath(pathname: string): string {
  let p = pathname;
  if (p.includes('//')) {
    p = p.replace(/\/{2,}/g, '/');
    // Collapsing `//..` leaves a `..` that a second parse would resolve (`//.p://../` → `/.p:/../` → `/`): resolve it
    // now, so that canonicalizing a canonical URL gives it back (found by the fuzz suite, #24).
    if (DOT_SEGMENT.test(p)) p = new URL(p, 'http://h').pathname;
  }
  return normalizePercent(p);
}

function keyOf(param: string): string {
  const eq = param.indexOf('=');
  return eq < 0 ? param : param.slice(0, eq);
}

/** Query without `?`: escapes normalised, empty parameters dropped, stable sort on key only. */
export function canonicalQuery(search: string): string {
  if (search.length <= 1) return '';
  const q = normalizePercent(search.charCodeAt(0) === 63 ? search.slice(1) : search);
  if (!q.includes('&')) return q;
  const params = q.split('&').filter((p) => p.length > 0);
  let sorted = true;
  for (let i = 1; i < params.length && sorted; i++) sorted = keyOf(params[i - 1] as string) <= keyOf(params[i] as string);
  if (!sorted) {
    // Array.prototype.sort is stable: duplicate keys keep their relative order
    const keyed = params.map((p) => ({ k: keyOf(p), p }));
    keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
    return keyed.map((x) => x.p).join('&');
  }
  return params.length === 0 ? '' : params.join('&');
}

/** The canonical scheme, host, port, path, query and URL of a parsed http(s) URL (see {@link canonicalizeUrl}). */
function canonicalParts(u: URL, proto: 'http:' | 'https:'): Pick<CanonicalUrl, 'scheme' | 'host' | 'port' | 'path' | 'query' | 'url'> {
  const scheme = proto === 'http:' ? 'http' : 'https';
  let host = u.hostname;
  // 'example.com.' and 'example.com' are one site; a host of only dots ('http://./') stays as is
  if (host.length > 1 && host.endsWith('.') && host.charCodeAt(host.length - 2) !== 46) host = host.slice(0, -1);
  const port = u.port === '' ? null : Number(u.port);
  const path = canonicalPath(u.pathname);
  const query = canonicalQuery(u.search);
  const authority = port === null ? host : `${host}:${port}`;
  const url = query.length === 0 ? `${scheme}://${authority}${path}` : `${scheme}://${authority}${path}?${query}`;
  return { scheme, host, port, path, query, url };
}

/**
 * Canonicalises an absolute http(s) URL: WHATWG parse (lower-case scheme and host, IDNA → punycode,
 * IPv4 forms normalised, default port dropped, dot segments resolved), then: fragment and userinfo
 * dropped, trailing dot of the host dropped, `//` runs in the path collapsed, percent-escapes
 * upper-cased and unreserved ones decoded, empty query parameters dropped and the rest stably
 * sorted by key. Idempotent: `canonicalizeUrl(c.url).url === c.url`. Pure; parses the input once.
 * @throws UrlError CCP_ERR_URL_INVALID when WHATWG rejects the input (relative URLs included),
 *   CCP_ERR_URL_SCHEME when the scheme is not http/https.
 */
export function canonicalizeUrl(raw: string, base?: string): CanonicalUrl {
  let u: URL;
  try {
    u = base === undefined ? new URL(raw) : new URL(raw, base);
  } catch (err) {
    throw new UrlError('CCP_ERR_URL_INVALID', 'URL does not parse', raw, err);
  }
  const proto = u.protocol;
  if (proto !== 'http:' && proto !== 'https:') throw new UrlError('CCP_ERR_URL_SCHEME', 'only http and https URLs are indexed', raw);
  const { scheme, host, port, path, query, url } = canonicalParts(u, proto);
  const { domain, privateDomain } = registeredDomainsOfHost(host);
  return { raw, url, scheme, host, port, path, query, domain, privateDomain, surt: buildSurt(base === undefined ? raw : u.href, host, port, u.pathname, u.search) };
}

/** A link as the link graph keeps it: its canonical URL and the registered domain it counts under. */
export interface LinkTarget {
  /** `canonicalizeUrl(raw).url`. */
  url: string;
  /** `canonicalizeUrl(raw).domain`, or its host when that is null (a public suffix). */
  domain: string;
}

/**
 * What a link target needs of `canonicalizeUrl(raw)`, the same answer, at less cost: the canonical URL and the
 * ICANN registered domain (the host when there is none), without the SURT key, the private-section domain and the
 * other parts, and `null` instead of an error object for a link that does not canonicalize (not http(s), not a URL).
 * Outlinks are most of the URLs a worker canonicalizes (≈ 50 a page), and none of them needs a SURT. Pure; never
 * throws; idempotent as canonicalizeUrl is.
 */
export function canonicalLinkTarget(raw: string): LinkTarget | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return null;
  }
  const proto = u.protocol;
  if (proto !== 'http:' && proto !== 'https:') return null;
  const { host, url } = canonicalParts(u, proto);
  return { url, domain: icannDomainOfHost(host) ?? host };
}
