import { FormatError } from '../errors';

/**
 * One line of a ZipNum `cluster.idx`: the first key of one block of a `cdx-NNNNN.gz` shard and where that
 * block (one gzip member) lives. Common Crawl writes `SURT TIMESTAMP\tcdx-00000.gz\toffset\tlength\tblockno`;
 * `blockNo` is 1-based and counts on across shards (the first block of cdx-00001.gz follows the last of
 * cdx-00000.gz), as in the real cluster.idx head and cc-mirror-dev.
 */
export interface ClusterIdxEntry {
  /** SURT of the block's first CDX line. */
  surt: string;
  /** 14-digit capture timestamp of the block's first CDX line. */
  timestamp: string;
  /** Shard file name, e.g. `cdx-00000.gz` (any tab-free name: pywb's sample uses `zipnum`). */
  shard: string;
  /** Byte offset of the block's gzip member in the shard. */
  offset: number;
  /** Byte length of the block's gzip member. */
  length: number;
  /** Block sequence number as written (1-based, global across shards in Common Crawl). */
  blockNo: number;
}

/** Error code of a cluster.idx line that does not have the expected shape. */
export const CLUSTER_IDX_LINE_ERROR = 'CCP_ERR_CLUSTER_IDX_LINE';

function bad(reason: string, line: string, lineNo: number | undefined): FormatError {
  return new FormatError(CLUSTER_IDX_LINE_ERROR, `bad cluster.idx line: ${reason}`, {
    detail: { lineNo, reason, excerpt: line.slice(0, 200) },
  });
}

/** Parses a decimal field of digits only; -1 when it is not one (empty, sign, fraction, too long). */
export function parseDecimal(s: string, from = 0, to = s.length): number {
  const n = to - from;
  if (n <= 0 || n > 15) return -1;
  let v = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/**
 * Parses one cluster.idx line (a trailing `\r` is tolerated).
 * @param lineNo 1-based line number, only used in the error detail.
 * @throws FormatError `CCP_ERR_CLUSTER_IDX_LINE` (detail: lineNo, reason, excerpt) when the line is not
 *   `SURT TIMESTAMP\tSHARD\tOFFSET\tLENGTH\tBLOCKNO` with decimal numbers. Pure and idempotent.
 */
export function parseClusterIdxLine(line: string, lineNo?: number): ClusterIdxEntry {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line;
  const parts = text.split('\t');
  if (parts.length !== 5) throw bad(`expected 5 tab-separated fields, got ${parts.length}`, line, lineNo);
  const [key, shard, offsetS, lengthS, blockS] = parts as [string, string, string, string, string];
  const sp = key.lastIndexOf(' ');
  if (sp <= 0) throw bad('key is not "SURT TIMESTAMP"', line, lineNo);
  const timestamp = key.slice(sp + 1);
  if (timestamp.length !== 14 || parseDecimal(timestamp) < 0) throw bad('timestamp is not 14 digits', line, lineNo);
  if (shard.length === 0) throw bad('empty shard name', line, lineNo);
  const offset = parseDecimal(offsetS);
  const length = parseDecimal(lengthS);
  const blockNo = parseDecimal(blockS);
  if (offset < 0) throw bad('offset is not a decimal number', line, lineNo);
  if (length <= 0) throw bad('length is not a positive decimal number', line, lineNo);
  if (blockNo < 0) throw bad('blockno is not a decimal number', line, lineNo);
  return { surt: key.slice(0, sp), timestamp, shard, offset, length, blockNo };
}

/** Writes an entry exactly as Common Crawl does (no trailing newline). Inverse of {@link parseClusterIdxLine}. */
export function formatClusterIdxLine(e: ClusterIdxEntry): string {
  return `${e.surt} ${e.timestamp}\t${e.shard}\t${e.offset}\t${e.length}\t${e.blockNo}`;
}

/**
 * Parses a whole cluster.idx text (blank lines skipped).
 * @throws FormatError `CCP_ERR_CLUSTER_IDX_LINE` on the first bad line, with its 1-based number: an index
 *   with a bad line cannot be trusted for binary search, so this fails whole.
 */
export function parseClusterIdx(text: string): ClusterIdxEntry[] {
  const out: ClusterIdxEntry[] = [];
  let lineNo = 0;
  let start = 0;
  while (start < text.length) {
    let nl = text.indexOf('\n', start);
    if (nl < 0) nl = text.length;
    lineNo++;
    if (nl > start && !(nl === start + 1 && text.charCodeAt(start) === 13)) {
      out.push(parseClusterIdxLine(text.slice(start, nl), lineNo));
    }
    start = nl + 1;
  }
  return out;
}

/** The sort key of an entry as it appears in the index: `SURT TIMESTAMP`. */
export function clusterIdxKey(e: Pick<ClusterIdxEntry, 'surt' | 'timestamp'>): string {
  return `${e.surt} ${e.timestamp}`;
}

/** Half-open range `[start, end)` of indices into the entries array. Empty when `start === end`. */
export interface BlockRange {
  start: number;
  end: number;
}

/**
 * The blocks that can hold CDX lines whose key starts with `surtPrefix` (e.g. `com,example)/` or
 * `com,example,`), by binary search over entries sorted by `SURT TIMESTAMP` (as cluster.idx is).
 *
 * A block's first key is ≤ every key in it, so besides the blocks whose first key starts with the prefix,
 * the block just before the first key ≥ prefix can hold matches too. Comparison is by UTF-16 code units,
 * which equals Common Crawl's byte order for every SURT that has no character above U+FFFF.
 * Pure; never throws. An empty prefix selects every block.
 */
export function blocksForSurtPrefix(entries: readonly ClusterIdxEntry[], surtPrefix: string): BlockRange {
  const n = entries.length;
  if (n === 0) return { start: 0, end: 0 };
  if (surtPrefix.length === 0) return { start: 0, end: n };
  // lo = first index whose key >= prefix
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (clusterIdxKey(entries[mid]!) < surtPrefix) lo = mid + 1;
    else hi = mid;
  }
  const start = lo > 0 ? lo - 1 : 0;
  // end = first index >= lo whose key does not start with the prefix (it is then > every matching key)
  let a = lo;
  let b = n;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (clusterIdxKey(entries[mid]!).startsWith(surtPrefix)) a = mid + 1;
    else b = mid;
  }
  return { start, end: a };
}
