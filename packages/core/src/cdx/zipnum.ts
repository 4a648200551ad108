import { isAscii } from 'node:buffer';
import { gunzipSync, gzipSync } from 'node:zlib';
import { FormatError } from '../errors';
import { cdxLineReason, parseCdxLineAt, SpecialCharFinder, type CdxLineReason, type CdxRecord } from './cdx-line';
import type { ClusterIdxEntry } from './cluster-idx';

/** Error code of a ZipNum block that does not inflate. */
export const CDX_BLOCK_ERROR = 'CCP_ERR_CDX_BLOCK';

/**
 * Inflates one ZipNum block (one gzip member; several concatenated members are inflated too).
 * gunzipSync was measured against inflateRawSync after a hand-parsed gzip header (no CRC check): within
 * noise, so the checked path is kept. The output chunk size follows the input (≈10× its size, 16 KB–1 MB):
 * zlib's default 16 KB chunks cost ~25% more on a 570 KB block (docs/cdx.md).
 * @throws FormatError `CCP_ERR_CDX_BLOCK` (cause: the zlib error) when the bytes are not valid gzip.
 */
export function inflateCdxBlock(gzBytes: Uint8Array): Buffer {
  try {
    return gunzipSync(gzBytes, { chunkSize: Math.min(1 << 20, Math.max(1 << 14, gzBytes.length * 10)) });
  } catch (err) {
    throw new FormatError(CDX_BLOCK_ERROR, 'CDX block does not inflate', { cause: err, detail: { bytes: gzBytes.length } });
  }
}

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
  parseInto(text, 0, out);
  out.lines = out.records.length + out.errors.length;
  return out;
}

/** Parses `text` into `out`, numbering lines after `lineNo`; returns the last line number used. */
function parseInto(text: string, lineNo: number, out: CdxBlockResult): number {
  const { records, errors } = out;
  let start = 0;
  const n = text.length;
  // Backslashes and control characters are found once per stretch, so that the per-line check costs nothing.
  const special = new SpecialCharFinder(text);
  while (start < n) {
    let nl = text.indexOf('\n', start);
    if (nl < 0) nl = n;
    lineNo++;
    if (nl > start && !(nl === start + 1 && text.charCodeAt(start) === 13)) {
      try {
        records.push(parseCdxLineAt(text, start, nl, lineNo, special.within(start, nl)));
      } catch (err) {
        errors.push({ lineNo, reason: cdxLineReason(err), error: err });
      }
    }
    start = nl + 1;
  }
  return lineNo;
}

/**
 * Text is decoded in pieces of about this many bytes, cut after a `\n`. V8 puts strings above ~128 KB in
 * large-object space, and decoding + slicing a 1.5 MB block as one string measured ~2× slower than in
 * 64 KB pieces (docs/cdx.md). Parsed records then also pin only their piece, not the whole block.
 */
const PIECE = 64 * 1024;

/**
 * Inflates one ZipNum block and parses its lines (see {@link parseCdxText}); line numbers count from the
 * block's first line. Pure.
 * @throws FormatError `CCP_ERR_CDX_BLOCK` only when the block itself does not inflate.
 */
export function parseCdxBlock(gzBytes: Uint8Array): CdxBlockResult {
  const bytes = inflateCdxBlock(gzBytes);
  const out: CdxBlockResult = { records: [], errors: [], lines: 0 };
  let lineNo = 0;
  let p = 0;
  while (p < bytes.length) {
    let e = p + PIECE < bytes.length ? bytes.indexOf(10, p + PIECE) : -1;
    e = e < 0 ? bytes.length : e + 1;
    // A cut after 0x0A never splits a UTF-8 sequence.
    lineNo = parseInto(decodeCdxText(bytes.subarray(p, e)), lineNo, out);
    p = e;
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

/** Options of {@link writeZipNumShard}. */
export interface WriteZipNumOptions {
  /** Shard file name written into the entries, e.g. `cdx-00000.gz`. */
  shard: string;
  /** Lines per block; Common Crawl uses 3000. */
  blockSize?: number;
  /** Number of the shard's first block; Common Crawl numbers from 1 and counts on across shards. */
  startBlockNo?: number;
  /** zlib level; default 6 (zlib's default). */
  level?: number;
}

/** Result of {@link writeZipNumShard}. */
export interface ZipNumShard {
  /** The shard file: one gzip member per block, each block's lines `\n`-terminated. */
  data: Buffer;
  /** One cluster.idx entry per block, keyed by the block's first line. */
  entries: ClusterIdxEntry[];
}

/**
 * Writes CDX lines (already sorted, as Common Crawl sorts them: byte order) as one ZipNum shard.
 * Every entry's surt/timestamp are the first two space-separated fields of its block's first line.
 * Pure and deterministic (gzip headers carry no time).
 * @throws FormatError `CCP_ERR_CDX_LINE` when a block's first line has no `SURT TIMESTAMP ` prefix;
 *   RangeError when blockSize < 1.
 */
export function writeZipNumShard(lines: readonly string[], options: WriteZipNumOptions): ZipNumShard {
  const blockSize = options.blockSize ?? 3000;
  if (!Number.isInteger(blockSize) || blockSize < 1) throw new RangeError('blockSize must be a positive integer');
  let blockNo = options.startBlockNo ?? 1;
  const members: Buffer[] = [];
  const entries: ClusterIdxEntry[] = [];
  let offset = 0;
  for (let i = 0; i < lines.length; i += blockSize) {
    const block = lines.slice(i, i + blockSize);
    const first = block[0]!;
    const sp1 = first.indexOf(' ');
    const sp2 = sp1 > 0 ? first.indexOf(' ', sp1 + 1) : -1;
    if (sp2 < 0) {
      throw new FormatError('CCP_ERR_CDX_LINE', 'bad CDX line: expected "SURT TIMESTAMP {json}"', {
        detail: { lineNo: i + 1, reason: 'shape', excerpt: first.slice(0, 200) },
      });
    }
    const member = gzipSync(`${block.join('\n')}\n`, { level: options.level ?? 6 });
    members.push(member);
    entries.push({
      surt: first.slice(0, sp1), timestamp: first.slice(sp1 + 1, sp2), shard: options.shard,
      offset, length: member.length, blockNo: blockNo++,
    });
    offset += member.length;
  }
  return { data: Buffer.concat(members, offset), entries };
}
