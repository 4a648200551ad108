/**
 * Percent-encoding helpers. Two families:
 * - `normalizePercent` for our canonical URL (RFC 3986 §6.2.2: upper-case hex, decode unreserved);
 * - `unescapeRepeatedly` / `escapeOnce` for SURT, ports of IA's python `surt` (GoogleURLCanonicalizer),
 *   which Common Crawl's CDX keys come from. Those work on "byte strings": JS strings whose char codes
 *   are all < 256 (Latin-1 view of the UTF-8 bytes).
 */

const HEX_UPPER = '0123456789ABCDEF';
const HEX_LOWER = '0123456789abcdef';

function hexVal(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~". */
function isUnreserved(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 46 || c === 95 || c === 126;
}

/**
 * Upper-cases the hex digits of every `%XX` escape and decodes escapes of unreserved characters
 * (`%41` → `A`, `%7e` → `~`). A `%` not followed by two hex digits is left as is. Idempotent.
 */
export function normalizePercent(s: string): string {
  let i = s.indexOf('%');
  if (i < 0) return s;
  let out = '';
  let last = 0;
  for (; i >= 0; i = s.indexOf('%', i + 1)) {
    if (i + 2 >= s.length) break;
    const h = hexVal(s.charCodeAt(i + 1));
    const l = hexVal(s.charCodeAt(i + 2));
    if (h < 0 || l < 0) continue;
    const code = h * 16 + l;
    out += s.slice(last, i);
    out += isUnreserved(code) ? String.fromCharCode(code) : '%' + HEX_UPPER[h] + HEX_UPPER[l];
    last = i + 3;
    i += 2;
  }
  return last === 0 ? s : out + s.slice(last);
}

/** The UTF-8 bytes of `s` as a byte string (identity for ASCII input). */
export function toByteString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 127) return Buffer.from(s, 'utf8').toString('latin1');
  }
  return s;
}

function unescapeOnce(s: string): string {
  let i = s.indexOf('%');
  if (i < 0) return s;
  let out = '';
  let last = 0;
  for (; i >= 0 && i + 2 < s.length; i = s.indexOf('%', i + 1)) {
    const h = hexVal(s.charCodeAt(i + 1));
    const l = hexVal(s.charCodeAt(i + 2));
    if (h < 0 || l < 0) continue;
    out += s.slice(last, i) + String.fromCharCode(h * 16 + l);
    last = i + 3;
    i += 2;
  }
  return last === 0 ? s : out + s.slice(last);
}

/** python surt `unescapeRepeatedly` on a byte string: decode `%XX` until nothing changes (`%2525` → `%`). */
export function unescapeRepeatedly(s: string): string {
  for (;;) {
    const un = unescapeOnce(s);
    if (un === s) return s;
    s = un;
  }
}

// python surt escapeOnce: quote(input, safe='!"$&\'()*+,-./:;<=>?@[\\]^_`{|}~') — so only control
// characters, space, '#', '%', DEL and bytes >= 0x80 get escaped.
function needsEscape(c: number): boolean {
  return c <= 0x20 || c === 0x23 || c === 0x25 || c >= 0x7f;
}

/**
 * python surt `escapeOnce` on a byte string, followed by ASCII lower-casing when `lower` (the IA
 * canonicalizer lower-cases path and query after escaping, so CDX keys carry `%c3%a9`).
 */
export function escapeOnce(s: string, lower: boolean): string {
  const hex = lower ? HEX_LOWER : HEX_UPPER;
  let out = '';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (needsEscape(c)) {
      out += s.slice(last, i) + '%' + hex[c >> 4] + hex[c & 15];
      last = i + 1;
    }
  }
  const r = last === 0 ? s : out + s.slice(last);
  return lower ? r.toLowerCase() : r;
}
