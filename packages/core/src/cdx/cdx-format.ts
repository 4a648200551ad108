import { CDX_FIELD_ORDER, type CdxRecord } from './cdx-line';

const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;
const NON_ASCII = /[\u0080-\uffff]/g;

function quote(v: string, ensureAscii: boolean): string {
  let s = NEEDS_ESCAPE.test(v) ? JSON.stringify(v) : `"${v}"`;
  // Like Python's json.dumps(ensure_ascii=True): every UTF-16 unit above 0x7F as a lower-case \uXXXX.
  if (ensureAscii) s = s.replace(NON_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return s;
}

function fieldValue(rec: CdxRecord, key: string): string | undefined {
  switch (key) {
    case 'url': return rec.url;
    case 'mime': return rec.mime;
    case 'mime-detected': return rec.mimeDetected;
    case 'status': return rec.status;
    case 'digest': return rec.digest;
    case 'length': return String(rec.length);
    case 'offset': return String(rec.offset);
    case 'filename': return rec.filename;
    case 'redirect': return rec.redirect;
    case 'charset': return rec.charset;
    case 'languages': return rec.languages.length === 0 ? undefined : rec.languages.join(',');
    case 'encoding': return rec.encoding;
    case 'truncated': return rec.truncated;
    default: return rec.extra?.[key];
  }
}

/** Options of {@link formatCdxLine}. */
export interface FormatCdxOptions {
  /** Escape non-ASCII as `\uXXXX` like Python's json.dumps default. Default false: UTF-8 as is. */
  ensureAscii?: boolean;
}

/**
 * Writes a record in Common Crawl's exact layout: `SURT TIMESTAMP {"url": "…", "mime": "…", …}` with
 * `", "` and `": "` separators, keys in {@link CDX_FIELD_ORDER} (or the record's `keyOrder`), then any
 * `extra` keys; undefined fields and empty `languages` are left out. No trailing newline.
 * `parseCdxLine` then `formatCdxLine` gives back every real corpus line byte for byte. Pure.
 */
export function formatCdxLine(rec: CdxRecord, options: FormatCdxOptions = {}): string {
  const ascii = options.ensureAscii === true;
  const keys: readonly string[] = rec.keyOrder ?? (rec.extra ? [...CDX_FIELD_ORDER, ...Object.keys(rec.extra)] : CDX_FIELD_ORDER);
  let out = '';
  for (const key of keys) {
    const v = fieldValue(rec, key);
    if (v === undefined) continue;
    out += `${out.length === 0 ? '' : ', '}${quote(key, ascii)}: ${quote(v, ascii)}`;
  }
  return `${rec.surt} ${rec.timestamp} {${out}}`;
}

/**
 * Epoch ms as a CDX timestamp, `YYYYMMDDhhmmss` in UTC (whole seconds; years 0–9999 zero-padded to four digits).
 * The form of the CDX line's second field, and of a part row's `timestamp`.
 */
export function cdxTimestampOfMs(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => (n < 10 ? `0${n}` : String(n));
  return `${String(d.getUTCFullYear()).padStart(4, '0')}${two(d.getUTCMonth() + 1)}${two(d.getUTCDate())}${two(d.getUTCHours())}${two(d.getUTCMinutes())}${two(d.getUTCSeconds())}`;
}
