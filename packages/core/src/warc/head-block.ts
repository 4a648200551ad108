import { HeaderList } from './header-list';

const LF = 0x0a;
const CR = 0x0d;
const SP = 0x20; // char codes, compared with charCodeAt
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
  // Find the blank line with native byte search; decode the head once, then split it in JS.
  let pos = start;
  let headEnd = -1; // end of the last header line (exclusive of its line break)
  let end = -1; // just past the blank line
  for (;;) {
    if (pos >= stop) break;
    if (pos - start >= maxBytes) return 'too-large';
    let nl = buf.indexOf(LF, pos);
    if (nl >= stop) nl = -1;
    if (nl < 0) {
      if (stop - start > maxBytes) return 'too-large';
      if (!allowUnterminated) return 'incomplete';
      pos = stop;
      break;
    }
    if (nl - start >= maxBytes) return 'too-large';
    const lineEnd = nl > pos && buf[nl - 1] === CR ? nl - 1 : nl;
    if (lineEnd === pos) {
      if (pos === start) return 'empty';
      headEnd = pos;
      end = nl + 1;
      break;
    }
    pos = nl + 1;
  }
  const terminated = end >= 0;
  if (!terminated) {
    if (!allowUnterminated) return 'incomplete';
    if (stop <= start) return 'empty';
    headEnd = stop;
    end = stop;
  }
  const lines = buf.toString(charset, start, headEnd).split('\n');
  let firstLine: string | undefined;
  const entries: Array<[string, string]> = [];
  let malformed = 0;
  for (const line of lines) {
    if (firstLine === undefined) {
      firstLine = line.trim();
      continue;
    }
    const c0 = line.charCodeAt(0);
    if (c0 === SP || c0 === HT) {
      const more = line.trim();
      const prev = entries[entries.length - 1];
      if (prev === undefined) malformed++;
      else if (more) prev[1] = prev[1] ? `${prev[1]} ${more}` : more;
      continue;
    }
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!name) {
      if (line.trim()) malformed++;
      continue;
    }
    entries.push([name, line.slice(colon + 1).trim()]);
  }
  return { firstLine: firstLine ?? '', headers: new HeaderList(entries), end, complete: terminated, malformedLines: malformed };
}
