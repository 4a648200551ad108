import { FetchError, FetchStatusError } from './errors';

/** Largest range one `read` may ask for unless the reader is configured otherwise (64 MiB). */
export const DEFAULT_MAX_READ_BYTES = 64 * 1024 * 1024;

/**
 * Checks the arguments of `read`: `offset` a safe integer ≥ 0, `length` a safe integer in [1, maxBytes].
 * @throws FetchError `CCP_ERR_FETCH_BAD_RANGE` (non-retryable) otherwise — a corrupt CDX line, not a network fault.
 */
export function checkRangeArgs(offset: number, length: number, maxBytes: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0 || !Number.isSafeInteger(length) || length < 1 || length > maxBytes) {
    throw new FetchError('CCP_ERR_FETCH_BAD_RANGE', 'invalid byte range', {
      retryable: false,
      detail: { offset, length, maxBytes },
    });
  }
}

/**
 * The error for a range that is not entirely inside a file of `size` bytes: status 416 in HTTP terms,
 * whichever reader noticed it. `clamped` says the range started inside the file but ran past its end.
 */
export function outOfRangeError(offset: number, length: number, size: number | null, clamped: boolean): FetchStatusError {
  return new FetchStatusError(416, false, { offset, length, size, clamped });
}

/**
 * Checks that a range read starts with the gzip magic bytes `1f 8b` (every Common Crawl CDX block and WARC
 * record is one gzip member, so anything else means a wrong offset or a wrong file).
 * @throws FetchError `CCP_ERR_FETCH_NOT_GZIP` (non-retryable).
 */
export function assertGzip(bytes: Uint8Array, offset: number): void {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) {
    throw new FetchError('CCP_ERR_FETCH_NOT_GZIP', 'range does not start a gzip member', {
      retryable: false,
      detail: { offset, head: Buffer.from(bytes.subarray(0, 4)).toString('hex') },
    });
  }
}

/** A parsed `Content-Range: bytes start-end/total` (total `null` for `*`). */
export interface ContentRange {
  start: number;
  end: number;
  total: number | null;
}

const CONTENT_RANGE = /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i;

/** Parses a 206 reply's Content-Range; `null` when absent or malformed (including end < start). Pure. */
export function parseContentRange(value: string | undefined): ContentRange | null {
  if (value === undefined) return null;
  const m = CONTENT_RANGE.exec(value.trim());
  if (!m) return null;
  const start = Number(m[1]);
  const end = Number(m[2]);
  const total = m[3] === '*' ? null : Number(m[3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return null;
  if (total !== null && (!Number.isSafeInteger(total) || end >= total)) return null;
  return { start, end, total };
}

/**
 * Checks a 206 reply's Content-Range against the requested `[offset, offset + length)`: start and end must
 * match exactly (total may be `*` or any number). A reply clamped at the file's end (`end = total - 1` short
 * of what was asked) means the range runs past the end of the file.
 * @throws FetchStatusError 416 for a clamped range; FetchError `CCP_ERR_FETCH_CONTENT_RANGE` for anything else.
 */
export function checkContentRange(header: string | undefined, offset: number, length: number): void {
  const cr = parseContentRange(header);
  const wantEnd = offset + length - 1;
  if (cr !== null && cr.start === offset && cr.end === wantEnd) return;
  if (cr !== null && cr.start === offset && cr.total !== null && cr.end === cr.total - 1 && cr.end < wantEnd) {
    throw outOfRangeError(offset, length, cr.total, true);
  }
  throw new FetchError('CCP_ERR_FETCH_CONTENT_RANGE', 'Content-Range does not match the requested range', {
    retryable: false,
    detail: { offset, length, contentRange: header?.slice(0, 100) ?? null },
  });
}
