import { isAscii } from 'node:buffer';
import { cdxLineReason, CDX_FIELD_ORDER, parseCdxLineAt, SpecialCharFinder, type CdxLineReason, type CdxRecord } from './cdx-line';
import { languagesOf, statusAt } from './cdx-values';
import { SpecialByteFinder } from './special-bytes';

/** A line of a block that did not parse: it is skipped and reported, never fatal to the block. */
export interface CdxLineProblem {
  /** 1-based line number within the block. */
  lineNo: number;
  reason: CdxLineReason | 'unexpected';
  /** The FormatError from {@link parseCdxLine} (detail has an excerpt of the line). */
  error: unknown;
}

/** Result of parsing one block. */
export interface CdxBlockResult {
  records: CdxRecord[];
  errors: CdxLineProblem[];
  /** Non-empty lines seen (records + errors). */
  lines: number;
}

/**
 * Parses the text of a block, one CDX line per `\n` (a `\r` before it is tolerated, empty lines skipped).
 * A bad line is recorded in `errors` with its reason and never fails the rest. Pure.
 */
export function parseCdxText(text: string): CdxBlockResult {
  const out: CdxBlockResult = { records: [], errors: [], lines: 0 };
  parseTextInto(text, 0, out);
  out.lines = out.records.length + out.errors.length;
  return out;
}

/**
 * Inflated bytes are decoded in pieces of about this many bytes, cut after a `\n`. V8 puts strings above ~128 KB in
 * large-object space, and decoding + slicing a 1.5 MB block as one string measured ~2× slower than in 64 KB pieces
 * (docs/cdx.md). Parsed records then also pin only their piece, not the whole block.
 */
const PIECE = 64 * 1024;

/**
 * {@link parseCdxText} on inflated bytes (UTF-8), the block parser's entry point: gives the same result as
 * `parseCdxText(bytes.toString('utf8'))`. ASCII pieces (all of Common Crawl) take a fast path that reads keys and
 * numbers from the bytes and slices values from the decoded piece; a line it does not take (escapes, control
 * characters, another layout, an error) and every non-ASCII piece go through {@link parseCdxLineAt}. Pure.
 */
export function parseCdxBytes(bytes: Buffer): CdxBlockResult {
  const out: CdxBlockResult = { records: [], errors: [], lines: 0 };
  // All pieces are scanned and decoded before any line is parsed: parsing piece after piece left ≈ 3× as much young
  // data alive at each scavenge and doubled its cost (docs/cdx.md). Scan and decode go piece by piece, while the
  // piece is in the CPU cache; a cut after 0x0A never splits a UTF-8 sequence.
  const pieces: Piece[] = [];
  for (let p = 0; p < bytes.length; ) {
    let e = p + PIECE < bytes.length ? bytes.indexOf(10, p + PIECE) : -1;
    e = e < 0 ? bytes.length : e + 1;
    const piece = bytes.subarray(p, e);
    const special = SpecialByteFinder.of(piece);
    pieces.push({ p, e, special, text: special !== null ? bytes.toString('latin1', p, e) : piece.toString('utf8') });
    p = e;
  }
  const scanner = new LineScanner(bytes);
  let lineNo = 0;
  for (const { p, e, special, text } of pieces) {
    lineNo = special !== null ? parseAsciiInto(scanner, special, text, p, e, lineNo, out) : parseTextInto(text, lineNo, out);
  }
  out.lines = out.records.length + out.errors.length;
  return out;
}

/**
 * Decodes inflated CDX bytes as UTF-8. Common Crawl's CDX is ASCII (JSON written with escapes), and for
 * ASCII an ASCII check plus a Latin-1 copy is cheaper than the UTF-8 decoder (docs/cdx.md); any other text
 * takes the UTF-8 path. Pure.
 */
export function decodeCdxText(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

function parseOne(text: string, start: number, end: number, lineNo: number, hasSpecial: boolean, out: CdxBlockResult): void {
  try {
    out.records.push(parseCdxLineAt(text, start, end, lineNo, hasSpecial));
  } catch (err) {
    out.errors.push({ lineNo, reason: cdxLineReason(err), error: err });
  }
}

/** Parses `text` into `out`, numbering lines after `lineNo`; returns the last line number used. */
function parseTextInto(text: string, lineNo: number, out: CdxBlockResult): number {
  let start = 0;
  const n = text.length;
  // Backslashes and control characters are found once per stretch, so that the per-line check costs nothing.
  const special = new SpecialCharFinder(text);
  while (start < n) {
    let nl = text.indexOf('\n', start);
    if (nl < 0) nl = n;
    lineNo++;
    if (nl > start && !(nl === start + 1 && text.charCodeAt(start) === 13)) parseOne(text, start, nl, lineNo, special.within(start, nl), out);
    start = nl + 1;
  }
  return lineNo;
}

/** A stretch of a block decoded as one string: bytes `[p, e)`; `special` is null when they are not ASCII. */
interface Piece {
  p: number;
  e: number;
  special: SpecialByteFinder | null;
  text: string;
}

/** Parses the ASCII bytes `[p, e)` of the scanner's block (`text`, decoded) into `out`; like {@link parseTextInto}. */
function parseAsciiInto(scanner: LineScanner, special: SpecialByteFinder, text: string, p: number, e: number, lineNo: number, out: CdxBlockResult): number {
  scanner.setPiece(text, p);
  const { records } = out;
  for (let s = p; s < e; ) {
    let nl = text.indexOf('\n', s - p);
    nl = nl < 0 ? e : nl + p;
    lineNo++;
    if (nl > s) {
      // a CRLF line's `\r` is special: such lines, and empty `\r` lines, take the general path
      const flagged = special.within(s - p, nl - p);
      const rec = flagged ? null : scanner.line(s, nl);
      if (rec !== null) records.push(rec);
      else if (!(nl === s + 1 && text.charCodeAt(s - p) === 13)) parseOne(text, s - p, nl - p, lineNo, flagged, out);
    }
    s = nl + 1;
  }
  return lineNo;
}

const N_KEYS = CDX_FIELD_ORDER.length;
const [STATUS, LENGTH, OFFSET] = [3, 5, 6];

// What precedes each key's value in Common Crawl's layout: `{"url": "` for the first key, `, "KEY": "` for the others
// (9 to 20 bytes). Each pattern is compared 8 bytes at a time, read as little-endian float64 with a DataView (the last
// read overlapping the one before when the length is not a multiple of 8): 2–3 compares a key instead of the 8–18
// charCodeAt of the line parser (int32 words measured ≈15% slower on the scan, bytes ≈25%). Comparing doubles is
// comparing bytes here: two doubles are === exactly when their bits are equal, except NaN (never equal) and ±0 (equal
// with different bits); a pattern's 8 ASCII bytes are neither, so a NaN read never matches, as it should not.
const PATTERN_LEN: number[] = [];
const WORD_AT: number[] = [];
const WORD: number[] = [];
const FIRST_WORD: number[] = [0];
for (const [i, key] of CDX_FIELD_ORDER.entries()) {
  const b = Buffer.from(`${i === 0 ? '{' : ', '}"${key}": "`, 'latin1');
  PATTERN_LEN.push(b.length);
  for (let o = 0; o < b.length; o += 8) {
    const at = Math.min(o, b.length - 8);
    WORD_AT.push(at);
    WORD.push(b.readDoubleLE(at));
  }
  FIRST_WORD.push(WORD.length);
}

/**
 * True when the 4 ASCII bytes at `at` are all digits, tested at once: a byte below '0' sets its top bit in w - '0000',
 * one above '9' in '9999' - w; the lowest such byte is never disturbed by a borrow, and digits cause none.
 */
function digits4(dv: DataView, at: number): boolean {
  const w = dv.getInt32(at, true);
  return ((w - 0x30303030) | (0x39393939 - w)) & 0x80808080 ? false : true;
}

/**
 * The fast path over one ASCII block: byte offsets in the block are text offsets in the current piece plus `base`.
 * `line` returns a record only when the line is exactly in Common Crawl's layout (the keys of CDX_FIELD_ORDER in that
 * order, `", "` and `": "` separators, decimal length/offset, url/filename/length/offset present, nothing after `}`)
 * and the caller has checked it holds no backslash or control byte; otherwise null, and the caller takes the general
 * path, which gives the same record for any line this one takes (cdx-block.test.ts) and the typed error for bad ones.
 */
class LineScanner {
  private readonly dv: DataView;
  private text = '';
  private base = 0;

  constructor(private readonly bytes: Buffer) {
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  }

  /** Makes `text`, the bytes from `base` on, the current piece. */
  setPiece(text: string, base: number): void {
    this.text = text;
    this.base = base;
  }

  line(s: number, end: number): CdxRecord | null {
    const { bytes: u8, text: t, base } = this;
    const sp1 = t.indexOf(' ', s - base) + base;
    if (sp1 <= s || sp1 + 17 >= end) return null;
    if (!digits4(this.dv, sp1 + 1) || !digits4(this.dv, sp1 + 5) || !digits4(this.dv, sp1 + 9) || !digits4(this.dv, sp1 + 11)) return null;
    if (u8[sp1 + 15] !== 32) return null;
    const close = end - 1;
    if (u8[close] !== 125) return null;
    let url = '';
    let filename = '';
    let length = -1;
    let offset = -1;
    let mime: string | undefined;
    let mimeDetected: string | undefined;
    let status: string | undefined;
    let digest: string | undefined;
    let redirect: string | undefined;
    let charset: string | undefined;
    let languages: string[] | undefined;
    let encoding: string | undefined;
    let truncated: string | undefined;
    let p = sp1 + 16; // the `{`, then each `,` before a key
    let k = 0;
    for (;;) {
      while (k < N_KEYS && !this.patternAt(p, k, close)) k++;
      if (k === N_KEYS) return null;
      const vs = p + PATTERN_LEN[k]!;
      let ve = vs;
      if (k === LENGTH || k === OFFSET) {
        let v = 0;
        for (; ve < close; ve++) {
          const c = u8[ve]! - 48;
          if (c < 0 || c > 9) break;
          v = v * 10 + c;
        }
        if (ve === vs || ve - vs > 15 || u8[ve] !== 34) return null;
        if (k === LENGTH) length = v;
        else offset = v;
      } else {
        ve = t.indexOf('"', vs - base) + base;
        if (ve < vs || ve >= close) return null;
        const a = vs - base;
        const b = ve - base;
        switch (k) {
          case 0: url = t.slice(a, b); break;
          case 1: mime = t.slice(a, b); break;
          case 2: mimeDetected = t.slice(a, b); break;
          case STATUS: status = b - a === 3 ? statusAt(t, a) : t.slice(a, b); break;
          case 4: digest = t.slice(a, b); break;
          case 7: filename = t.slice(a, b); break;
          case 8: redirect = t.slice(a, b); break;
          case 9: charset = t.slice(a, b); break;
          case 10: languages = languagesOf(t.slice(a, b)); break;
          case 11: encoding = t.slice(a, b); break;
          default: truncated = t.slice(a, b); break;
        }
      }
      k++;
      p = ve + 1;
      if (p === close) break;
    }
    if (url.length === 0 || filename.length === 0 || length < 0 || offset < 0) return null;
    // the property order of newRecord (cdx-line.ts): one hidden class for all records
    return {
      surt: t.slice(s - base, sp1 - base), timestamp: t.slice(sp1 + 1 - base, sp1 + 15 - base), url, mime, mimeDetected, status,
      digest, length, offset, filename, charset, languages: languages ?? [], redirect, encoding, truncated, extra: undefined,
      keyOrder: undefined,
    };
  }

  /** True when key `k`'s pattern is at `at` and a value can follow before `close`. */
  private patternAt(at: number, k: number, close: number): boolean {
    if (at + PATTERN_LEN[k]! >= close) return false;
    const dv = this.dv;
    for (let i = FIRST_WORD[k]!, last = FIRST_WORD[k + 1]!; i < last; i++) {
      if (dv.getFloat64(at + WORD_AT[i]!, true) !== WORD[i]) return false;
    }
    return true;
  }
}
