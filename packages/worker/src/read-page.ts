import { CcpError, decodeHtml, readWarcRecord, type BatchRecord } from '@ccpipe/core';

/** Mime types whose payload goes through HTML extraction. */
export const HTML_MIMES: ReadonlySet<string> = new Set(['text/html', 'application/xhtml+xml']);

/** The CDX fields of a record that decide how its bytes are read. */
export type PageRecord = Pick<BatchRecord, 'url' | 'status' | 'mime'>;

/** What a record's bytes hold, as its row needs it. Plain data: it crosses from the page thread. */
export interface PageFacts {
  /** The CDX status when it is three digits, else the HTTP status line's. */
  status: number;
  /** The HTTP Content-Type header, or null. */
  contentType: string | null;
  /** The CDX mime, else the Content-Type's type, lower-cased. */
  mime: string;
  /** Bytes of the HTTP payload (after undoing a real Content-/Transfer-Encoding). */
  payloadLength: number;
  /**
   * The payload decoded from its charset: a page below status 400 with a text mime, when decoding was asked for
   * (an error page's body is the server's text, not the page's); null otherwise.
   */
  decoded: { text: string; charset: string } | null;
  /** True when `decoded` is an HTML page, which is extracted; other text is kept as it is. */
  html: boolean;
}

/**
 * Parses one WARC record's bytes (a gzip member as range-read, or the record itself) into what its row needs, and
 * decodes the payload's charset when `decode` is true and the page is text below status 400. The WARC-Target-URI
 * must be the CDX url. Pure; the same on the worker's main thread and on its page threads.
 * @throws WarcError (the record's own codes), CcpError `CCP_ERR_WARC_NOT_RESPONSE`, `CCP_ERR_WARC_URI_MISMATCH`
 */
export function readPage(bytes: Uint8Array, rec: PageRecord, decode: boolean): PageFacts {
  const warc = readWarcRecord(bytes);
  if (warc.type !== 'response' || !warc.http) throw new CcpError('CCP_ERR_WARC_NOT_RESPONSE', 'record is not an HTTP response');
  if (warc.targetUri !== undefined && warc.targetUri !== rec.url) throw new CcpError('CCP_ERR_WARC_URI_MISMATCH', 'WARC-Target-URI differs from the CDX url');
  const http = warc.http;
  const status = rec.status !== undefined && /^\d{3}$/.test(rec.status) ? Number(rec.status) : http.status;
  const contentType = http.headers.get('content-type') ?? null;
  const mime = (rec.mime ?? contentType?.split(';')[0] ?? '').trim().toLowerCase();
  const html = HTML_MIMES.has(mime);
  let decoded: PageFacts['decoded'] = null;
  if (decode && status < 400 && (html || mime.startsWith('text/'))) {
    const d = decodeHtml(http.payload, contentType === null ? {} : { contentType });
    decoded = { text: d.text, charset: d.charset };
  }
  return { status, contentType, mime, payloadLength: http.payload.length, decoded, html };
}
