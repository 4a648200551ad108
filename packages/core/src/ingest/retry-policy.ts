import { z } from 'zod';

/**
 * How range reads are retried: data, not code branches. Defaults follow what data.commoncrawl.org asks of
 * clients (back off on 503 SlowDown, honour Retry-After) and what S3-style stores answer under load.
 */
export const RetryPolicySchema = z.object({
  /** Attempts in all, the first one included. */
  maxAttempts: z.number().int().min(1).max(50).default(8),
  baseDelayMs: z.number().int().min(0).default(250),
  maxDelayMs: z.number().int().min(0).default(30_000),
  /** HTTP statuses worth another try. */
  retryStatuses: z.array(z.number().int()).default([408, 425, 429, 500, 502, 503, 504]),
  /** Network error codes worth another try (undici and Node socket codes). */
  retryErrorCodes: z
    .array(z.string())
    .default([
      'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENOTFOUND',
      'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED',
      'CCP_ERR_FETCH_SHORT_BODY',
    ]),
  /** A Retry-After longer than this is capped (a server asking for an hour should not park a worker). */
  maxRetryAfterMs: z.number().int().min(0).default(120_000),
});
export type RetryPolicy = z.infer<typeof RetryPolicySchema>;

/** The default policy. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = RetryPolicySchema.parse({});

/**
 * Parses an HTTP Retry-After value (delta-seconds or an HTTP date) into milliseconds from `nowMs`.
 * Returns null when absent or unparsable; never negative.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (value == null) return null;
  const v = value.trim();
  if (v === '') return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}

/**
 * Delay before attempt number `attempt + 1`, after `attempt` failed attempts (1-based): exponential backoff with
 * full jitter, at least the server's Retry-After when it gave one (capped by `maxRetryAfterMs`).
 * `random` is injected so callers (and tests) control the jitter. Pure.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  opts: { retryAfterMs?: number | null; random?: () => number } = {},
): number {
  const random = opts.random ?? Math.random;
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  const jittered = Math.floor(exp * random());
  const floor = opts.retryAfterMs == null ? 0 : Math.min(opts.retryAfterMs, policy.maxRetryAfterMs);
  return Math.max(jittered, floor);
}

/** True when a failed attempt with this HTTP status (or error code) should be tried again. */
export function isRetryable(policy: RetryPolicy, failure: { status?: number; code?: string }): boolean {
  if (failure.status !== undefined) return policy.retryStatuses.includes(failure.status);
  if (failure.code !== undefined) return policy.retryErrorCodes.includes(failure.code);
  return false;
}
