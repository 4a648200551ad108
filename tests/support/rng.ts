/** A seeded random source: `next(n)` an integer in [0, n), `float()` in [0, 1), `between(a, b)` a float in [a, b). */
export interface Rng {
  next(n: number): number;
  float(): number;
  between(a: number, b: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

/** mulberry32: small, fast, and the same sequence on every machine (the fuzz and chaos suites replay by seed). */
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
  return { float, next, between: (x, y) => x + float() * (y - x), pick: (items) => items[next(items.length)]!, chance: (p) => float() < p };
}
