import { inflateMember, isGzipAt } from './gzip-member';
import { DEFAULT_MAX_RECORD_BYTES, parseWarcRecordAt, type ReadWarcOptions, type WarcRecord } from './warc-record';
import { WarcError } from './warc-error';

/**
 * Reads the one WARC record in `bytes`: a gzip member as fetched by a CDX offset/length range read, or
 * an uncompressed record; the gzip magic decides. A record some producer split over several members is
 * joined member by member until it is complete; bytes after the record are not read. Parses the WARC
 * head and, for `response`/`revisit` records with an `application/http` block, the HTTP status line,
 * head and payload. Payloads stored already decoded (Common Crawl: `X-Crawler-*` headers) are left
 * alone; real `Transfer-Encoding`/`Content-Encoding` are undone tolerantly (see `http.decoding`).
 *
 * Pure and idempotent; the result may hold views into `bytes` (uncompressed input).
 * Throws WarcError: CCP_ERR_WARC_GZIP (bad header, corrupt data, CRC mismatch), CCP_ERR_WARC_TRUNCATED,
 * CCP_ERR_WARC_TOO_LARGE (over `maxRecordBytes`), CCP_ERR_WARC_HEADER, and CCP_ERR_HTTP_HEAD unless
 * `opts.lenientHttp`.
 */
export function readWarcRecord(bytes: Uint8Array, opts: ReadWarcOptions = {}): WarcRecord {
  if (!isGzipAt(bytes, 0)) return parseOrThrow(bytes, opts, bytes.length);
  const max = opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  let member = inflateMember(bytes, 0, max);
  let data: Uint8Array = member.data;
  let pos = member.length;
  for (;;) {
    try {
      return parseOrThrow(data, opts, bytes.length);
    } catch (err) {
      const more = err instanceof WarcError && err.code === 'CCP_ERR_WARC_TRUNCATED' && isGzipAt(bytes, pos);
      if (!more) throw err;
    }
    member = inflateMember(bytes, pos, Math.max(1, max - data.length));
    data = Buffer.concat([data, member.data]);
    pos += member.length;
  }
}

function parseOrThrow(data: Uint8Array, opts: ReadWarcOptions, inputLength: number): WarcRecord {
  const parsed = parseWarcRecordAt(data, 0, opts);
  if (!parsed) throw new WarcError('CCP_ERR_WARC_TRUNCATED', 'no WARC record in the bytes', { detail: { length: inputLength } });
  return parsed.record;
}
