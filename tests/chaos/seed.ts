/**
 * The chaos suite's seed and random source. CHAOS_SEED=<n> replays a run's schedule (which worker is killed after
 * which pause, when the broker restarts and for how long, where the batcher and the merger are killed); unset or
 * `random` draws a fresh one. The processes' own timing is not replayed: the same seed gives the same schedule, not the
 * same interleaving.
 */

/** A random source: `next(n)` is an integer in [0, n); `between(a, b)` a float in [a, b). */
export interface Rng {
  next(n: number): number;
  between(a: number, b: number): number;
  pick<T>(items: readonly T[]): T;
}

/** mulberry32: small, fast, and the same sequence on every machine (as tests/fuzz uses). */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const float = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const next = (n: number): number => Math.floor(float() * n);
  return { next, between: (x, y) => x + float() * (y - x), pick: (items) => items[next(items.length)]! };
}

/** CHAOS_SEED as a number; a fresh random one when unset, empty or `random`. @throws Error on anything else. */
export function chaosSeed(env: NodeJS.ProcessEnv = process.env): number {
  const raw = (env['CHAOS_SEED'] ?? '').trim();
  if (raw === '' || raw === 'random') return Math.floor(Math.random() * 2 ** 31);
  if (!/^\d{1,10}$/.test(raw)) throw new Error(`CHAOS_SEED must be a non-negative integer or 'random', not ${raw}`);
  return Number(raw) >>> 0;
}
