import type { Dispatcher } from 'undici';
import { isRetryable, parseRetryAfter, type RetryPolicy } from '@ccpipe/core';
import { AbortedError, FetchError, FetchStatusError } from './errors';
import { outOfRangeError } from './range-checks';

type Body = Dispatcher.ResponseData['body'];

/** First value of a response header, or undefined. */
export function headerOf(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Drops a body without reading it. Destroying an undici body emits an abort error on it; the listener keeps
 * that from surfacing as an unhandled 'error' event. The socket is closed, not reused.
 */
export function discard(body: Body): void {
  body.on('error', () => undefined);
  body.destroy();
}

const ERROR_BODY_PEEK = 4096;
const S3_CODE = /<Code>([A-Za-z0-9.]{1,64})<\/Code>/;

/** Reads at most `max` bytes of a body, then drops the rest (destroying the stream if it was not done). */
async function peekBody(body: Body, max: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  try {
    for await (const chunk of body) {
      const b = chunk as Buffer;
      parts.push(b);
      n += b.length;
      if (n >= max) break;
    }
  } catch {
    // An error body that breaks off tells us nothing more.
  }
  return Buffer.concat(parts).subarray(0, max);
}

/**
 * The typed error for a reply whose status is not the expected one; always disposes of the body.
 * - 3xx → `CCP_ERR_FETCH_REDIRECT` (never followed: the target is untrusted);
 * - 200 when 206 was expected → `CCP_ERR_FETCH_NOT_PARTIAL` (the server ignored Range; the body may be a
 *   whole multi-GB WARC, so it is not read);
 * - 416 → `CCP_ERR_FETCH_STATUS` 416 (range not inside the file), with the size from `Content-Range: bytes *\/N`;
 * - anything else → `CCP_ERR_FETCH_STATUS` with `retryable` from the policy, `detail.retryAfterMs` from
 *   Retry-After and `detail.s3Code` from an S3 XML error body (`SlowDown`, `NoSuchKey`, …).
 */
export async function statusFailure(
  res: Dispatcher.ResponseData,
  ctx: { policy: RetryPolicy; nowMs: number; offset?: number; length?: number },
): Promise<FetchError> {
  const status = res.statusCode;
  if (status >= 300 && status < 400) {
    discard(res.body);
    const location = headerOf(res.headers, 'location');
    return new FetchError('CCP_ERR_FETCH_REDIRECT', 'redirect refused', {
      retryable: false,
      detail: { status, location: location?.slice(0, 200) ?? null },
    });
  }
  if (status === 200) {
    discard(res.body);
    return new FetchError('CCP_ERR_FETCH_NOT_PARTIAL', 'server answered a range request with the whole file', {
      retryable: false,
      detail: { status, offset: ctx.offset, length: ctx.length },
    });
  }
  if (status === 416 && ctx.offset !== undefined && ctx.length !== undefined) {
    discard(res.body);
    const m = /^bytes \*\/(\d+)$/.exec(headerOf(res.headers, 'content-range') ?? '');
    return outOfRangeError(ctx.offset, ctx.length, m ? Number(m[1]) : null, false);
  }
  const peek = await peekBody(res.body, ERROR_BODY_PEEK);
  const s3Code = S3_CODE.exec(peek.toString('utf8'))?.[1] ?? null;
  const retryAfterMs = parseRetryAfter(headerOf(res.headers, 'retry-after'), ctx.nowMs);
  return new FetchStatusError(status, isRetryable(ctx.policy, { status }), { retryAfterMs, s3Code });
}

/**
 * Reads a body that must hold exactly `length` bytes into one buffer, calling `onBytes` per chunk.
 * @throws FetchError `CCP_ERR_FETCH_LONG_BODY` (more bytes; reading stops at once), `CCP_ERR_FETCH_SHORT_BODY`
 *   (fewer, or the body broke off: retryable per policy), AbortedError when `signal` fired.
 */
export async function readExactly(
  body: Body,
  length: number,
  ctx: { policy: RetryPolicy; offset: number; signal?: AbortSignal | undefined; onBytes: (n: number) => void },
): Promise<Buffer> {
  const out = Buffer.allocUnsafe(length);
  let n = 0;
  try {
    for await (const chunk of body) {
      const b = chunk as Buffer;
      ctx.onBytes(b.length);
      if (n + b.length > length) {
        throw new FetchError('CCP_ERR_FETCH_LONG_BODY', 'body longer than the requested range', {
          retryable: false,
          detail: { offset: ctx.offset, length, received: n + b.length },
        });
      }
      b.copy(out, n);
      n += b.length;
    }
  } catch (err) {
    if (err instanceof FetchError) throw err;
    if (ctx.signal?.aborted) throw new AbortedError(ctx.signal.reason);
    throw shortBody(ctx.policy, ctx.offset, length, n, err);
  }
  if (n < length) throw shortBody(ctx.policy, ctx.offset, length, n, undefined);
  return out;
}

/** `CCP_ERR_FETCH_SHORT_BODY`, retryable when the policy lists that code (it does by default). */
export function shortBody(policy: RetryPolicy, offset: number, length: number | null, received: number, cause: unknown): FetchError {
  const causeCode = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : null;
  return new FetchError('CCP_ERR_FETCH_SHORT_BODY', 'body shorter than expected', {
    retryable: isRetryable(policy, { code: 'CCP_ERR_FETCH_SHORT_BODY' }),
    cause,
    detail: { offset, length, received, causeCode },
  });
}
