import { escapeOnce, toByteString, unescapeRepeatedly } from './percent';
import { isIpHost, normalizeHost } from './registered-domain';
import { UrlError } from './url-error';

/*
 * SURT keys exactly as Common Crawl's CDX index writes them: CC runs IA's python `surt` with its
 * defaults (DefaultIAURLCanonicalizer = Google + IA canonicalizers, no scheme, no trailing comma,
 * IPv4 reversed). Host comes from the WHATWG parse (already lower-case, punycode, IPv4-normalised);
 * path and query are re-split from the raw string the way python's urlsplit does, because the IA
 * rules (unescape repeatedly, then dot segments on the decoded path) differ from WHATWG's.
 * Rules and deliberate differences: docs/urls.md.
 */

const WWW_N = /^www\d*\./;

/** SURT host part: `www.Example.co.uk` → `uk,co,example` (www, www1, www22… stripped; IPv4 reversed too). */
export function surtHost(host: string): string {
  let h = host;
  if (h.charCodeAt(0) === 91) h = h.slice(1, -1); // python's urlsplit hostname has no brackets
  if (h.includes('..')) h = h.replace(/\.\./g, '.'); // python str.replace: non-overlapping, once
  if (h.charCodeAt(0) === 46 || h.charCodeAt(h.length - 1) === 46) h = h.replace(/^\.+|\.+$/g, '');
  if (h.charCodeAt(0) === 119 /* w */) {
    const m = WWW_N.exec(h);
    if (m !== null) h = h.slice(m[0].length);
  }
  let out = '';
  let end = h.length;
  for (let i = h.length - 1; i >= 0; i--) {
    if (h.charCodeAt(i) === 46) {
      out += out.length === 0 ? h.slice(i + 1, end) : `,${h.slice(i + 1, end)}`;
      end = i;
    }
  }
  return out.length === 0 ? h : `${out},${h.slice(0, end)}`;
}

/** python surt normalizePath: drops empty segments (`//`), `.`, resolves `..`; keeps a trailing `/`. */
function normalizeSurtPath(path: string): string {
  if (path.length === 0) return '/';
  const parts = path.split('/');
  const kept: string[] = [];
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i] as string;
    if (p === '.') continue;
    if (p === '..') {
      if (kept.length > 0) kept.pop();
      else kept.push(p);
    } else kept.push(p);
  }
  let out = '/';
  const n = kept.length;
  for (let i = 0; i < n - 1; i++) {
    const p = kept[i] as string;
    if (p.length > 0) out += p + '/';
  }
  if (n > 0) out += kept[n - 1] as string;
  return out;
}

const PATH_SESSION_IDS = [
  /^(.*\/)(\((?:[a-z]\([0-9a-z]{24}\))+\)\/)([^?]+\.aspx.*)$/i,
  /^(.*\/)(\([0-9a-z]{24}\)\/)([^?]+\.aspx.*)$/i,
];
const QUERY_SESSION_IDS = [
  /^(.*)(?:jsessionid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:phpsessid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:sid=[0-9a-zA-Z]{32})(?:&(.*))?$/i,
  /^(.*)(?:ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24})(?:&(.*))?$/i,
  /^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$/i,
];

/** IA `stripPathSessionID` (ASP.NET cookieless session segments). */
export function stripPathSessionId(path: string): string {
  if (!path.includes('(')) return path;
  for (const re of PATH_SESSION_IDS) {
    const m = re.exec(path);
    if (m !== null) path = (m[1] as string) + (m[3] as string);
  }
  return path;
}

/** IA `stripQuerySessionID` (jsessionid, phpsessid, sid, ASPSESSIONID, cfid+cftoken). */
export function stripQuerySessionId(query: string): string {
  if (!/sessid|sid=|cfid/i.test(query)) return query;
  for (const re of QUERY_SESSION_IDS) {
    const m = re.exec(query);
    if (m !== null) query = (m[1] as string) + (m[2] ?? '');
  }
  return query;
}

/** python's order of (key,) / (key, value) tuples split at the first '=', without allocating. */
function compareArgs(a: string, b: string): number {
  const la = a.length;
  const lb = b.length;
  let i = 0;
  for (;;) {
    const ca = i < la ? a.charCodeAt(i) : -1;
    const cb = i < lb ? b.charCodeAt(i) : -1;
    const ea = ca === -1 || ca === 61;
    const eb = cb === -1 || cb === 61;
    if (ea || eb) {
      if (!(ea && eb)) return ea ? -1 : 1;
      break;
    }
    if (ca !== cb) return ca < cb ? -1 : 1;
    i++;
  }
  const ha = i < la; // a has '=value'
  const hb = i < lb;
  if (!ha || !hb) return ha === hb ? 0 : ha ? 1 : -1; // (k,) < (k, v)
  for (let j = i + 1; ; j++) {
    const ca = j < la ? a.charCodeAt(j) : -1;
    const cb = j < lb ? b.charCodeAt(j) : -1;
    if (ca !== cb) return ca < cb ? -1 : 1;
    if (ca === -1) return 0;
  }
}

/** IA `alphaReorderQuery`: split on `&`, sort by (key, value) bytewise, keep empty args. */
export function alphaReorderQuery(q: string): string {
  if (q.length <= 1 || !q.includes('&')) return q;
  const args = q.split('&');
  let sorted = true;
  for (let i = 1; i < args.length && sorted; i++) sorted = compareArgs(args[i - 1] as string, args[i] as string) <= 0;
  return sorted ? q : args.sort(compareArgs).join('&');
}

// Fast paths: most captured paths and queries hold nothing to unescape, escape or normalise, and
// then the IA rules reduce to lower-casing. Anything else takes the full python-faithful route.
const PATH_NEEDS_WORK = /[%\x00-\x20#\x7f-\uffff]|\/\.|\/\/|\(/;
const QUERY_NEEDS_WORK = /[%\x00-\x20#\x7f-\uffff]/;

/** The SURT `/path?query` tail from raw (still escaped) path and query. `query` null = no `?`. */
export function surtPathQuery(rawPath: string, rawQuery: string | null): string {
  let path: string;
  if (rawPath.length > 0 && rawPath.charCodeAt(0) === 47 && !PATH_NEEDS_WORK.test(rawPath)) path = rawPath.toLowerCase();
  else path = stripPathSessionId(escapeOnce(normalizeSurtPath(unescapeRepeatedly(toByteString(rawPath))), true));
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  if (rawQuery === null || rawQuery.length === 0) return path;
  const lowered = QUERY_NEEDS_WORK.test(rawQuery) ? escapeOnce(unescapeRepeatedly(toByteString(rawQuery)), true) : rawQuery.toLowerCase();
  const q = alphaReorderQuery(stripQuerySessionId(lowered));
  return q.length === 0 ? path : `${path}?${q}`;
}

/**
 * Path and query of `raw` as python's urlsplit sees them (after surt's strip and tab/CR/LF removal).
 * null when the authority holds a backslash (WHATWG and python disagree there: use WHATWG's parts).
 */
export function splitRawPathQuery(raw: string): { path: string; query: string | null } | null {
  let s = raw.trim();
  if (/[\t\n\r]/.test(s)) s = s.replace(/[\t\n\r]/g, '');
  const colon = s.indexOf(':');
  if (colon < 0) return null;
  let rest = s.slice(colon + 1);
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  let after: string;
  if (rest.startsWith('//')) {
    let end = 2;
    while (end < rest.length) {
      const c = rest.charCodeAt(end);
      if (c === 47 || c === 63) break; // '/' '?'
      if (c === 92) return null; // '\'
      end++;
    }
    after = rest.slice(end);
    if (end === 2) {
      // "http:////www.vikings.com": python takes the first non-empty segment as the host
      const q0 = after.indexOf('?');
      const p = q0 < 0 ? after : after.slice(0, q0);
      const stripped = p.replace(/^\/+/, '');
      const slash = stripped.indexOf('/');
      after = (slash < 0 ? '/' : stripped.slice(slash)) + (q0 < 0 ? '' : after.slice(q0));
    }
  } else return null;
  const q = after.indexOf('?');
  if (q < 0) return { path: after, query: null };
  return { path: after.slice(0, q), query: after.slice(q + 1) };
}

/**
 * SURT of a parsed URL. `host` is the WHATWG hostname, `port` null for the scheme default;
 * `pathname`/`search` are the WHATWG parts, used only when the raw string cannot be re-split.
 */
export function buildSurt(raw: string, host: string, port: number | null, pathname: string, search: string): string {
  const split = splitRawPathQuery(raw);
  const tail = split !== null ? surtPathQuery(split.path, split.query) : surtPathQuery(pathname, search.length > 1 ? search.slice(1) : null);
  return port === null ? `${surtHost(host)})${tail}` : `${surtHost(host)}:${port})${tail}`;
}

/**
 * SURT key of an http(s) URL as it appears as the first field of Common Crawl's CDX lines, e.g.
 * `https://www.Example.com/b/?y=2&X=1#f` → `com,example)/b?x=1&y=2`. Pure, idempotent on its output's URL.
 * @throws UrlError CCP_ERR_URL_INVALID (does not parse) or CCP_ERR_URL_SCHEME (not http/https).
 */
export function surtOf(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch (err) {
    throw new UrlError('CCP_ERR_URL_INVALID', 'URL does not parse', url, err);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UrlError('CCP_ERR_URL_SCHEME', 'only http and https URLs are indexed', url);
  return buildSurt(url, u.hostname, u.port === '' ? null : Number(u.port), u.pathname, u.search);
}

/**
 * SURT prefix of every key of one host, e.g. `example.com` or `www.example.com` → `com,example)`.
 * Keys of that host on a non-default port (`com,example:8080)`) and of subdomains are NOT covered:
 * use `surtRangesForDomain` for those.
 * @throws UrlError CCP_ERR_URL_INVALID when the host is not valid.
 */
export function surtPrefixForDomain(domainOrHost: string): string {
  return `${surtHostKey(domainOrHost)})`;
}

function surtHostKey(domainOrHost: string): string {
  const host = normalizeHost(domainOrHost);
  if (host.length === 0) throw new UrlError('CCP_ERR_URL_INVALID', 'host is not valid', domainOrHost);
  return surtHost(host);
}

/** A half-open range of SURT keys: `start <= key < end` (JS string order = CDX byte order for ASCII keys). */
export interface SurtRange {
  start: string;
  end: string;
}

/**
 * The SURT key ranges holding every capture of a host and, when `includeSubdomains` (default), of
 * all its subdomains. `com,example` alone is not a prefix to use: it also matches `com,example-shop)`
 * and `com,examples)`. Keys of the host itself start `com,example)`, on another port
 * `com,example:`, of subdomains `com,example,`: three ranges, in key order. Not for IP hosts'
 * subdomains (none exist). Pure.
 * @throws UrlError CCP_ERR_URL_INVALID when the host is not valid.
 */
export function surtRangesForDomain(domainOrHost: string, includeSubdomains = true): SurtRange[] {
  const k = surtHostKey(domainOrHost);
  const ranges: SurtRange[] = [{ start: `${k})`, end: `${k}*` }]; // '*' follows ')'
  if (includeSubdomains && !isIpHost(normalizeHost(domainOrHost))) ranges.push({ start: `${k},`, end: `${k}-` });
  ranges.push({ start: `${k}:`, end: `${k};` });
  return ranges;
}

/** True when a SURT key lies in one of `ranges` (see `surtRangesForDomain`). */
export function surtInRanges(key: string, ranges: readonly SurtRange[]): boolean {
  for (const r of ranges) if (key >= r.start && key < r.end) return true;
  return false;
}
