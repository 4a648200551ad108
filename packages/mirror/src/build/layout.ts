import * as path from 'node:path';

/** Common Crawl's crawl names, e.g. `CC-MAIN-2024-30`; anything path-safe is accepted for local use. */
const CRAWL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const SEGMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** True for a crawl name usable as one path segment (`CC-MAIN-2030-40`, no slashes or dots-only). */
export function isValidCrawlName(name: string): boolean {
  return CRAWL_NAME.test(name);
}

/** True for a segment name usable as one path segment (`1700003000.00`). */
export function isValidSegmentName(name: string): boolean {
  return SEGMENT_NAME.test(name);
}

/** `cc-index/collections/NAME/indexes` (relative, POSIX separators, as in cc-index.paths.gz). */
export function indexDir(crawl: string): string {
  return `cc-index/collections/${crawl}/indexes`;
}

/** `crawl-data/NAME/segments/SEG/warc/FILE` (relative, POSIX separators, as in CDX `filename`). */
export function warcRelPath(crawl: string, segment: string, file: string): string {
  return `crawl-data/${crawl}/segments/${segment}/warc/${file}`;
}

/** `cdx-00000.gz` for shard 0. */
export function shardName(i: number): string {
  return `cdx-${String(i).padStart(5, '0')}.gz`;
}

/**
 * The segment a WARC sits in when its path already follows CC's layout (`…/segments/SEG/warc/FILE`),
 * else undefined.
 */
export function segmentFromPath(file: string): string | undefined {
  const parts = file.split(/[\\/]+/);
  const n = parts.length;
  if (n >= 4 && parts[n - 2] === 'warc' && parts[n - 4] === 'segments') {
    const seg = parts[n - 3]!;
    return isValidSegmentName(seg) ? seg : undefined;
  }
  return undefined;
}

/**
 * A segment name in CC's style (`<epoch seconds>.<nn>`) derived from the first record's WARC-Date, so
 * that rebuilding the same input gives the same layout; `0000000000.00` when the date is unusable.
 */
export function segmentFromDate(warcDate: string | undefined): string {
  const ms = warcDate === undefined ? NaN : Date.parse(warcDate);
  return Number.isFinite(ms) && ms >= 0 ? `${Math.floor(ms / 1000)}.00` : '0000000000.00';
}

/** The mirror file name of an input WARC: its base name, with `.gz` added when it was uncompressed. */
export function mirrorWarcName(input: string, compressedOutput: boolean): string {
  const base = path.basename(input);
  return compressedOutput && !base.endsWith('.gz') ? `${base}.gz` : base;
}

/**
 * Splits `blocks` contiguous blocks over `shards` shards as evenly as possible, the first `blocks % shards`
 * shards taking one more (cc-mirror-dev's 20 blocks in 3 shards: 7, 7, 6). Returns, per shard, the half-open
 * range of block indices. Never returns an empty shard unless `blocks` is 0 (then one).
 */
export function shardRanges(blocks: number, shards: number): Array<[number, number]> {
  const n = Math.max(1, Math.min(Math.floor(shards), blocks));
  const base = Math.floor(blocks / n);
  const extra = blocks % n;
  const out: Array<[number, number]> = [];
  let start = 0;
  for (let i = 0; i < n; i++) {
    const end = start + base + (i < extra ? 1 : 0);
    out.push([start, end]);
    start = end;
  }
  return out;
}

/** Cuts `blocks` blocks into shards of `perShard` blocks, the last one possibly shorter. */
export function fixedShardRanges(blocks: number, perShard: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let b = 0; b < blocks; b += perShard) out.push([b, Math.min(blocks, b + perShard)]);
  return out.length === 0 ? [[0, 0]] : out;
}

/** One entry of collinfo.json, as index.commoncrawl.org serves it. */
export interface CollInfoEntry {
  id: string;
  name: string;
  timegate?: string;
  'cdx-api': string;
  from?: string;
  to?: string;
  [key: string]: unknown;
}

/**
 * Merges `entry` into an existing collinfo list: replaces the entry with the same id, else adds it;
 * keeps CC's order (newest crawl first: ids sorted descending). Pure.
 */
export function mergeCollInfo(existing: readonly CollInfoEntry[], entry: CollInfoEntry): CollInfoEntry[] {
  const out = existing.filter((e) => e.id !== entry.id);
  out.push(entry);
  return out.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** ISO second of a CDX timestamp, `20301110211651` → `2030-11-10T21:16:51`, as collinfo's from/to. */
export function isoOfTimestamp(ts: string): string {
  return `${ts.slice(0, 4)}-${ts.slice(4, 6)}-${ts.slice(6, 8)}T${ts.slice(8, 10)}:${ts.slice(10, 12)}:${ts.slice(12, 14)}`;
}
