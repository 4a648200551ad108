import { isAscii } from 'node:buffer';
import { CDX_FIELD_ORDER, cdxLineReason, parseCdxLineAt, SpecialCharFinder, type CdxLineReason, type CdxRecord } from './cdx-line';
import { languagesOf, statusAt } from './cdx-values';
import { BlockLineScan } from './line-scan';

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
  /** Non-empty lines seen (records + errors + the lines a gate dropped). */
  lines: number;
  /** With a {@link CdxLineGate}: lines it dropped, by reason (reasons with none left out); no record was made for them. */
  dropped?: Record<string, number>;
}

/**
 * A record filter's rules that can be decided from a line's raw bytes, asked before its record is made: most lines of
 * a block are dropped (79% by the default filter), and making their records was most of the parse (docs/cdx.md).
 * The gate must give exactly the filter's first failing rule for every record it names a reason for: the caller then
 * counts that reason and never sees the record. `-1` (not sure, or kept by these rules) makes the record as usual.
 */
export interface CdxLineGate {
  /** The reasons {@link drop} can give, by index. */
  readonly reasons: readonly string[];
  /**
   * The index in {@link reasons} of why the record of this line is dropped, or -1. `at[2k]` and `at[2k + 1]` are the
   * start and end (exclusive) offsets in `bytes` of the value of `CDX_FIELD_ORDER[k]`; `at[2k]` is -1 when the line
   * has no such key. Asked only of lines whose record is sure to parse, ASCII, with no escape in any value, so a
   * value's bytes are its string's char codes.
   */
  drop(bytes: Uint8Array, at: Int32Array): number;
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
 * {@link parseCdxText} on inflated bytes (UTF-8), the block parser's entry point: gives the same result as
 * `parseCdxText(bytes.toString('utf8'))`. A line in Common Crawl's layout (all of CC's) takes the fast path: a
 * WebAssembly scan finds where its values are ({@link BlockLineScan}), and only a line that becomes a record is decoded;
 * any other line (escapes, control or non-ASCII bytes, another layout, an error) is decoded as UTF-8 and goes through
 * {@link parseCdxLineAt}. Pure.
 *
 * With a `gate`, a line the fast path takes is first put to the gate, and a line it drops is counted in `dropped`
 * instead of becoming a record; lines the fast path does not take are all parsed (a gate never decides for a bad line).
 */
export function parseCdxBytes(bytes: Buffer, gate?: CdxLineGate): CdxBlockResult {
  return parseCdxScan(BlockLineScan.of(bytes), gate);
}

/**
 * {@link parseCdxBytes} of the block a scan holds (`scan.bytes`); zipnum's parseCdxBlock hands it one inflated straight
 * into the scan's memory. Not exported from the package.
 */
export function parseCdxScan(scan: BlockLineScan, gate?: CdxLineGate): CdxBlockResult {
  const out: CdxBlockResult = { records: [], errors: [], lines: 0 };
  const { bytes, values } = scan;
  const { records } = out;
  const at = values.subarray(1);
  const dropped = gate === undefined ? [] : gate.reasons.map(() => 0);
  // the lines taken and kept wait in `rows` (ROW numbers each: start, end, then `values`) until a line that is not
  // taken, or the block's end, so that adjacent ones are decoded together (recordsOf)
  let rows = keptRows;
  let o = 0;
  let lineNo = 0;
  for (let s = 0, n = bytes.length; s < n; ) {
    lineNo++;
    const r = scan.line(s);
    const nl = r >> 1;
    if ((r & 1) === 1) {
      const d = gate === undefined ? -1 : gate.drop(bytes, at);
      if (d < 0) {
        if (o + ROW > rows.length) rows = keptRows = grown(rows, o);
        rows[o] = s;
        rows[o + 1] = nl;
        for (let i = 0; i < VALUES; i++) rows[o + 2 + i] = values[i]!;
        o += ROW;
      } else dropped[d]!++;
    } else if (nl > s && !(nl === s + 1 && bytes[s] === 13)) {
      // an empty line, or one of a lone `\r`, is skipped as parseCdxText skips it
      recordsOf(bytes, rows, o, records);
      o = 0;
      const line = bytes.toString('utf8', s, nl);
      parseOne(line, 0, line.length, lineNo, SPECIAL_CHAR.test(line), out);
    }
    s = nl + 1;
  }
  recordsOf(bytes, rows, o, records);
  out.lines = out.records.length + out.errors.length;
  if (gate !== undefined) {
    out.dropped = {};
    gate.reasons.forEach((reason, i) => {
      const k = dropped[i]!;
      if (k > 0) out.dropped![reason] = (out.dropped![reason] ?? 0) + k;
      out.lines += k;
    });
  }
  return out;
}

/** A backslash or a control character other than `\n`: what `hasSpecial` of {@link parseCdxLineAt} tells. */
const SPECIAL_CHAR = /[\x00-\x09\x0b-\x1f\\]/;

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

const [STATUS, LENGTH, OFFSET, FILENAME, LANGUAGES] = [3, 5, 6, 7, 10];
/** A scan's answer for a line: its first space, then start and end of each key's value. */
const VALUES = 1 + 2 * CDX_FIELD_ORDER.length;
/** A kept line in `rows`: its start and end (its `\n`), then its {@link VALUES}. */
const ROW = 2 + VALUES;
/** Decoded together, adjacent kept lines make one string of at most this many bytes (a regular heap object). */
const MAX_RUN = 1 << 15;

/** The rows of kept lines, used again from block to block (grown to the most kept lines of a block). */
let keptRows: Int32Array = new Int32Array(ROW * 1024);

function grown(rows: Int32Array, used: number): Int32Array {
  const more = new Int32Array(rows.length * 2);
  more.set(rows.subarray(0, used));
  return more;
}

/**
 * The records of the kept lines in `rows[0, end)`, pushed in order. A run of adjacent lines (each starting where the
 * one before ended) is decoded as one string, and their values are sliced from it: a decode costs ≈95 ns a call plus
 * ≈0.08 ns a byte, and on real blocks kept lines come in runs (0.46 decodes a kept line on the bench's blocks).
 */
function recordsOf(bytes: Buffer, rows: Int32Array, end: number, records: CdxRecord[]): void {
  for (let o = 0; o < end; ) {
    const from = rows[o]!;
    let last = o;
    while (last + ROW < end && rows[last + ROW]! === rows[last + 1]! + 1 && rows[last + ROW + 1]! - from <= MAX_RUN) last += ROW;
    const t = bytes.toString('latin1', from, rows[last + 1]!);
    for (; o <= last; o += ROW) records.push(recordAt(bytes, t, from, rows, o));
  }
}

/**
 * The record of the kept line at `rows[o]`, which {@link BlockLineScan} took (its values where the row says). The line
 * is ASCII and a part of `t`, which holds the bytes from `from` on (Latin-1); its values are sliced from `t`.
 */
function recordAt(bytes: Buffer, t: string, from: number, rows: Int32Array, o: number): CdxRecord {
  const s = rows[o]! - from;
  const sp1 = rows[o + 2]! - from;
  const v = o + 3; // the row's values: start and end of key k's at v + 2k, v + 2k + 1
  const status = rows[v + 2 * STATUS]!;
  const languages = rows[v + 2 * LANGUAGES]!;
  // the property order of newRecord (cdx-line.ts): one hidden class for all records
  return {
    surt: t.slice(s, sp1), timestamp: t.slice(sp1 + 1, sp1 + 15), url: valueOf(t, rows, v, 0, from)!, mime: valueOf(t, rows, v, 1, from),
    mimeDetected: valueOf(t, rows, v, 2, from),
    status: status >= 0 && rows[v + 2 * STATUS + 1]! - status === 3 ? statusAt(t, status - from) : valueOf(t, rows, v, STATUS, from),
    digest: valueOf(t, rows, v, 4, from), length: digitsAt(bytes, rows, v, LENGTH), offset: digitsAt(bytes, rows, v, OFFSET),
    filename: valueOf(t, rows, v, FILENAME, from)!, charset: valueOf(t, rows, v, 9, from),
    languages: languages >= 0 ? languagesOf(valueOf(t, rows, v, LANGUAGES, from)!) : [], redirect: valueOf(t, rows, v, 8, from),
    encoding: valueOf(t, rows, v, 11, from), truncated: valueOf(t, rows, v, 12, from), extra: undefined, keyOrder: undefined,
  };
}

/** Key `k`'s value (1–15 digits) in the row whose values start at `rows[v]`, as a number. */
function digitsAt(u8: Uint8Array, rows: Int32Array, v: number, k: number): number {
  let n = 0;
  for (let p = rows[v + 2 * k]!, end = rows[v + 2 * k + 1]!; p < end; p++) n = n * 10 + u8[p]! - 48;
  return n;
}

/** Key `k`'s value in the row whose values start at `rows[v]`, sliced from `t` (which starts at byte `from`); undefined when the line has none. */
function valueOf(t: string, rows: Int32Array, v: number, k: number, from: number): string | undefined {
  const vs = rows[v + 2 * k]!;
  return vs < 0 ? undefined : t.slice(vs - from, rows[v + 2 * k + 1]! - from);
}
