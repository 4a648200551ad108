import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { gunzipChunkSize, gunzipInto, MAX_IN_PLACE } from './gunzip-into';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');
const TEXT = readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'));

/** gunzipInto with a fresh Buffer for `into`; what it was asked for and whether the bytes landed in it. */
function inflate(gz: Uint8Array) {
  const asked: number[] = [];
  let mine: Buffer | undefined;
  const got = gunzipInto(gz, (n) => {
    asked.push(n);
    return (mine = Buffer.alloc(n, 0xee));
  });
  return { got, asked, inPlace: mine !== undefined && got.buffer === mine.buffer && got.byteOffset === mine.byteOffset };
}

/** `gz` with the trailer's size (the last four bytes) set to `size`. */
function withSize(gz: Buffer, size: number): Buffer {
  const out = Buffer.from(gz);
  out.writeUInt32LE(size, out.length - 4);
  return out;
}

describe('gunzipInto (a block inflated into memory the caller has)', () => {
  test('one member lands in the caller\'s memory, asked for one byte more than its size, and is gunzipSync\'s bytes', () => {
    // 3,000 lines compress 7.7:1, more than gunzipSync's 10× chunk: the size decides
    const text = Buffer.concat([TEXT, TEXT, TEXT]);
    const gz = gzipSync(text);
    expect(text.length + 1).toBeGreaterThan(gunzipChunkSize(gz.length));
    const { got, asked, inPlace } = inflate(gz);
    expect(asked).toEqual([text.length + 1]);
    expect(inPlace).toBe(true);
    expect(got.equals(text)).toBe(true);
    // a small block: gunzipSync's chunk (≈10× the input) decides
    const small = gzipSync(TEXT.subarray(0, 2000));
    const few = inflate(small);
    expect([few.got.equals(TEXT.subarray(0, 2000)), few.asked, few.inPlace]).toEqual([true, [gunzipChunkSize(small.length)], true]);
  });

  test('several members (the trailer gives only the last one\'s size) and an empty block: the same bytes, elsewhere', () => {
    // 1.7 MB in all, more than gunzipSync's largest chunk (1 MB), the last member empty
    const gz = Buffer.concat([gzipSync(Buffer.concat([TEXT, TEXT, TEXT])), gzipSync(TEXT.subarray(0, 1000)), gzipSync('')]);
    const several = inflate(gz);
    expect(several.asked).toEqual([gunzipChunkSize(gz.length)]);
    expect(several.got.equals(gunzipSync(gz))).toBe(true);
    expect(several.inPlace).toBe(false);
    // when they fit, several members land in place too
    const fits = Buffer.concat([gzipSync(TEXT), gzipSync(TEXT.subarray(0, 1000))]);
    const together = inflate(fits);
    expect([together.got.equals(gunzipSync(fits)), together.asked, together.inPlace]).toEqual([true, [gunzipChunkSize(fits.length)], true]);
    const empty = inflate(gzipSync(''));
    expect(empty.got.length).toBe(0);
  });

  test('a trailer that lies fails as in gunzipSync; a last member smaller than the rest still gives the whole block', () => {
    const gz = gzipSync(TEXT);
    // zlib checks the trailer's size: a block whose trailer lies does not inflate, in place or not
    for (const size of [0, 1, TEXT.length - 1, TEXT.length + 1]) {
      expect(() => inflate(withSize(gz, size))).toThrow();
      expect(() => gunzipSync(withSize(gz, size))).toThrow();
    }
    // a member followed by one of zero bytes: the trailer says 0, the memory is too small, zlib makes more
    const two = Buffer.concat([gz, gzipSync('')]);
    expect(inflate(two).got.equals(TEXT)).toBe(true);
  });

  test('a trailer claiming more than MAX_IN_PLACE is not trusted with memory: nothing is asked, zlib refuses the block', () => {
    const { asked } = (() => {
      const asked: number[] = [];
      expect(() => gunzipInto(withSize(gzipSync(TEXT), MAX_IN_PLACE), (n) => (asked.push(n), Buffer.alloc(n)))).toThrow();
      return { asked };
    })();
    expect(asked).toEqual([]);
  });

  test('bytes that are not gzip throw the error gunzipSync throws', () => {
    for (const bad of [Buffer.from('not gzip at all, but long enough'), gzipSync(TEXT).subarray(0, 500), Buffer.alloc(0)]) {
      let want: unknown;
      try {
        gunzipSync(bad);
      } catch (err) {
        want = err;
      }
      expect(want).toBeDefined();
      expect(() => inflate(bad)).toThrow((want as Error).message);
    }
  });
});
