import { parseCdxBlock, runLanes, type RangeReader } from '@ccpipe/core';
import { emptySummary, keptOfBlock, skippableBlockError, type BatcherParams } from './batcher';
import { byShard, type PlannedBlock } from './plan-blocks';

/** Sample blocks read at once (the batcher reads 4 blocks ahead). */
const SAMPLE_READS = 4;

/** What `--mode auto` estimated from a sample of the crawl's CDX, for one whole run. */
export interface ModeEstimate {
  /** CDX blocks read for the sample, their records and the records the filter kept. */
  sampledBlocks: number;
  sampledRecords: number;
  sampledKept: number;
  /** The run's planned blocks, records (planned blocks × records per sampled block) and kept records, estimated. */
  plannedBlocks: number;
  records: number;
  kept: number;
  /** WARC files of the crawl (warc.paths.gz) and CDX files the plan touches. */
  warcFiles: number;
  cdxFiles: number;
  /** Requests and bytes each mode would move for the run. */
  ranges: { requests: number; bytes: number };
  bulk: { requests: number; bytes: number };
}

/** The mode a run uses and why (logged, kept in the checkpoint, shown by `ccpipe status`). */
export interface ModeChoice {
  mode: 'bulk' | 'ranges';
  asked: 'auto' | 'bulk' | 'ranges';
  reason: string;
  estimate?: ModeEstimate;
}

/**
 * What one request costs, in bytes of transfer it is worth, when the modes are compared: a range read of a record costs
 * a request and its bytes; a whole-file read costs the file. Bulk wins once the share of records kept passes
 * 1.1 × L / (64 KiB + L) for a mean record length L: about 22 % of records at 16 KB, 35 % at 30 KB (Common Crawl's
 * default English/200 filter keeps ≈ 44 %). Below that the range requests are fewer than their bytes' worth of whole
 * files: a one-language filter keeping 5 % of a crawl is ≈ 125 M range requests against ≈ 100 TB of WARC files. The
 * host's request limit (503 SlowDown) is what makes requests dear.
 */
export const REQUEST_COST_BYTES = 64 * 1024;
/** WARC bytes a file holds beyond its response records (request and metadata records, warcinfo): ≈ 10 % on Common Crawl. */
const WARC_OVERHEAD = 1.1;

/**
 * Chooses the read mode for a run from an estimate: whichever moves less, counting each request as
 * {@link REQUEST_COST_BYTES}. Pure.
 */
export function chooseMode(e: ModeEstimate): ModeChoice {
  const cost = (m: { requests: number; bytes: number }): number => m.requests * REQUEST_COST_BYTES + m.bytes;
  const ranges = cost(e.ranges);
  const bulk = cost(e.bulk);
  const mode = bulk < ranges ? 'bulk' : 'ranges';
  const pct = e.records > 0 ? ((100 * e.kept) / e.records).toFixed(1) : '0';
  if (e.plannedBlocks > 0 && e.sampledBlocks === 0) {
    return { mode: 'ranges', asked: 'auto', reason: `no block of the CDX sample (${e.plannedBlocks} planned) could be read, so nothing is estimated: ranges, which reads only what the run keeps`, estimate: e };
  }
  return {
    mode,
    asked: 'auto',
    reason: mode === 'bulk'
      ? `the filter keeps ≈ ${pct}% of the records: reading whole WARC files moves ${fmt(e.bulk.bytes)} in ${e.bulk.requests} requests, against ${fmt(e.ranges.bytes)} in ${e.ranges.requests} range requests`
      : `the filter keeps ≈ ${pct}% of the records: ${e.ranges.requests} range requests (${fmt(e.ranges.bytes)}) cost less than reading ${e.warcFiles} whole WARC files (${fmt(e.bulk.bytes)})`,
    estimate: e,
  };
}

const fmt = (n: number): string => (n >= 1e9 ? `${(n / 1e9).toFixed(1)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.round(n / 1e3)} kB`);

/** Blocks a sample reads: up to `perShard` spread evenly over each CDX file's planned blocks, at most `max` in all. */
export function sampleBlocks(plan: readonly PlannedBlock[], perShard = 3, max = 64): PlannedBlock[] {
  const out: PlannedBlock[] = [];
  for (const blocks of byShard(plan)) {
    const k = Math.min(perShard, blocks.length);
    for (let i = 0; i < k; i++) out.push(blocks[Math.floor(((i + 0.5) * blocks.length) / k)]!);
  }
  if (out.length <= max) return out;
  return Array.from({ length: max }, (_, i) => out[Math.floor(((i + 0.5) * out.length) / max)]!);
}

/**
 * Estimates what each mode moves for the whole plan from a sample of its CDX blocks (read with range requests, parsed
 * and filtered as the run would). A sample block that cannot be had is left out; none at all → the estimate says 0
 * records, and ranges is chosen.
 */
export async function estimateModes(
  p: Pick<BatcherParams, 'crawl' | 'plan' | 'filter' | 'targets'>, reader: RangeReader, warcFiles: number, signal?: AbortSignal,
): Promise<ModeEstimate> {
  const sample = sampleBlocks(p.plan);
  const summary = emptySummary();
  let keptBytes = 0;
  let allBytes = 0;
  let sampled = 0;
  // a few blocks at a time, as the batcher reads ahead: the sample is start-up latency
  await runLanes(sample.length, SAMPLE_READS, async (i) => {
    const b = sample[i]!;
    let bytes: Uint8Array;
    try {
      bytes = await reader.read(`cc-index/collections/${p.crawl}/indexes/${b.entry.shard}`, b.entry.offset, b.entry.length, signal);
    } catch (err) {
      if (skippableBlockError(err)) return;
      throw err;
    }
    sampled++;
    const parsed = parseCdxBlock(bytes);
    // every record's length (what a whole-file read moves: the CDX lists the response records), and the kept ones'
    for (const r of parsed.records) allBytes += r.length;
    for (const r of keptOfBlock(p, parsed, bytes.length, summary, {})) keptBytes += r.length;
  });
  const perBlock = sampled > 0 ? summary.records / sampled : 0;
  const records = Math.round(perBlock * p.plan.length);
  const keptShare = summary.records > 0 ? summary.kept / summary.records : 0;
  const kept = Math.round(records * keptShare);
  const meanAll = summary.records > 0 ? allBytes / summary.records : 0;
  const meanKept = summary.kept > 0 ? keptBytes / summary.kept : 0;
  const cdxFiles = new Set(p.plan.map((b) => b.entry.shard)).size;
  // the CDX each mode reads: ranges a request per planned block, bulk the planned blocks' files in a request each
  const cdxBytes = p.plan.reduce((s, b) => s + b.entry.length, 0);
  return {
    sampledBlocks: sampled, sampledRecords: summary.records, sampledKept: summary.kept,
    plannedBlocks: p.plan.length, records, kept, warcFiles, cdxFiles,
    ranges: { requests: kept + p.plan.length, bytes: Math.round(kept * meanKept) + cdxBytes },
    bulk: { requests: warcFiles + cdxFiles, bytes: Math.round(records * meanAll * WARC_OVERHEAD) + cdxBytes },
  };
}
