import { parseHeadBlock } from './head-block';
import type { HeaderList } from './header-list';
import { parseHttpResponse, type HttpResponse } from './http-response';
import { WarcError } from './warc-error';

/** One parsed WARC record. `block` and `http.payload` may be views into the caller's or an inflated buffer. */
export interface WarcRecord {
  /** The version line, e.g. `WARC/1.0`, `WARC/1.1`, `WARC/0.18`, as written. */
  version: string;
  /** Every WARC header field in order, original case, duplicates kept; look-ups are case-insensitive. */
  headers: HeaderList;
  /** `WARC-Type` as written (`response`, `request`, `warcinfo`, `metadata`, `revisit`, `resource`, ...). */
  type: string;
  /** `WARC-Target-URI` with surrounding whitespace and the `<...>` some producers add removed. */
  targetUri: string | undefined;
  /** `WARC-Date` as written (not validated: some producers write invalid dates). */
  date: string | undefined;
  /** `WARC-Record-ID` as written (normally `<urn:uuid:...>`). */
  recordId: string | undefined;
  /** `Content-Type` of the block. */
  contentType: string | undefined;
  /** `Content-Length`: the block size in bytes. */
  contentLength: number;
  /** `WARC-Truncated` reason when the producer cut the block (`length`, `time`, ...). */
  truncated: string | undefined;
  /** The record block: exactly `contentLength` bytes. */
  block: Uint8Array;
  /** The HTTP response, for `response`/`revisit` records whose block is `application/http`. */
  http: HttpResponse | undefined;
  /** Why `http` is missing though the record should carry one; only set with `lenientHttp`. */
  httpError: WarcError | undefined;
}

/** Limits and behaviour shared by the readers. */
export interface ReadWarcOptions {
  /** Decoded payloads longer than this are clipped (`http.payloadClipped`). Default 32 MiB. */
  maxPayloadBytes?: number;
  /** A record (one gzip member) inflating past this throws CCP_ERR_WARC_TOO_LARGE. Default 64 MiB. */
  maxRecordBytes?: number;
  /** Cap for the WARC head and for the HTTP head, each. Default 256 KiB. */
  maxHeaderBytes?: number;
  /** When true, an unreadable HTTP head leaves `http` undefined and sets `httpError` instead of throwing. */
  lenientHttp?: boolean;
}

/** Default of {@link ReadWarcOptions.maxPayloadBytes} (32 MiB; Common Crawl itself truncates at 1 MiB). */
export const DEFAULT_MAX_PAYLOAD_BYTES = 32 * 1024 * 1024;
/** Default of {@link ReadWarcOptions.maxRecordBytes} (64 MiB inflated per record). */
export const DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024;
/** Default of {@link ReadWarcOptions.maxHeaderBytes} (256 KiB for the WARC head, and again for the HTTP head). */
export const DEFAULT_MAX_HEADER_BYTES = 256 * 1024;

const VERSION_LINE = /^WARC\/\d{1,2}\.\d{1,2}$/i;

/** Index of the first byte at or after `pos` that is not CR/LF/space/tab/NUL. */
export function skipBlank(bytes: Uint8Array, pos: number): number {
  let p = pos;
  while (p < bytes.length) {
    const c = bytes[p];
    if (c !== 0x0d && c !== 0x0a && c !== 0x20 && c !== 0x09 && c !== 0x00) break;
    p++;
  }
  return p;
}

/** A record found in an uncompressed buffer, with where it ends. */
export interface ParsedRecord {
  record: WarcRecord;
  /** Where the record's version line starts. */
  start: number;
  /** Just past the record's block and its trailing line breaks (at most 4 bytes of CR/LF). */
  end: number;
}

function wantsHttp(type: string, contentType: string | undefined, block: Uint8Array): boolean {
  const t = type.toLowerCase();
  if (t !== 'response' && t !== 'revisit') return false;
  if (contentType !== undefined) return /^application\/http\b/i.test(contentType);
  // Old producers (WARC/0.x) omit the block Content-Type; sniff for a status line.
  return t === 'response' && block.length >= 5 && Buffer.from(block.buffer, block.byteOffset, 5).toString('latin1').toUpperCase() === 'HTTP/';
}

/**
 * Parses the WARC record whose version line starts at the first non-blank byte at or after `pos`.
 * Returns undefined when only blank bytes remain. Pure.
 * Throws WarcError CCP_ERR_WARC_HEADER (no version line, bad/missing Content-Length or WARC-Type, head
 * over the cap), CCP_ERR_WARC_TRUNCATED (head or block incomplete), CCP_ERR_HTTP_HEAD (unless `lenientHttp`).
 */
export function parseWarcRecordAt(bytes: Uint8Array, pos: number, opts: ReadWarcOptions = {}): ParsedRecord | undefined {
  const start = skipBlank(bytes, pos);
  if (start >= bytes.length) return undefined;
  const maxHeader = opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
  const head = parseHeadBlock(bytes, start, bytes.length, maxHeader, 'utf8');
  if (head === 'incomplete') {
    // Junk that is not a WARC head should say so, not pose as truncation.
    const firstEol = bytes.indexOf(0x0a, start);
    const probe = Buffer.from(bytes.buffer, bytes.byteOffset + start, Math.min(12, bytes.length - start)).toString('latin1');
    if (!/^WARC\//i.test(probe) || (firstEol < 0 && bytes.length - start > 32)) {
      throw new WarcError('CCP_ERR_WARC_HEADER', 'no WARC version line', { detail: { offset: start } });
    }
    throw new WarcError('CCP_ERR_WARC_TRUNCATED', 'WARC head ends early', { detail: { offset: start } });
  }
  if (typeof head === 'string') {
    throw new WarcError('CCP_ERR_WARC_HEADER', `WARC head unreadable (${head})`, { detail: { offset: start, maxHeader } });
  }
  if (!VERSION_LINE.test(head.firstLine)) {
    throw new WarcError('CCP_ERR_WARC_HEADER', 'no WARC version line', { detail: { offset: start, firstLine: head.firstLine.slice(0, 80) } });
  }
  const h = head.headers;
  const cl = h.get('content-length');
  if (cl === undefined || !/^\d{1,15}$/.test(cl)) {
    throw new WarcError('CCP_ERR_WARC_HEADER', 'missing or invalid Content-Length', { detail: { offset: start, contentLength: cl } });
  }
  const type = h.get('warc-type');
  if (!type) throw new WarcError('CCP_ERR_WARC_HEADER', 'missing WARC-Type', { detail: { offset: start } });
  const contentLength = Number(cl);
  const blockEnd = head.end + contentLength;
  if (blockEnd > bytes.length) {
    throw new WarcError('CCP_ERR_WARC_TRUNCATED', 'record block shorter than its Content-Length', {
      detail: { offset: start, contentLength, available: bytes.length - head.end },
    });
  }
  const block = bytes.subarray(head.end, blockEnd);
  const contentType = h.get('content-type');
  let http: HttpResponse | undefined;
  let httpError: WarcError | undefined;
  if (wantsHttp(type, contentType, block)) {
    try {
      http = parseHttpResponse(block, maxHeader, opts.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES);
    } catch (err) {
      if (!opts.lenientHttp || !(err instanceof WarcError)) throw err;
      httpError = err;
    }
  }
  let end = blockEnd;
  while (end < bytes.length && end - blockEnd < 4 && (bytes[end] === 0x0d || bytes[end] === 0x0a)) end++;
  const rawUri = h.get('warc-target-uri');
  const record: WarcRecord = {
    version: head.firstLine,
    headers: h,
    type,
    targetUri: rawUri === undefined ? undefined : stripAngles(rawUri),
    date: h.get('warc-date'),
    recordId: h.get('warc-record-id'),
    contentType,
    contentLength,
    truncated: h.get('warc-truncated'),
    block,
    http,
    httpError,
  };
  return { record, start, end };
}

function stripAngles(uri: string): string {
  const u = uri.trim();
  return u.length >= 2 && u.startsWith('<') && u.endsWith('>') ? u.slice(1, -1).trim() : u;
}
