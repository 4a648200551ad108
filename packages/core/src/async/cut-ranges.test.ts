import { cutRanges } from './cut-ranges';

async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<number[][]> {
  const out: number[][] = [];
  for await (const c of it) out.push([...c]);
  return out;
}

const file = Uint8Array.from({ length: 200 }, (_, i) => i);
const short = (at: number, upTo: number): Error => new Error(`short at ${at} of ${upTo}`);
const want = (ranges: { offset: number; length: number }[]): number[][] => ranges.map((r) => [...file.subarray(r.offset, r.offset + r.length)]);

describe('cutRanges', () => {
  it.each([1, 3, 7, 64, 500])('cuts gaps, neighbours, overlaps and a range listed twice at any chunk size (%i)', async (size) => {
    const ranges = [
      { offset: 0, length: 5 }, { offset: 5, length: 10 }, { offset: 40, length: 30 }, { offset: 40, length: 30 },
      { offset: 60, length: 20 }, { offset: 150, length: 1 }, { offset: 151, length: 49 },
    ];
    expect(await collect(cutRanges(chunked(file, size), ranges, 0, short))).toEqual(want(ranges));
  });

  it('reads a stream that starts mid-file (a resumed read)', async () => {
    const ranges = [{ offset: 120, length: 10 }, { offset: 190, length: 10 }];
    expect(await collect(cutRanges(chunked(file.subarray(100), 16), ranges, 100, short))).toEqual(want(ranges));
  });

  it('a stream that ends inside a range throws the caller\'s error, after the ranges before it', async () => {
    const got: number[][] = [];
    await expect((async () => {
      for await (const c of cutRanges(chunked(file.subarray(0, 100), 9), [{ offset: 10, length: 5 }, { offset: 95, length: 10 }], 0, short)) got.push([...c]);
    })()).rejects.toThrow('short at 100 of 105');
    expect(got).toEqual(want([{ offset: 10, length: 5 }]));
  });

  it('refuses ranges out of order and ends the stream when the consumer stops early', async () => {
    await expect(collect(cutRanges(chunked(file, 8), [{ offset: 50, length: 5 }, { offset: 10, length: 5 }], 0, short))).rejects.toThrow(RangeError);
    let closed = false;
    async function* watched(): AsyncGenerator<Uint8Array> {
      try {
        yield* chunked(file, 8);
      } finally {
        closed = true;
      }
    }
    for await (const _ of cutRanges(watched(), [{ offset: 0, length: 4 }, { offset: 100, length: 4 }], 0, short)) break;
    expect(closed).toBe(true);
  });
});
