import { rng } from '../../../../tests/support/rng';
import { SpecialByteFinder, usesWebAssembly } from './special-bytes';

/** The definition, byte by byte: a backslash or a control byte other than `\n`. */
const special = (b: number): boolean => b === 0x5c || (b < 0x20 && b !== 0x0a);
const naive = (bytes: Uint8Array, start: number, end: number): boolean => bytes.subarray(start, end).some(special);

/** Checks `within` on consecutive "lines" of `bytes`, cut at the given ends, against the definition. */
function expectSameAnswers(bytes: Buffer, cuts: number[]): void {
  const ranges = [...cuts, bytes.length].map((end, i, all) => [i === 0 ? 0 : all[i - 1]!, end] as const);
  const want = ranges.map(([start, end]) => naive(bytes, start, end));
  const ascii = !bytes.some((b) => b >= 0x80);
  for (const useWasm of [true, false]) {
    const finder = SpecialByteFinder.of(bytes, useWasm);
    expect([useWasm, finder !== null]).toEqual([useWasm, ascii]);
    if (finder === null) continue;
    const got = ranges.map(([start, end]) => finder.within(start, end));
    if (got.some((x, i) => x !== want[i])) expect({ useWasm, ranges, got }).toEqual({ useWasm, ranges, got: want });
  }
}

describe('SpecialByteFinder (WebAssembly SIMD scan and memchr fallback)', () => {
  test('the WebAssembly SIMD module compiles on Node 20 (else only the fallback would be tested here)', () => {
    expect(usesWebAssembly()).toBe(true);
  });

  test('a special byte at every offset of a 16-byte stride, at the ends and past them, is found in its line only', () => {
    const plain = Buffer.from('abc {"url": "x"}\n'.repeat(6), 'latin1');
    for (const b of [0x00, 0x09, 0x0d, 0x1f, 0x5c]) {
      for (let at = 0; at < plain.length; at++) {
        const bytes = Buffer.from(plain);
        if (bytes[at] === 0x0a) continue;
        bytes[at] = b;
        expectSameAnswers(bytes, [17, 34, 51, 68, 85]);
        expectSameAnswers(bytes, [at, at + 1]);
      }
    }
  });

  test('`\\n` and DEL are not special; a byte above 0x7f anywhere, even after a special one, means no finder', () => {
    const ascii = Buffer.from([0x0a, 0x7f, 0x20, 0x5b, 0x5d, 0x0a]);
    expectSameAnswers(ascii, [3]);
    expect(SpecialByteFinder.of(ascii)!.within(0, ascii.length)).toBe(false);
    for (const high of [0x80, 0xc3, 0xff]) {
      const bytes = Buffer.from([0x41, 0x09, 0x5c, 0x41, ...new Array<number>(40).fill(0x41), high, 0x0a]);
      expect([SpecialByteFinder.of(bytes), SpecialByteFinder.of(bytes, false)]).toEqual([null, null]);
    }
  });

  test('a small block after a large one does not see the large one\'s bytes left in the module\'s memory', () => {
    const large = Buffer.alloc(300_000, 0x5c);
    expect(SpecialByteFinder.of(large)!.within(0, large.length)).toBe(true);
    const small = Buffer.from('clean line\n', 'latin1');
    expectSameAnswers(small, [5]);
    expect(SpecialByteFinder.of(small)!.within(0, small.length)).toBe(false);
  });

  test('random blocks of random sizes and densities, cut into random lines, answer as the definition', () => {
    const r = rng(25);
    for (let round = 0; round < 300; round++) {
      const n = r.next(round < 100 ? 64 : 5000);
      const density = r.pick([0, 0.0005, 0.01, 0.2]);
      const bytes = Buffer.alloc(n);
      const high = r.chance(0.3) ? 0.001 : 0;
      for (let i = 0; i < n; i++) bytes[i] = r.chance(density) ? r.pick([0, 1, 9, 13, 27, 31, 0x5c]) : r.chance(0.02) ? 0x0a : r.chance(high) ? 128 + r.next(128) : 32 + r.next(96);
      const cuts: number[] = [];
      for (let at = r.next(40); at < n; at += 1 + r.next(80)) cuts.push(at);
      expectSameAnswers(bytes, cuts);
    }
  });
});
