/** Counters of a {@link RowGroupCache}, for metrics and tests. */
export interface RowGroupCacheStats {
  /** Estimated bytes held (sum of the sizes given with each entry). */
  bytes: number;
  entries: number;
  hits: number;
  misses: number;
  evictions: number;
}

/**
 * A least-recently-used map bounded by bytes (each entry's size is the estimate its loader gives). Concurrent
 * `getOrLoad` calls for a missing key share one load, so a cold row group wanted by many requests is decoded once.
 * An entry larger than the whole bound is returned to its caller but not kept. Keys must name immutable data
 * (lake files never change once written), so entries never go stale.
 */
export class RowGroupCache<V> {
  private readonly map = new Map<string, { value: V; bytes: number }>();
  private readonly loading = new Map<string, Promise<V>>();
  private held = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  /** @param maxBytes the bound (≥ 0; 0 keeps nothing). */
  constructor(readonly maxBytes: number) {}

  /** Whether `key` is held (recency and counters untouched). */
  has(key: string): boolean {
    return this.map.has(key);
  }

  /** The value of `key` (now the most recently used), or undefined. */
  get(key: string): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  /** Stores `value` as the most recently used entry, evicting the least recently used ones beyond the bound. */
  set(key: string, value: V, bytes: number): void {
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      this.held -= old.bytes;
    }
    if (bytes > this.maxBytes) return;
    this.map.set(key, { value, bytes });
    this.held += bytes;
    for (const [k, e] of this.map) {
      if (this.held <= this.maxBytes) break;
      this.map.delete(k);
      this.held -= e.bytes;
      this.evictions++;
    }
  }

  /** The cached value, or the result of `load` (stored with its size). A failed load is not cached. */
  async getOrLoad(key: string, load: () => Promise<{ value: V; bytes: number }>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) {
      this.hits++;
      return hit;
    }
    const pending = this.loading.get(key);
    if (pending !== undefined) {
      this.hits++;
      return pending;
    }
    this.misses++;
    const p = load().then(
      ({ value, bytes }) => {
        this.loading.delete(key);
        this.set(key, value, bytes);
        return value;
      },
      (err: unknown) => {
        this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, p);
    return p;
  }

  stats(): RowGroupCacheStats {
    return { bytes: this.held, entries: this.map.size, hits: this.hits, misses: this.misses, evictions: this.evictions };
  }
}
