import { DEFAULT_RETRY_POLICY, RetryPolicySchema, isRetryable, parseRetryAfter, retryDelayMs } from './retry-policy';

describe('retry policy', () => {
  const now = Date.parse('2026-11-22T00:00:00Z');

  it('parses Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 00:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 23:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });

  it('backs off exponentially with full jitter, capped', () => {
    const p = RetryPolicySchema.parse({ baseDelayMs: 100, maxDelayMs: 1000 });
    expect(retryDelayMs(p, 1, { random: () => 0.999 })).toBe(99);
    expect(retryDelayMs(p, 3, { random: () => 0.999 })).toBe(399);
    expect(retryDelayMs(p, 10, { random: () => 0.999 })).toBe(999);
    expect(retryDelayMs(p, 10, { random: () => 0 })).toBe(0);
  });

  it('waits at least what the server asked, up to the cap', () => {
    const p = RetryPolicySchema.parse({ baseDelayMs: 100, maxRetryAfterMs: 5000 });
    expect(retryDelayMs(p, 1, { retryAfterMs: 2000, random: () => 0.5 })).toBe(2000);
    expect(retryDelayMs(p, 1, { retryAfterMs: 3_600_000, random: () => 0.5 })).toBe(5000);
  });

  it('retries overload and transient network failures, not client errors', () => {
    expect(isRetryable(DEFAULT_RETRY_POLICY, { status: 503 })).toBe(true);
    expect(isRetryable(DEFAULT_RETRY_POLICY, { status: 429 })).toBe(true);
    expect(isRetryable(DEFAULT_RETRY_POLICY, { status: 404 })).toBe(false);
    expect(isRetryable(DEFAULT_RETRY_POLICY, { status: 416 })).toBe(false);
    expect(isRetryable(DEFAULT_RETRY_POLICY, { code: 'ECONNRESET' })).toBe(true);
    expect(isRetryable(DEFAULT_RETRY_POLICY, { code: 'CCP_ERR_SSRF' })).toBe(false);
  });
});
