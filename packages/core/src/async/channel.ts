/**
 * An unbounded queue between one producer and one consumer: `push` never waits, the consumer iterates with
 * `for await`, and `close()` (or `fail(err)`) ends the iteration once what was pushed is taken. Pure.
 */
export class Channel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiting: ((r: IteratorResult<T>) => void) | null = null;
  private failWaiting: ((err: unknown) => void) | null = null;
  private closed = false;
  private error: { err: unknown } | null = null;

  /** Adds an item. @throws Error when the channel is closed */
  push(item: T): void {
    if (this.closed) throw new Error('push on a closed channel');
    if (this.waiting !== null) this.take().resolve({ value: item, done: false });
    else this.items.push(item);
  }

  /** No more items: the iteration ends after those pushed. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.waiting !== null) this.take().resolve({ value: undefined, done: true });
  }

  /** No more items, and the iteration throws `err` after those pushed. */
  fail(err: unknown): void {
    if (this.closed) return;
    this.error = { err };
    this.closed = true;
    if (this.waiting !== null) this.take().reject(err);
  }

  private take(): { resolve: (r: IteratorResult<T>) => void; reject: (err: unknown) => void } {
    const out = { resolve: this.waiting!, reject: this.failWaiting! };
    this.waiting = null;
    this.failWaiting = null;
    return out;
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length > 0) return Promise.resolve({ value: this.items.shift()!, done: false });
        if (this.error !== null) return Promise.reject(this.error.err);
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        if (this.waiting !== null) return Promise.reject(new Error('a channel has one consumer'));
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.waiting = resolve;
          this.failWaiting = reject;
        });
      },
    };
  }
}
