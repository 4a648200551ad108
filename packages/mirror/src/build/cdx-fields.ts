import { base32, cdxTimestampOfMs, decodeHtml, sha1Base32, surtOf, type CdxRecord, type WarcRecord } from '@ccpipe/core';
import { detectLanguages } from './detect-languages';

/** Where a record's gzip member sits in the mirror. */
export interface RecordLocation {
  /** Path relative to the mirror root, e.g. `crawl-data/NAME/segments/SEG/warc/FILE.warc.gz`. */
  filename: string;
  offset: number;
  length: number;
}

/** Why a record produced no CDX line; a small closed set, safe as a counter key. */
export type CdxSkipReason = 'not_capture' | 'no_http' | 'no_target_uri' | 'bad_url' | 'bad_date';

/** Options of {@link cdxRecordFor}. */
export interface CdxFieldOptions {
  /** Run language identification on HTML payloads (the costliest step). Default true. */
  languages?: boolean;
}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/**
 * The CDX line fields Common Crawl writes for one WARC record, or why it gets none. One line per
 * `response` record and per `revisit` record (mime `warc/revisit`, as pywb and CC's own index write
 * them); every other type (request, metadata, warcinfo, resource, conversion) is `not_capture`.
 *
 * - url: WARC-Target-URI as written; surt: `surtOf(url)` (non-http(s) or unparsable → `bad_url`)
 * - timestamp: the first 14 digits of WARC-Date
 * - mime: HTTP Content-Type, lower-cased, parameters dropped; `unk` when absent (CC's placeholder)
 * - mime-detected: WARC-Identified-Payload-Type when present (CC's records carry Tika's verdict there),
 *   else a small magic-byte sniff ({@link sniffMime})
 * - digest: WARC-Payload-Digest without `sha1:` (hex/base64 converted to base32); else base32 SHA-1 of the payload
 * - charset (HTML only): the encoding decodeHtml settles on, upper-cased (`UTF-8`, `WINDOWS-1252`)
 * - languages (HTML only): {@link detectLanguages}, omitted when not confident
 * - redirect: Location of a 3xx, resolved against url; truncated: WARC-Truncated
 *
 * Pure apart from CPU; never throws (a bad record yields a skip reason).
 */
export function cdxRecordFor(record: WarcRecord, at: RecordLocation, opts: CdxFieldOptions = {}): CdxRecord | CdxSkipReason {
  const type = record.type.toLowerCase();
  if (type !== 'response' && type !== 'revisit') return 'not_capture';
  const url = record.targetUri;
  if (url === undefined || url === '') return 'no_target_uri';
  let surt: string;
  try {
    surt = surtOf(url);
  } catch {
    return 'bad_url';
  }
  const timestamp = timestampOf(record.date);
  if (timestamp === undefined) return 'bad_date';
  const http = record.http;
  if (type === 'response' && http === undefined) return 'no_http';
  const rec: CdxRecord = {
    surt, timestamp, url, length: at.length, offset: at.offset, filename: at.filename, languages: [],
    status: http === undefined ? undefined : String(http.status),
    digest: digestOf(record),
    truncated: record.truncated,
  };
  if (type === 'revisit' || http === undefined) {
    rec.mime = 'warc/revisit';
    rec.mimeDetected = 'warc/revisit';
    return rec;
  }
  const contentType = http.headers.get('content-type');
  rec.mime = mimeOf(contentType) ?? 'unk';
  rec.mimeDetected = mimeOf(record.headers.get('warc-identified-payload-type')) ?? sniffMime(http.payload);
  if (http.status >= 300 && http.status < 400) rec.redirect = redirectOf(http.headers.get('location'), url);
  if (HTML_TYPES.has(rec.mime) || HTML_TYPES.has(rec.mimeDetected)) {
    const decoded = decodeHtml(http.payload, contentType === undefined ? {} : { contentType });
    rec.charset = decoded.charset.toUpperCase();
    if (opts.languages !== false) rec.languages = detectLanguages(decoded.text) ?? [];
  }
  return rec;
}

/** W3C-ISO8601 to the second as WARC writes it: fractions optional; `Z`, a `±hh:mm`/`±hhmm` offset or no zone (UTC). */
const WARC_DATE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * `2030-11-10T21:16:51Z` (or with fractions, or an offset, converted to UTC) → `20301110211651`; undefined for
 * anything that is not a real instant: fewer fields, or a field out of range such as ClueWeb09's `2008-10-294T…`
 * (taking its first 14 digits made the hour 40) or 30 February. The caller skips such a record as `bad_date`.
 */
export function timestampOf(warcDate: string | undefined): string | undefined {
  const m = WARC_DATE.exec((warcDate ?? '').trim());
  if (m === null) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const local = new Date(Date.UTC(y, mo - 1, d, h, mi, s));
  if (local.getUTCDate() !== d) return undefined; // 31 April, 29 February of a common year
  const zone = m[7];
  let offsetMin = 0;
  if (zone !== undefined && zone !== 'Z') {
    const [oh, om] = [Number(zone.slice(1, 3)), Number(zone.slice(-2))];
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const utc = new Date(local.getTime() - offsetMin * 60_000);
  const year = utc.getUTCFullYear();
  if (year < 1000 || year > 9999) return undefined;
  return cdxTimestampOfMs(utc.getTime());
}

/** A media type lower-cased without parameters; undefined for an absent or empty one. */
export function mimeOf(contentType: string | undefined): string | undefined {
  const m = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return m === '' ? undefined : m;
}

/** Resolves a Location value against the captured URL; undefined when absent or unresolvable. */
export function redirectOf(location: string | undefined, base: string): string | undefined {
  if (location === undefined || location.trim() === '') return undefined;
  try {
    return new URL(location.trim(), base).href;
  } catch {
    return undefined;
  }
}

function digestOf(record: WarcRecord): string | undefined {
  const declared = record.headers.get('warc-payload-digest')?.trim();
  if (declared !== undefined && /^sha1:/i.test(declared)) return normalizeSha1(declared.slice(5));
  if (record.http === undefined) return undefined;
  return sha1Base32(record.http.payload);
}

/**
 * A declared SHA-1 in CC's base32 form: producers also write it in hex (40 digits) or base64/base64url
 * (28 characters with `=`), which are converted; anything else is kept as written. Pure.
 */
export function normalizeSha1(v: string): string {
  if (/^[0-9a-f]{40}$/i.test(v)) return base32(Buffer.from(v, 'hex'));
  if (/^[A-Za-z0-9+/_-]{27}=$/.test(v)) return base32(Buffer.from(v, 'base64'));
  return v;
}


export { base32 };

/**
 * A deliberately small content sniffer for `mime-detected` when the WARC has no
 * WARC-Identified-Payload-Type: a few magic numbers, HTML/XML markers in the first 1 KiB, then
 * text/plain for printable text and application/octet-stream otherwise.
 */
export function sniffMime(payload: Uint8Array): string {
  const head = Buffer.from(payload.buffer, payload.byteOffset, Math.min(payload.length, 1024));
  if (head.length === 0) return 'application/octet-stream';
  const ascii = head.toString('latin1');
  if (ascii.startsWith('%PDF-')) return 'application/pdf';
  if (ascii.startsWith('\x89PNG')) return 'image/png';
  if (ascii.startsWith('\xff\xd8\xff')) return 'image/jpeg';
  if (ascii.startsWith('GIF8')) return 'image/gif';
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return 'image/webp';
  if (ascii.startsWith('\x1f\x8b')) return 'application/gzip';
  if (ascii.startsWith('PK\x03\x04')) return 'application/zip';
  const t = ascii.replace(/^\ufeff|^\xef\xbb\xbf/, '').trimStart().toLowerCase();
  if (/^<!doctype html|^<html|^<head|^<body/.test(t) || /<html[\s>]|<body[\s>]|<title[\s>]/.test(t)) return 'text/html';
  if (t.startsWith('<?xml')) {
    if (/<rss[\s>]/.test(t)) return 'application/rss+xml';
    if (/<feed[\s>]/.test(t)) return 'application/atom+xml';
    if (/<svg[\s>]/.test(t)) return 'image/svg+xml';
    return 'application/xml';
  }
  if (t.startsWith('<svg')) return 'image/svg+xml';
  if ((t.startsWith('{') || t.startsWith('[')) && /^[\[{]\s*["{\[\]}\d]/.test(t)) return 'application/json';
  let control = 0;
  for (const c of head) if (c < 0x09 || (c > 0x0d && c < 0x20)) control++;
  return control === 0 ? 'text/plain' : 'application/octet-stream';
}
