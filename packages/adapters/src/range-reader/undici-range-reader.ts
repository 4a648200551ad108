import { Pool, type Dispatcher } from 'undici';
import {
  CcpError,
  DEFAULT_RETRY_POLICY,
  isRetryable,
  retryDelayMs,
  warcFileUrl,
  type Clock,
  type RangeReader,
  type RetryPolicy,
} from '@ccpipe/core';
import { AdaptiveLimiter } from './adaptive-limiter';
import { AbortedError, FetchError, FetchStatusError, ReaderClosedError, throwIfAborted, withAttempts } from './errors';
import { discard, headerOf, readExactly, shortBody, statusFailure } from './http-response';
import { assertGzip, checkContentRange, checkRangeArgs, DEFAULT_MAX_READ_BYTES } from './range-checks';
import { systemClock } from './system-clock';

/** Metric hooks; labels are closed sets, never a URL or host. Hooks must not throw (errors are swallowed). */
export interface RangeReaderObserver {
  /** One HTTP request sent (every attempt counts). */
  onRequest?(): void;
  /** An attempt failed and will be tried again. */
  onRetry?(e: { statusClass: '5xx' | '4xx' | 'network' }): void;
  /** Body bytes received (per chunk, retried attempts included). */
  onBytes?(n: number): void;
  /** The server signalled overload (503, 429). */
  onSlowDown?(): void;
  /** The adaptive concurrency limit changed to `limit`. */
  onConcurrencyChange?(limit: number): void;
}

/** Options of {@link UndiciRangeReader}. */
export interface UndiciRangeReaderOptions {
  /** `http(s)://host[:port][/prefix]`, e.g. `https://data.commoncrawl.org`; every request stays under it. */
  baseUrl: string;
  /** Connections to the origin (keep-alive); the ceiling of the adaptive concurrency limit (× `pipelining`). */
  connections: number;
  /** HTTP/1.1 pipelining depth per connection; default 1 (none). The concurrency ceiling is connections × this. */
  pipelining?: number;
  /** Default {@link DEFAULT_RETRY_POLICY}. */
  retryPolicy?: RetryPolicy;
  /** Default the real clock; tests inject one to observe backoff sleeps. */
  clock?: Clock;
  /** Time to wait for response headers; default 30 s. */
  headersTimeoutMs?: number;
  /** Longest silence while a body is arriving; default 60 s. */
  bodyTimeoutMs?: number;
  /** Sent as User-Agent (Common Crawl asks clients to identify themselves). */
  userAgent: string;
  observer?: RangeReaderObserver;
  /** Require every `read` to start with the gzip magic `1f 8b` (CDX blocks, WARC records); default false. */
  expectGzip?: boolean;
  /** Successes before the adaptive limit grows by one; default 32. */
  increaseAfter?: number;
  /** Largest `length` a read may ask for; default 64 MiB. */
  maxReadBytes?: number;
  /** Jitter source in [0, 1); default Math.random. */
  random?: () => number;
}

interface Failure {
  error: CcpError;
  retry: boolean;
  overload: boolean;
  retryAfterMs: number | null;
  statusClass: '5xx' | '4xx' | 'network';
}

/**
 * {@link RangeReader} over HTTP(S) with an undici `Pool` (keep-alive, `connections` sockets to the one origin of
 * `baseUrl`). Every path goes through `warcFileUrl` (SSRF guard: CCP_ERR_SSRF, no request made). Redirects are
 * never followed. `read` sends one `Range: bytes=a-b` and accepts only 206 with a matching Content-Range and
 * exactly `length` bytes. Failures are retried per the retry policy (exponential backoff, full jitter, at least
 * Retry-After); 503/429 also halve a concurrency limit shared by all reads of this reader (AIMD, see
 * {@link AdaptiveLimiter}). Never logs. `close()` is idempotent and ends pending reads with CCP_ERR_READER_CLOSED.
 */
export class UndiciRangeReader implements RangeReader {
  private readonly base: URL;
  private readonly pool: Pool;
  private readonly policy: RetryPolicy;
  private readonly clock: Clock;
  private readonly observer: RangeReaderObserver;
  private readonly limiter: AdaptiveLimiter;
  private readonly headers: Record<string, string>;
  private readonly expectGzip: boolean;
  private readonly maxReadBytes: number;
  private readonly random: () => number;
  private readonly sleepers = new Set<AbortController>();
  private closing: Promise<void> | undefined;

  /** @throws CcpError `CCP_ERR_FETCH_CONFIG` for a base URL that is not plain http(s) or a bad `connections`. */
  constructor(opts: UndiciRangeReaderOptions) {
    const base = new URL(opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`);
    if ((base.protocol !== 'http:' && base.protocol !== 'https:') || base.username || base.password || base.search || base.hash) {
      throw new CcpError('CCP_ERR_FETCH_CONFIG', 'base URL must be plain http(s) without credentials, query or fragment');
    }
    if (!Number.isInteger(opts.connections) || opts.connections < 1) {
      throw new CcpError('CCP_ERR_FETCH_CONFIG', 'connections must be an integer ≥ 1', { detail: { connections: opts.connections } });
    }
    this.base = base;
    this.policy = opts.retryPolicy ?? DEFAULT_RETRY_POLICY;
    this.clock = opts.clock ?? systemClock;
    this.observer = opts.observer ?? {};
    this.expectGzip = opts.expectGzip ?? false;
    this.maxReadBytes = opts.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
    this.random = opts.random ?? Math.random;
    this.headers = { 'user-agent': opts.userAgent, 'accept-encoding': 'identity' };
    const pipelining = Math.max(1, Math.floor(opts.pipelining ?? 1));
    this.pool = new Pool(base.origin, {
      connections: opts.connections,
      pipelining,
      headersTimeout: opts.headersTimeoutMs ?? 30_000,
      bodyTimeout: opts.bodyTimeoutMs ?? 60_000,
    });
    this.limiter = new AdaptiveLimiter({
      // The most requests the pool can have on the wire: `connections` unless pipelining is on.
      ceiling: opts.connections * pipelining,
      increaseAfter: opts.increaseAfter ?? 32,
      onChange: (n) => this.notify((o) => o.onConcurrencyChange?.(n)),
    });
  }

  /** The current adaptive concurrency limit (≤ `connections`). */
  get concurrencyLimit(): number {
    return this.limiter.limit;
  }

  /**
   * Exactly bytes [offset, offset + length) of `path`. Throws CCP_ERR_SSRF (no request), CCP_ERR_FETCH_BAD_RANGE,
   * CCP_ERR_FETCH_STATUS (detail.status; 416 when the range is not inside the file), CCP_ERR_FETCH_REDIRECT,
   * CCP_ERR_FETCH_NOT_PARTIAL, CCP_ERR_FETCH_CONTENT_RANGE, CCP_ERR_FETCH_SHORT_BODY / CCP_ERR_FETCH_NETWORK
   * (after retries), CCP_ERR_FETCH_NOT_GZIP, CCP_ERR_ABORTED, CCP_ERR_READER_CLOSED.
   */
  async read(path: string, offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    this.assertOpen();
    checkRangeArgs(offset, length, this.maxReadBytes);
    const reqPath = this.requestPath(path);
    const bytes = await this.withRetries(signal, async () => {
      const res = await this.requestRange(reqPath, offset, length, signal);
      return readExactly(res.body, length, {
        policy: this.policy,
        offset,
        signal,
        onBytes: (n) => this.notify((o) => o.onBytes?.(n)),
      });
    });
    if (this.expectGzip) assertGzip(bytes, offset);
    return bytes;
  }

  /**
   * The whole file (200) as chunks. Failures before the first chunk are retried like `read`; once bytes have
   * been yielded a failure ends the iteration with CCP_ERR_FETCH_SHORT_BODY (the caller restarts if it wants).
   * The stream does not hold a concurrency slot while its body is consumed, so a slow consumer cannot starve reads.
   */
  async *stream(path: string, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    this.assertOpen();
    const reqPath = this.requestPath(path);
    const res = await this.withRetries(signal, async () => {
      this.notify((o) => o.onRequest?.());
      const r = await this.pool.request({ path: reqPath, method: 'GET', headers: this.headers, signal });
      if (r.statusCode !== 200) {
        // statusFailure treats 200 as "ignored Range"; a 206 to a request without Range is as wrong.
        if (r.statusCode === 206) {
          discard(r.body);
          throw new FetchStatusError(206, false);
        }
        throw await statusFailure(r, { policy: this.policy, nowMs: this.clock.now() });
      }
      return r;
    });
    const declared = Number(headerOf(res.headers, 'content-length') ?? Number.NaN);
    yield* this.relay(res.body, 0, Number.isFinite(declared) ? declared : null, signal);
  }

  /** One attempt at `Range: bytes=offset-(offset+length-1)`: the response once it is a 206 with a matching Content-Range. */
  private async requestRange(reqPath: string, offset: number, length: number, signal: AbortSignal | undefined): Promise<Dispatcher.ResponseData> {
    this.notify((o) => o.onRequest?.());
    const res = await this.pool.request({ path: reqPath, method: 'GET', headers: { ...this.headers, range: `bytes=${offset}-${offset + length - 1}` }, signal });
    if (res.statusCode !== 206) throw await statusFailure(res, { policy: this.policy, nowMs: this.clock.now(), offset, length });
    try {
      checkContentRange(headerOf(res.headers, 'content-range'), offset, length);
    } catch (err) {
      discard(res.body);
      throw err;
    }
    return res;
  }

  /**
   * A response body as chunks, counted; a failure mid-way is CCP_ERR_FETCH_SHORT_BODY (or the abort, or the close),
   * and so is a body of another length than `length` (null: unknown). The body is discarded when the caller stops.
   */
  private async *relay(body: Dispatcher.ResponseData['body'], offset: number, length: number | null, signal: AbortSignal | undefined, first?: (b: Buffer) => void): AsyncGenerator<Uint8Array> {
    let received = 0;
    try {
      for await (const chunk of body) {
        const b = chunk as Buffer;
        if (received === 0) first?.(b);
        received += b.length;
        this.notify((o) => o.onBytes?.(b.length));
        yield b;
      }
    } catch (err) {
      if (signal?.aborted) throw new AbortedError(signal.reason);
      if (this.closing) throw new ReaderClosedError();
      if (err instanceof CcpError && err.code === 'CCP_ERR_FETCH_NOT_GZIP') throw err;
      throw shortBody(this.policy, offset, length, received, err);
    } finally {
      if (!body.destroyed) discard(body);
    }
    if (length !== null && received !== length) throw shortBody(this.policy, offset, length, received, undefined);
  }

  /**
   * Bytes [offset, offset + length) as chunks, in one request (`Range`, 206, a matching Content-Range). Failures
   * before the first chunk are retried like `read`; once bytes have been yielded a failure ends the iteration with
   * CCP_ERR_FETCH_SHORT_BODY. No size cap (bulk mode streams whole WARC files); the first bytes must be gzip when
   * `expectGzip`. Like `stream`, it holds no concurrency slot while the body is consumed.
   */
  async *streamRange(path: string, offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    this.assertOpen();
    checkRangeArgs(offset, length, Number.MAX_SAFE_INTEGER);
    const reqPath = this.requestPath(path);
    const res = await this.withRetries(signal, () => this.requestRange(reqPath, offset, length, signal));
    yield* this.relay(res.body, offset, length, signal, this.expectGzip ? (b) => assertGzip(b, offset) : undefined);
  }

  /** Closes the pool, wakes backoff sleeps and queued reads with CCP_ERR_READER_CLOSED. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.limiter.rejectAll(new ReaderClosedError());
      for (const ac of this.sleepers) ac.abort(new ReaderClosedError());
      this.sleepers.clear();
      await this.pool.destroy();
    })();
    return this.closing;
  }

  private assertOpen(): void {
    if (this.closing) throw new ReaderClosedError();
  }

  /** Validated request target under the base URL (throws CCP_ERR_SSRF). */
  private requestPath(path: string): string {
    const url = new URL(warcFileUrl(this.base.href, path));
    return url.pathname;
  }

  /** Runs `attempt` under a concurrency permit, retrying per policy; see the class comment. */
  private async withRetries<T>(signal: AbortSignal | undefined, attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      throwIfAborted(signal);
      const permit = await this.limiter.acquire(signal);
      let failure: Failure;
      try {
        const value = await attempt();
        this.limiter.release(permit, 'success');
        return value;
      } catch (err) {
        failure = this.classify(err, signal);
        this.limiter.release(permit, failure.overload ? 'overload' : 'other');
      }
      if (failure.overload) this.notify((o) => o.onSlowDown?.());
      if (!failure.retry || n >= this.policy.maxAttempts) throw withAttempts(failure.error, n);
      this.notify((o) => o.onRetry?.({ statusClass: failure.statusClass }));
      await this.backoff(retryDelayMs(this.policy, n, { retryAfterMs: failure.retryAfterMs, random: this.random }), signal);
    }
  }

  private classify(err: unknown, signal: AbortSignal | undefined): Failure {
    const base = { overload: false, retryAfterMs: null, statusClass: 'network' as const };
    if (signal?.aborted) return { ...base, error: err instanceof AbortedError ? err : new AbortedError(signal.reason), retry: false };
    if (this.closing) return { ...base, error: new ReaderClosedError(), retry: false };
    if (err instanceof FetchStatusError) {
      const retryAfter = err.detail?.['retryAfterMs'];
      return {
        error: err,
        retry: err.retryable,
        overload: err.status === 503 || err.status === 429,
        retryAfterMs: typeof retryAfter === 'number' ? retryAfter : null,
        statusClass: err.status >= 500 ? '5xx' : '4xx',
      };
    }
    if (err instanceof CcpError) return { ...base, error: err, retry: err.code === 'CCP_ERR_FETCH_SHORT_BODY' && err.retryable };
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : 'UNKNOWN';
    const retryable = isRetryable(this.policy, { code });
    const error = new FetchError('CCP_ERR_FETCH_NETWORK', 'network error', { retryable, cause: err, detail: { code } });
    return { ...base, error, retry: retryable };
  }

  /** Sleeps `ms` via the clock; wakes early with CCP_ERR_ABORTED (signal) or CCP_ERR_READER_CLOSED (close). */
  private async backoff(ms: number, signal: AbortSignal | undefined): Promise<void> {
    const ac = new AbortController();
    const onAbort = (): void => ac.abort(new AbortedError(signal?.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    this.sleepers.add(ac);
    try {
      if (signal?.aborted) onAbort();
      await this.clock.sleep(ms, ac.signal);
    } catch (err) {
      if (err instanceof CcpError) throw err;
      throw this.closing ? new ReaderClosedError() : new AbortedError(err);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.sleepers.delete(ac);
    }
    this.assertOpen();
  }

  private notify(call: (o: RangeReaderObserver) => void): void {
    try {
      call(this.observer);
    } catch {
      // A metrics hook must never fail a read.
    }
  }
}
