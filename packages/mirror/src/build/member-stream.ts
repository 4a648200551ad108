import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { inflateMember, isGzipAt, parseWarcRecordAt, skipBlank, WarcError, type WarcRecord } from '@ccpipe/core';

/** How a streamed walk ended. */
export type MemberWalkEnd =
  /** Every record sat alone in its own gzip member; all were passed to the callback. */
  | 'aligned'
  /** Some member holds several records, part of one, or the file is not gzip: use the whole-file walker. */
  | 'not_aligned'
  /** The file breaks off or is corrupt after the records already passed on. */
  | 'warc_error';

const WINDOW = 16 * 1024 * 1024;
const MAX_MEMBER_OUTPUT = 1024 * 1024 * 1024;

/**
 * Walks a gzip WARC written one member per record (Common Crawl's layout) without holding the file in
 * memory: reads a window (default 16 MiB, grown for a bigger member) at a time, inflates one member with core's `inflateMember`, and parses
 * its record with `parseWarcRecordAt`. `onRecord` gets each record with its member's offset/length.
 * Stops with `not_aligned` at the first member that is not exactly one record (the caller then falls
 * back to `iterateWarcFile` over the whole file). Synchronous reads: meant for a build tool.
 * Throws only fs errors; WARC faults end the walk with `warc_error`.
 */
export function walkRecordMembers(
  file: string,
  onRecord: (record: WarcRecord, offset: number, length: number) => void,
  windowBytes: number = WINDOW,
): MemberWalkEnd {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    let base = 0; // file offset of window[0]
    let window = Buffer.alloc(0);
    let pos = 0; // position in window
    const fill = (want: number): void => {
      // Keep window[pos..], then read until it holds `want` bytes or the file ends.
      const keep = window.subarray(pos);
      const next = Buffer.allocUnsafe(Math.max(want, keep.length));
      keep.copy(next, 0);
      let len = keep.length;
      while (len < next.length && base + pos + len < size) {
        const n = readSync(fd, next, len, next.length - len, base + pos + len);
        if (n === 0) break;
        len += n;
      }
      base += pos;
      pos = 0;
      window = next.subarray(0, len);
    };
    let want = Math.max(1024, windowBytes);
    const low = Math.min(64 * 1024, want >> 2);
    for (;;) {
      if (window.length - pos < low && base + window.length < size) fill(want);
      const at = skipBlank(window, pos);
      if (at >= window.length && base + window.length >= size) return 'aligned';
      if (at >= window.length) {
        pos = at;
        continue;
      }
      if (!isGzipAt(window, at)) return base + at === 0 ? 'not_aligned' : 'warc_error';
      let member;
      try {
        member = inflateMember(window, at, MAX_MEMBER_OUTPUT);
      } catch (err) {
        if (err instanceof WarcError && err.code === 'CCP_ERR_WARC_TRUNCATED' && base + window.length < size) {
          pos = at;
          want = Math.max(want, 2 * (window.length - pos));
          fill(want);
          continue;
        }
        if (err instanceof WarcError) return 'warc_error';
        throw err;
      }
      let parsed;
      try {
        parsed = parseWarcRecordAt(member.data, 0, { lenientHttp: true });
      } catch (err) {
        if (err instanceof WarcError && err.code === 'CCP_ERR_WARC_TRUNCATED') return 'not_aligned';
        if (err instanceof WarcError) return 'warc_error';
        throw err;
      }
      if (parsed === undefined || skipBlank(member.data, parsed.end) < member.data.length) return 'not_aligned';
      onRecord(parsed.record, base + at, member.length);
      pos = at + member.length;
    }
  } finally {
    closeSync(fd);
  }
}
