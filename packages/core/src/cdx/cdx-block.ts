import { isAscii } from 'node:buffer';
import { cdxLineReason, parseCdxLineAt, SpecialCharFinder, type CdxLineReason, type CdxRecord } from './cdx-line';
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
  const { bytes } = scan;
  const { records } = out;
  const at = scan.values.subarray(1);
  const dropped = gate === undefined ? [] : gate.reasons.map(() => 0);
  let lineNo = 0;
  for (let s = 0, n = bytes.length; s < n; ) {
    lineNo++;
    const r = scan.line(s);
    const nl = r >> 1;
    if ((r & 1) === 1) {
      const d = gate === undefined ? -1 : gate.drop(bytes, at);
      if (d < 0) records.push(recordAt(bytes, s, nl, scan.values[0]!, at));
      else dropped[d]!++;
    } else if (nl > s && !(nl === s + 1 && bytes[s] === 13)) {
      // an empty line, or one of a lone `\r`, is skipped as parseCdxText skips it
      const line = bytes.toString('utf8', s, nl);
      parseOne(line, 0, line.length, lineNo, SPECIAL_CHAR.test(line), out);
    }
    s = nl + 1;
  }
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

/**
 * The record of the line `[s, nl)` of `bytes`, which {@link BlockLineScan} took: its first space at `sp1`, its values
 * where `at` says. The line is ASCII: one string for it (Latin-1), the values sliced from it.
 */
function recordAt(bytes: Buffer, s: number, nl: number, sp1: number, at: Int32Array): CdxRecord {
  const t = bytes.toString('latin1', s, nl);
  const status = at[2 * STATUS]!;
  const languages = at[2 * LANGUAGES]!;
  // the property order of newRecord (cdx-line.ts): one hidden class for all records
  return {
    surt: t.slice(0, sp1 - s), timestamp: t.slice(sp1 + 1 - s, sp1 + 15 - s), url: valueOf(t, at, 0, s)!, mime: valueOf(t, at, 1, s),
    mimeDetected: valueOf(t, at, 2, s), status: status >= 0 && at[2 * STATUS + 1]! - status === 3 ? statusAt(t, status - s) : valueOf(t, at, STATUS, s),
    digest: valueOf(t, at, 4, s), length: digitsAt(bytes, at, LENGTH), offset: digitsAt(bytes, at, OFFSET), filename: valueOf(t, at, FILENAME, s)!,
    charset: valueOf(t, at, 9, s), languages: languages >= 0 ? languagesOf(valueOf(t, at, LANGUAGES, s)!) : [], redirect: valueOf(t, at, 8, s),
    encoding: valueOf(t, at, 11, s), truncated: valueOf(t, at, 12, s), extra: undefined, keyOrder: undefined,
  };
}

/** Key `k`'s value (1–15 digits) as a number. */
function digitsAt(u8: Uint8Array, at: Int32Array, k: number): number {
  let v = 0;
  for (let i = at[2 * k]!, end = at[2 * k + 1]!; i < end; i++) v = v * 10 + u8[i]! - 48;
  return v;
}

/** Key `k`'s value in line `t`, which starts at byte `s`, or undefined when the line has none. */
function valueOf(t: string, at: Int32Array, k: number, s: number): string | undefined {
  const vs = at[2 * k]!;
  return vs < 0 ? undefined : t.slice(vs - s, at[2 * k + 1]! - s);
}
