import { CcpError } from '@ccpipe/core';

/** Stable codes of the errors range readers throw (besides core's `CCP_ERR_SSRF`). */
export type FetchErrorCode =
  | 'CCP_ERR_FETCH_STATUS'
  | 'CCP_ERR_FETCH_SHORT_BODY'
  | 'CCP_ERR_FETCH_LONG_BODY'
  | 'CCP_ERR_FETCH_NOT_PARTIAL'
  | 'CCP_ERR_FETCH_CONTENT_RANGE'
  | 'CCP_ERR_FETCH_REDIRECT'
  | 'CCP_ERR_FETCH_NOT_GZIP'
  | 'CCP_ERR_FETCH_NETWORK'
  | 'CCP_ERR_FETCH_BAD_RANGE';

/**
 * A range or stream read that failed for a reason named by `code`. `detail` holds untrusted data (status,
 * offsets, the network error code, a redirect's Location) and `attempts` once retries are exhausted; the
 * message never carries a URL.
 */
export class FetchError extends CcpError {
  declare readonly code: FetchErrorCode;
  constructor(
    code: FetchErrorCode,
    message: string,
    options: { retryable: boolean; cause?: unknown; detail?: Record<string, unknown> },
  ) {
    super(code, message, { retryable: options.retryable, cause: options.cause, detail: options.detail ?? {} });
  }
}

/**
 * The server (or the local store, in HTTP terms) answered with a status other than the expected one:
 * 404 missing, 403 forbidden, 416 range not inside the file, 503/429 overloaded, … `status` is also in
 * `detail.status`. `retryable` follows the retry policy's `retryStatuses`.
 */
export class FetchStatusError extends FetchError {
  readonly status: number;
  constructor(status: number, retryable: boolean, detail: Record<string, unknown> = {}) {
    super('CCP_ERR_FETCH_STATUS', `unexpected HTTP status ${status}`, { retryable, detail: { ...detail, status } });
    this.status = status;
  }
}

/**
 * The caller's AbortSignal fired. Retryable: an abort is the caller's decision (usually a shutdown), not a
 * property of the data, so a batch interrupted by it belongs back in the queue, not in the dead-letter queue.
 */
export class AbortedError extends CcpError {
  constructor(cause?: unknown) {
    super('CCP_ERR_ABORTED', 'read aborted', { retryable: true, cause });
  }
}

/** A read or stream was started after `close()`. Retryable for the same reason as {@link AbortedError}. */
export class ReaderClosedError extends CcpError {
  constructor() {
    super('CCP_ERR_READER_CLOSED', 'range reader is closed', { retryable: true });
  }
}

/** Throws {@link AbortedError} when `signal` has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError(signal.reason);
}

/** Records how many attempts a final error took (in `detail.attempts`) and returns it. */
export function withAttempts<E extends CcpError>(err: E, attempts: number): E {
  if (err.detail !== undefined) err.detail['attempts'] = attempts;
  return err;
}
