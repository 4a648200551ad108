/** A byte range of a file. */
export interface ByteRange {
  offset: number;
  length: number;
}

/**
 * Cuts byte ranges out of a stream of a file's bytes (the stream starts at file offset `start`): yields each range's
 * bytes (a copy), in the order given. Ranges must be sorted by offset, at or after `start`; they may overlap (the same
 * record listed twice). Bytes no later range needs are let go, so memory stays near the largest range plus a chunk.
 * Throws `onShort(at, upTo)`'s error when the stream ends before a range does; a stream error passes through.
 */
export async function* cutRanges(
  chunks: AsyncIterable<Uint8Array>, ranges: readonly ByteRange[], start: number, onShort: (at: number, upTo: number) => Error,
): AsyncGenerator<Uint8Array, void, undefined> {
  const it = chunks[Symbol.asyncIterator]();
  let buf: Uint8Array = new Uint8Array(0);
  let bufStart = start;
  try {
    for (const r of ranges) {
      if (r.offset < bufStart) throw new RangeError('ranges must be sorted by offset, at or after the stream start');
      // drop what lies before this range (nothing later needs it: ranges are sorted)
      if (r.offset >= bufStart + buf.length) {
        bufStart += buf.length;
        buf = new Uint8Array(0);
        // skip whole chunks before the range without copying them
        while (bufStart < r.offset) {
          const c = await it.next();
          if (c.done) throw onShort(bufStart, r.offset + r.length);
          if (bufStart + c.value.length <= r.offset) bufStart += c.value.length;
          else {
            buf = c.value.subarray(r.offset - bufStart);
            bufStart = r.offset;
          }
        }
      } else {
        buf = buf.subarray(r.offset - bufStart);
        bufStart = r.offset;
      }
      const need = r.length;
      if (buf.length < need) {
        const parts: Uint8Array[] = [buf];
        let have = buf.length;
        while (have < need) {
          const c = await it.next();
          if (c.done) throw onShort(bufStart + have, r.offset + r.length);
          parts.push(c.value);
          have += c.value.length;
        }
        buf = Buffer.concat(parts, have);
      }
      yield Uint8Array.prototype.slice.call(buf, 0, need);
    }
  } finally {
    await it.return?.(undefined);
  }
}
