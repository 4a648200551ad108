import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { formatCdxLine, formatClusterIdxLine, writeZipNumShard, type ClusterIdxEntry } from '@ccpipe/core';
import { MirrorError } from '../mirror-error';
import { indexWarcFile, type WarcIndexResult } from './index-warc-file';
import {
  fixedShardRanges, indexDir, isoOfTimestamp, isValidCrawlName, isValidSegmentName, mergeCollInfo, shardName, shardRanges,
  type CollInfoEntry,
} from './layout';

/** Options of {@link buildMirror}. */
export interface BuildMirrorOptions {
  /** Crawl name, e.g. `CC-MAIN-2030-40` (one path segment). */
  crawl: string;
  /** Mirror root; created if missing. Other crawls already in it are kept. */
  out: string;
  /** WARC files to index: gzip with one member per record, one gzip stream, or uncompressed. */
  warcs: string[];
  /** CDX lines per ZipNum block (CC: 3000). */
  blockSize?: number;
  /** Number of `cdx-NNNNN.gz` shards the blocks are spread over evenly (CC: 300). Default 1. */
  shards?: number;
  /** Instead of `shards`: blocks per shard (every shard full but the last). */
  blocksPerShard?: number;
  /** Segment for WARCs whose path does not say (`…/segments/SEG/warc/…`); default derived from WARC-Date. */
  segment?: string;
  /** collinfo.json `name`; default `Local mirror of NAME`. */
  displayName?: string;
  /** collinfo.json `cdx-api` is `${cdxApiBase}/NAME-index`; default `http://localhost`. */
  cdxApiBase?: string;
  /** Identify languages of HTML pages (the slowest step). Default true. */
  languages?: boolean;
}

/** What {@link buildMirror} did. */
export interface BuildMirrorSummary {
  crawl: string;
  warcFiles: number;
  /** Records read over all files. */
  records: number;
  cdxLines: number;
  blocks: number;
  shards: number;
  /** WARCs rewritten with one gzip member per record (they were one stream or uncompressed). */
  rewrittenWarcs: number;
  /** Records that got no CDX line, by reason (request/metadata/warcinfo are `not_capture`). */
  skipped: Record<string, number>;
  /** WARC paths relative to `out`, as listed in warc.paths.gz. */
  warcPaths: string[];
}

/**
 * Indexes WARC files into Common Crawl's layout under `out`:
 * `crawl-data/NAME/segments/SEG/warc/FILE` (copied, or rewritten one gzip member per record),
 * `cc-index/collections/NAME/indexes/{cluster.idx,cdx-NNNNN.gz}` (ZipNum, lines sorted in byte order,
 * i.e. by SURT then timestamp), `crawl-data/NAME/{warc,cc-index}.paths.gz`, and `collinfo.json` (merged).
 *
 * Rebuilding a crawl replaces its index and listed WARCs (idempotent for the same input); every file
 * is written to a temporary name and renamed. A gzip WARC with one member per record (CC's layout) is
 * streamed in 16 MiB windows; any other WARC is read whole into memory (the core walker takes bytes).
 * CDX lines of the crawl are held in memory until sorted.
 * @throws MirrorError CCP_ERR_MIRROR_OPTION (bad crawl/segment name, blockSize, shards, blocksPerShard, or both),
 *   CCP_ERR_MIRROR_PATH_CLASH (two inputs with one mirror path), CCP_ERR_MIRROR_COLLINFO (unreadable
 *   collinfo.json); fs errors. A malformed WARC does not throw: its records up to the fault are kept.
 */
export async function buildMirror(opts: BuildMirrorOptions): Promise<BuildMirrorSummary> {
  const { crawl, out } = opts;
  if (!isValidCrawlName(crawl)) throw new MirrorError('CCP_ERR_MIRROR_OPTION', 'invalid crawl name (use e.g. CC-MAIN-2030-40)', { detail: { crawl } });
  if (opts.segment !== undefined && !isValidSegmentName(opts.segment)) {
    throw new MirrorError('CCP_ERR_MIRROR_OPTION', 'invalid segment name', { detail: { segment: opts.segment } });
  }
  const blockSize = opts.blockSize ?? 3000;
  const shardCount = opts.shards ?? 1;
  if (!Number.isInteger(blockSize) || blockSize < 1) throw new MirrorError('CCP_ERR_MIRROR_OPTION', 'blockSize must be a positive integer');
  if (!Number.isInteger(shardCount) || shardCount < 1) throw new MirrorError('CCP_ERR_MIRROR_OPTION', 'shards must be a positive integer');
  const perShard = opts.blocksPerShard;
  if (perShard !== undefined && (!Number.isInteger(perShard) || perShard < 1)) {
    throw new MirrorError('CCP_ERR_MIRROR_OPTION', 'blocksPerShard must be a positive integer');
  }
  if (perShard !== undefined && opts.shards !== undefined) throw new MirrorError('CCP_ERR_MIRROR_OPTION', 'give shards or blocksPerShard, not both');
  // every input is there before anything is written: a mistyped path leaves no empty mirror behind
  // (the message names the file: with several inputs, 'an input WARC' alone left the user to find which)
  for (const warc of opts.warcs) {
    const st = await fsp.stat(warc).then((s) => ({ s }), (err: NodeJS.ErrnoException) => ({ err }));
    if ('err' in st || !st.s.isFile()) {
      const why = 'err' in st ? (st.err.code === 'ENOENT' ? 'does not exist' : `cannot be read (${st.err.code ?? st.err.message})`)
        : st.s.isDirectory() ? 'is a directory' : 'is not a regular file';
      throw new MirrorError('CCP_ERR_MIRROR_OPTION', `input WARC ${warc} ${why}`, { detail: { warc } });
    }
  }
  await fsp.mkdir(out, { recursive: true });

  const lines: string[] = [];
  const results: WarcIndexResult[] = [];
  const skipped: Record<string, number> = {};
  const seen = new Set<string>();
  for (const warc of opts.warcs) {
    const r = await indexWarcFile({
      input: warc, out, crawl, ...(opts.segment === undefined ? {} : { segment: opts.segment }),
      languages: opts.languages !== false,
    });
    if (seen.has(r.relPath)) throw new MirrorError('CCP_ERR_MIRROR_PATH_CLASH', 'two input WARCs map to the same mirror path', { detail: { relPath: r.relPath } });
    seen.add(r.relPath);
    results.push(r);
    for (const rec of r.cdx) lines.push(formatCdxLine(rec));
    for (const [k, v] of Object.entries(r.skipped)) skipped[k] = (skipped[k] ?? 0) + v;
  }
  lines.sort(compareBytes);

  const idxRel = indexDir(crawl);
  const idxAbs = path.join(out, ...idxRel.split('/'));
  await fsp.rm(idxAbs, { recursive: true, force: true });
  await fsp.mkdir(idxAbs, { recursive: true });
  const blocks = Math.ceil(lines.length / blockSize);
  const ranges = perShard === undefined ? shardRanges(blocks, shardCount) : fixedShardRanges(blocks, perShard);
  const entries: ClusterIdxEntry[] = [];
  const indexPaths: string[] = [];
  for (let i = 0; i < ranges.length; i++) {
    const [b0, b1] = ranges[i]!;
    const shard = writeZipNumShard(lines.slice(b0 * blockSize, b1 * blockSize), { shard: shardName(i), blockSize, startBlockNo: b0 + 1 });
    await writeAtomic(path.join(idxAbs, shardName(i)), shard.data);
    entries.push(...shard.entries);
    indexPaths.push(`${idxRel}/${shardName(i)}`);
  }
  const clusterIdx = entries.map((e) => `${formatClusterIdxLine(e)}\n`).join('');
  await writeAtomic(path.join(idxAbs, 'cluster.idx'), Buffer.from(clusterIdx, 'utf8'));
  indexPaths.push(`${idxRel}/cluster.idx`);

  const crawlDir = path.join(out, 'crawl-data', crawl);
  await fsp.mkdir(crawlDir, { recursive: true });
  const warcPaths = results.map((r) => r.relPath).sort();
  await writeAtomic(path.join(crawlDir, 'warc.paths.gz'), gzipSync(warcPaths.map((p) => `${p}\n`).join('')));
  await writeAtomic(path.join(crawlDir, 'cc-index.paths.gz'), gzipSync(indexPaths.map((p) => `${p}\n`).join('')));

  await updateCollInfo(out, collInfoEntry(opts, results));
  return {
    crawl,
    warcFiles: results.length,
    records: results.reduce((n, r) => n + r.records, 0),
    cdxLines: lines.length,
    blocks: entries.length,
    shards: ranges.length,
    rewrittenWarcs: results.filter((r) => r.rewritten).length,
    skipped,
    warcPaths,
  };
}

function collInfoEntry(opts: BuildMirrorOptions, results: WarcIndexResult[]): CollInfoEntry {
  const base = (opts.cdxApiBase ?? 'http://localhost').replace(/\/+$/, '');
  const stamps = results.flatMap((r) => (r.minTimestamp === undefined ? [] : [r.minTimestamp, r.maxTimestamp!])).sort();
  const entry: CollInfoEntry = {
    'cdx-api': `${base}/${opts.crawl}-index`,
    id: opts.crawl,
    name: opts.displayName ?? `Local mirror of ${opts.crawl}`,
    timegate: `${base}/${opts.crawl}/`,
  };
  if (stamps.length > 0) {
    entry.from = isoOfTimestamp(stamps[0]!);
    entry.to = isoOfTimestamp(stamps[stamps.length - 1]!);
  }
  return sortKeys(entry);
}

function sortKeys(e: CollInfoEntry): CollInfoEntry {
  return Object.fromEntries(Object.entries(e).sort(([a], [b]) => (a < b ? -1 : 1))) as CollInfoEntry;
}

async function updateCollInfo(out: string, entry: CollInfoEntry): Promise<void> {
  const file = path.join(out, 'collinfo.json');
  let existing: CollInfoEntry[] = [];
  try {
    const parsed = JSON.parse(await fsp.readFile(file, 'utf8')) as unknown;
    if (Array.isArray(parsed)) existing = parsed.filter((e): e is CollInfoEntry => typeof e === 'object' && e !== null && typeof (e as CollInfoEntry).id === 'string');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new MirrorError('CCP_ERR_MIRROR_COLLINFO', 'existing collinfo.json is unreadable', { cause: err });
  }
  await writeAtomic(file, Buffer.from(`${JSON.stringify(mergeCollInfo(existing, entry), null, 1)}\n`, 'utf8'));
}

/** Byte order for ASCII/percent-encoded keys (what `LC_ALL=C sort` gives CC). */
function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Writes `data` to a temporary sibling then renames it over `file`. */
export async function writeAtomic(file: string, data: Uint8Array): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  await fsp.writeFile(tmp, data);
  await fsp.rename(tmp, file);
}
