import { gunzipSync, gzipSync } from 'node:zlib';
import { FormatError } from '../errors';
import { parseCdxScan, type CdxBlockResult, type CdxLineGate } from './cdx-block';
import { gunzipChunkSize } from './gunzip-into';
import { BlockLineScan } from './line-scan';
import type { ClusterIdxEntry } from './cluster-idx';

export { decodeCdxText, parseCdxBytes, parseCdxText, type CdxBlockResult, type CdxLineGate, type CdxLineProblem } from './cdx-block';

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
    return gunzipSync(gzBytes, { chunkSize: gunzipChunkSize(gzBytes.length) });
  } catch (err) {
    throw blockError(err, gzBytes);
  }
}

const blockError = (err: unknown, gzBytes: Uint8Array): FormatError =>
  new FormatError(CDX_BLOCK_ERROR, 'CDX block does not inflate', { cause: err, detail: { bytes: gzBytes.length } });

/**
 * Inflates one ZipNum block and parses its lines (see {@link parseCdxText}); line numbers count from the
 * block's first line; with a `gate`, lines it drops are counted, not parsed into records (see {@link parseCdxBytes}). Pure.
 * @throws FormatError `CCP_ERR_CDX_BLOCK` only when the block itself does not inflate.
 */
export function parseCdxBlock(gzBytes: Uint8Array, gate?: CdxLineGate): CdxBlockResult {
  // inflated straight into the line scan's memory: no Buffer made for the block, no copy (gunzip-into.ts)
  let scan: BlockLineScan | null;
  try {
    scan = BlockLineScan.inflate(gzBytes);
  } catch (err) {
    throw blockError(err, gzBytes);
  }
  return parseCdxScan(scan ?? BlockLineScan.of(inflateCdxBlock(gzBytes)), gate);
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
