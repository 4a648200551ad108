/** Gopher's repetition figures over a text's words; see `QualitySignals`. */
export interface RepetitionFractions {
  /** Top n-gram character fraction for n = 2, 3, 4. */
  top: [number, number, number];
  /** Duplicate n-gram character fraction for n = 5..10. */
  dup: [number, number, number, number, number, number];
}

// N-grams are keyed by two 32-bit multiplicative hashes of their word ids, grown one word at a time (the key of an
// (n+1)-gram extends the n-gram's), combined into one 53-bit number: with the ~10^4 n-grams of a page a collision is
// about a 10^-8 event, so the figures are exact in practice. Counting uses an open-addressing table over typed arrays,
// kept between calls (the largest page seen sets its size): a Map costs ~4× as much here.

let h1: Int32Array = new Int32Array(1024);
let h2: Int32Array = new Int32Array(1024);
let keys: Float64Array = new Float64Array(1024);
let tableKeys: Float64Array = new Float64Array(2048);
let tableCounts: Int32Array = new Int32Array(2048);

function ensure(words: number): void {
  if (h1.length < words) {
    const size = 1 << Math.ceil(Math.log2(words));
    h1 = new Int32Array(size);
    h2 = new Int32Array(size);
    keys = new Float64Array(size);
  }
  if (tableCounts.length < 2 * words) {
    const size = 1 << Math.ceil(Math.log2(2 * words));
    tableKeys = new Float64Array(size);
    tableCounts = new Int32Array(size);
  }
}

/** Counts the `m` keys in `keys`; leaves the counts in the table, returns the table mask. */
function countKeys(m: number): number {
  const cap = 1 << Math.max(4, Math.ceil(Math.log2(2 * m)));
  const mask = cap - 1;
  tableCounts.fill(0, 0, cap);
  for (let i = 0; i < m; i++) {
    const k = keys[i]!;
    let s = (h1[i]! ^ (h1[i]! >>> 15)) & mask;
    while (tableCounts[s] !== 0 && tableKeys[s] !== k) s = (s + 1) & mask;
    tableKeys[s] = k;
    tableCounts[s]!++;
  }
  return mask;
}

function countOf(i: number, mask: number): number {
  const k = keys[i]!;
  let s = (h1[i]! ^ (h1[i]! >>> 15)) & mask;
  while (tableKeys[s] !== k) s = (s + 1) & mask;
  return tableCounts[s]!;
}

/**
 * Characters covered by the n-grams at the positions `hit` accepts, each word counted once, over `total`.
 */
function coverage(m: number, n: number, lens: readonly number[], total: number, hit: (i: number) => boolean): number {
  let covered = 0;
  let until = 0;
  for (let i = 0; i < m; i++) {
    if (!hit(i)) continue;
    for (let w = Math.max(i, until); w < i + n; w++) covered += lens[w]!;
    until = i + n;
  }
  return total > 0 ? covered / total : 0;
}

/**
 * Top n-gram (n = 2..4) and duplicate n-gram (n = 5..10) character fractions of a text given as word ids (equal words,
 * equal ids) and word lengths; `total` is the sum of the lengths. A duplicate fraction of 0 at n means 0 for every
 * larger n (an (n+1)-gram that repeats contains an n-gram that repeats), so those are not counted. Deterministic.
 */
export function repetitionFractions(ids: readonly number[], lens: readonly number[], total: number): RepetitionFractions {
  const out: RepetitionFractions = { top: [0, 0, 0], dup: [0, 0, 0, 0, 0, 0] };
  const words = ids.length;
  if (words < 2) return out;
  ensure(words);
  for (let i = 0; i < words; i++) {
    h1[i] = 0x811c9dc5 | 0;
    h2[i] = 0x9747b28c | 0;
  }
  for (let n = 1; n <= 10 && n <= words; n++) {
    const m = words - n + 1;
    for (let i = 0; i < m; i++) {
      const id = ids[i + n - 1]!;
      let a = Math.imul(h1[i]! ^ id, 0x01000193);
      a ^= a >>> 13;
      let b = Math.imul(h2[i]! ^ (id + 0x9e3779b9), 0x5bd1e995);
      b ^= b >>> 15;
      h1[i] = a;
      h2[i] = b;
      keys[i] = (a >>> 0) * 2097152 + (b >>> 11);
    }
    if (n < 2) continue;
    const mask = countKeys(m);
    if (n <= 4) {
      let top = -1;
      let topCount = 1;
      for (let i = 0; i < m; i++) {
        const c = countOf(i, mask);
        if (c > topCount) {
          topCount = c;
          top = i;
        }
      }
      if (top >= 0) {
        const k = keys[top]!;
        out.top[n - 2] = coverage(m, n, lens, total, (i) => keys[i] === k);
      }
    } else {
      const f = coverage(m, n, lens, total, (i) => countOf(i, mask) > 1);
      out.dup[n - 5] = f;
      if (f === 0) break;
    }
  }
  return out;
}
