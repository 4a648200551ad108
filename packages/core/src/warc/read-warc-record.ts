import { gunzipMembers, isGzipAt } from './gzip-member';
import { DEFAULT_MAX_RECORD_BYTES, parseWarcRecordAt, type ReadWarcOptions, type WarcRecord } from './warc-record';
import { WarcError } from './warc-error';

/**
 * Reads the one WARC record in `bytes`: a gzip member as fetched by a CDX offset/length range read
 * (several concatenated members are joined, as gunzip does), or an uncompressed record; the gzip magic
 * decides. Parses the WARC head and, for `response`/`revisit` records with an `application/http`
 * block, the HTTP status line, head and payload. Payloads stored already decoded (Common Crawl:
 * `X-Crawler-*` headers) are left alone; real `Transfer-Encoding`/`Content-Encoding` are undone
 * tolerantly (see `http.decoding`). Bytes after the first record are ignored.
 *
 * Pure and idempotent; the result may hold views into `bytes` (uncompressed input).
 * Throws WarcError: CCP_ERR_WARC_GZIP, CCP_ERR_WARC_TRUNCATED, CCP_ERR_WARC_TOO_LARGE,
 * CCP_ERR_WARC_HEADER, and CCP_ERR_HTTP_HEAD unless `opts.lenientHttp`.
 */
export function readWarcRecord(bytes: Uint8Array, opts: ReadWarcOptions = {}): WarcRecord {
  const data = isGzipAt(bytes, 0) ? gunzipMembers(bytes, opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES) : bytes;
  const parsed = parseWarcRecordAt(data, 0, opts);
  if (!parsed) throw new WarcError('CCP_ERR_WARC_TRUNCATED', 'no WARC record in the bytes', { detail: { length: bytes.length } });
  return parsed.record;
}
