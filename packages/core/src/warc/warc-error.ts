import { CcpError } from '../errors';

/** Stable codes of {@link WarcError}. Safe as metric labels and DLQ reasons. */
export type WarcErrorCode =
  /** Not a gzip member where one was expected, bad gzip header, corrupt deflate data or CRC/ISIZE mismatch. */
  | 'CCP_ERR_WARC_GZIP'
  /** The WARC version line or header block is missing, malformed, over the size cap, or lacks Content-Length/WARC-Type. */
  | 'CCP_ERR_WARC_HEADER'
  /** The bytes end before the gzip member or the record block (Content-Length) is complete. */
  | 'CCP_ERR_WARC_TRUNCATED'
  /** The record inflates to more than the configured cap. */
  | 'CCP_ERR_WARC_TOO_LARGE'
  /** A response record whose HTTP head is not HTTP (HTTP/0.9-style junk, no status line, oversized head). */
  | 'CCP_ERR_HTTP_HEAD';

/**
 * A WARC record (or its gzip member, or its HTTP head) that cannot be read. Never retryable: the same
 * bytes give the same error. (A short network read is the range reader's to detect: it knows how many
 * bytes it asked for.) Untrusted values (header lines, URIs) go in `detail`, never in the message.
 */
export class WarcError extends CcpError {
  declare readonly code: WarcErrorCode;

  constructor(code: WarcErrorCode, message: string, options: { cause?: unknown; detail?: Record<string, unknown> } = {}) {
    super(code, message, { ...options, retryable: false });
  }
}
