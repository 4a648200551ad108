import { AbortedError } from './errors';

/** A granted slot; hand it back to {@link AdaptiveLimiter.release} exactly once. */
export interface Permit {
  /** The limiter's decrease epoch when the slot was granted (see {@link AdaptiveLimiter.release}). */
  readonly epoch: number;
}

/** Options of {@link AdaptiveLimiter}. */
export interface AdaptiveLimiterOptions {
  /** Upper bound and starting value of the limit (the reader's `connections`). */
  ceiling: number;
  /** Lower bound; default 1. */
  floor?: number;
  /** Successes at the current limit before it grows by one; default 32. */
  increaseAfter?: number;
  /** Called with the new limit after every change. */
  onChange?: (limit: number) => void;
}

interface Waiter {
  grant: (p: Permit) => void;
  fail: (err: unknown) => void;
}

/**
 * A concurrency limit that adapts like TCP congestion control (AIMD): an overload signal (503 SlowDown,
 * 429) halves the limit, `increaseAfter` successes add one back, between `floor` and `ceiling`.
 *
 * One overload burst halves the limit once: a permit remembers the epoch it was granted in, and only an
 * overload from a permit of the current epoch halves (and starts a new epoch). So eight requests in flight that
 * all get SlowDown halve 8 → 4, not 8 → 1; if the retries (granted at 4) are refused again, 4 → 2 follows.
 *
 * Waiters are served first-in first-out. When the limit drops below the number in flight nothing is
 * cancelled; new grants wait until enough permits come back. Not thread-safe (single event loop).
 */
export class AdaptiveLimiter {
  private limitValue: number;
  private readonly ceiling: number;
  private readonly floor: number;
  private readonly increaseAfter: number;
  private readonly onChange: ((limit: number) => void) | undefined;
  private inFlightCount = 0;
  private successes = 0;
  private epoch = 0;
  private readonly waiters: Waiter[] = [];

  constructor(opts: AdaptiveLimiterOptions) {
    if (!Number.isInteger(opts.ceiling) || opts.ceiling < 1) throw new RangeError('ceiling must be an integer ≥ 1');
    this.ceiling = opts.ceiling;
    this.floor = Math.min(Math.max(1, opts.floor ?? 1), this.ceiling);
    this.increaseAfter = Math.max(1, opts.increaseAfter ?? 32);
    this.onChange = opts.onChange;
    this.limitValue = this.ceiling;
  }

  /** The current limit. */
  get limit(): number {
    return this.limitValue;
  }

  /** Permits granted and not yet released. */
  get inFlight(): number {
    return this.inFlightCount;
  }

  /**
   * Resolves with a permit once fewer than `limit` are in flight (and earlier waiters are served).
   * @throws AbortedError when `signal` fires first (the place in line is given up).
   */
  acquire(signal?: AbortSignal): Promise<Permit> {
    if (signal?.aborted) return Promise.reject(new AbortedError(signal.reason));
    if (this.waiters.length === 0 && this.inFlightCount < this.limitValue) {
      this.inFlightCount++;
      return Promise.resolve({ epoch: this.epoch });
    }
    return new Promise<Permit>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new AbortedError(signal?.reason));
      };
      const waiter: Waiter = {
        grant: (p) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(p);
        },
        fail: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /**
   * Returns a permit with the outcome of the work it covered: `success` counts toward growth, `overload`
   * halves the limit (once per epoch), `other` (a 404, a network error) changes nothing.
   */
  release(permit: Permit, outcome: 'success' | 'overload' | 'other'): void {
    this.inFlightCount = Math.max(0, this.inFlightCount - 1);
    if (outcome === 'overload') {
      if (permit.epoch === this.epoch) {
        this.epoch++;
        this.successes = 0;
        this.setLimit(Math.max(this.floor, Math.floor(this.limitValue / 2)));
      }
    } else if (outcome === 'success' && this.limitValue < this.ceiling) {
      this.successes++;
      if (this.successes >= this.increaseAfter) {
        this.successes = 0;
        this.setLimit(this.limitValue + 1);
      }
    }
    this.drain();
  }

  /** Rejects every waiter with `err` (used by `close()`). */
  rejectAll(err: unknown): void {
    for (const w of this.waiters.splice(0)) w.fail(err);
  }

  private setLimit(n: number): void {
    if (n === this.limitValue) return;
    this.limitValue = n;
    this.onChange?.(n);
  }

  private drain(): void {
    while (this.waiters.length > 0 && this.inFlightCount < this.limitValue) {
      const w = this.waiters.shift();
      this.inFlightCount++;
      w?.grant({ epoch: this.epoch });
    }
  }
}
