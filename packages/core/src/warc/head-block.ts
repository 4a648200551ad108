import { HeaderList } from './header-list';

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20;
const HT = 0x09;

/** A header block (first line + `Name: value` fields) found in a byte buffer. */
export interface HeadBlock {
  /** The first line (version or status line), without its line ending. */
  firstLine: string;
  headers: HeaderList;
  /** Index just past the blank line that ends the block (or `limit` when `complete` is false). */
  end: number;
  /** False when `limit` was reached without a blank line (only returned when `allowUnterminated`). */
  complete: boolean;
  /** Lines that were neither `Name: value` nor a continuation; skipped. */
  malformedLines: number;
}

/** Why a head could not be found. */
export type HeadFailure = 'incomplete' | 'too-large' | 'empty';

/**
 * Finds and parses a header block starting at `start`: lines end with CRLF or a bare LF, a blank line
 * ends the block, lines starting with SP/HT continue the previous field (obs-fold, joined by one space).
 * `charset` is how field bytes become text: `utf8` for WARC heads (WARC 1.1 allows UTF-8), `latin1` for
 * HTTP heads (byte-preserving). Scans at most `maxBytes` bytes; every loop step consumes at least one
 * byte. Pure; never throws: returns a {@link HeadFailure} instead.
 */
export function parseHeadBlock(
  bytes: Uint8Array,
  start: number,
  limit: number,
  maxBytes: number,
  charset: 'utf8' | 'latin1',
  allowUnterminated = false,
): HeadBlock | HeadFailure {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stop = Math.min(limit, buf.length);
  let pos = start;
  let firstLine: string | undefined;
  const entries: Array<[string, string]> = [];
  let malformed = 0;

  const takeLine = (a: number, b: number): void => {
    if (firstLine === undefined) {
      firstLine = buf.toString(charset, a, b).trim();
      return;
    }
    const c0 = buf[a];
    if ((c0 === SP || c0 === HT) && entries.length > 0) {
      const prev = entries[entries.length - 1]!;
      const more = buf.toString(charset, a, b).trim();
      if (more) prev[1] = prev[1] ? `${prev[1]} ${more}` : more;
      return;
    }
    const rel = buf.subarray(a, b).indexOf(0x3a);
    const colon = a + rel;
    if (rel < 0) {
      malformed++;
      return;
    }
    const name = buf.toString(charset, a, colon).trim();
    if (!name) {
      malformed++;
      return;
    }
    entries.push([name, buf.toString(charset, colon + 1, b).trim()]);
  };

  for (;;) {
    if (pos >= stop) break;
    if (pos - start >= maxBytes) return 'too-large';
    let nl = buf.indexOf(LF, pos);
    if (nl >= stop) nl = -1;
    if (nl < 0) {
      if (stop - start > maxBytes) return 'too-large';
      if (!allowUnterminated) return 'incomplete';
      takeLine(pos, stop);
      pos = stop;
      break;
    }
    if (nl - start >= maxBytes) return 'too-large';
    const lineEnd = nl > pos && buf[nl - 1] === CR ? nl - 1 : nl;
    if (lineEnd === pos) {
      if (firstLine === undefined) return 'empty';
      return { firstLine, headers: new HeaderList(entries), end: nl + 1, complete: true, malformedLines: malformed };
    }
    takeLine(pos, lineEnd);
    pos = nl + 1;
  }
  if (!allowUnterminated) return 'incomplete';
  if (firstLine === undefined) return 'empty';
  return { firstLine, headers: new HeaderList(entries), end: stop, complete: false, malformedLines: malformed };
}
