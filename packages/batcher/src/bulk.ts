import * as nodePath from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  CcpError,
  DEFAULT_RETRY_POLICY,
  cutRanges,
  encodeRecordList,
  errorCode,
  layout,
  retryDelayMs,
  subBatchCount,
  warcJobId,
  type RangeReader,
  type WarcJob,
} from '@ccpipe/core';
import { MAX_FAILED_IN_A_ROW, emptySummary, keptRecords, publishWithRetry, skippableBlockError, type BatcherDeps, type BatcherParams, type BatcherSummary } from './batcher';
import { BulkSpill } from './bulk-spill';
import { saveCheckpoint, type Checkpoint } from './checkpoint';
import type { ModeChoice } from './mode-choice';
import { byShard, type PlannedBlock } from './plan-blocks';

/** What a bulk run needs beyond a ranges run's parameters. */
export interface BulkParams extends Omit<BatcherParams, 'startIndex' | 'blockConcurrency' | 'startFailedBlocks' | 'startFailedCount' | 'startBatches' | 'startRecords'> {
  /** The crawl's WARC files, in `warc.paths.gz` order: a job's `fileNo` is its index here. */
  warcPaths: readonly string[];
  /** Local directory for the spill (the system temp dir by default). */
  spillDir: string;
  /** Jobs confirmed by earlier runs (the checkpoint's `nextPlanIndex` in bulk mode): not published again. */
  startJob: number;
  choice: ModeChoice;
}

/** Dropped because the CDX names a WARC file `warc.paths.gz` does not list (no job can name it). */
export const WARC_UNLISTED = 'warc_unlisted';

/**
 * Bulk mode's batcher (docs/bulk.md). Reads every planned CDX block with one request per CDX file, keeps records as
 * ranges mode does ({@link keptRecords}), groups them by WARC file on local disk ({@link BulkSpill}), then per WARC
 * file with kept records stores the list (`layout.bulkList`) and publishes a {@link WarcJob}, in file order. The
 * checkpoint counts confirmed jobs (`mode: 'bulk'`); a rerun reads the CDX again (the spill is local and not kept)
 * and publishes from the first job not confirmed. `batchesPublished` counts sub-batches, so a crawl's completion is
 * known as in ranges mode. Blocks that cannot be had are skipped and counted as in ranges mode.
 */
export async function runBulkBatcher(p: BulkParams, deps: BatcherDeps): Promise<BatcherSummary> {
  const { reader, publisher, store, clock, events = {}, signal } = deps;
  const summary = deps.summary ?? emptySummary();
  const fileNoOf = new Map(p.warcPaths.map((f, i) => [f, i]));
  const spill = new BulkSpill(nodePath.join(p.spillDir, `ccpipe-bulk-${p.dataset}-${p.fingerprint}`), p.warcPaths.length);
  const files = new Set<number>();
  // blocks that cannot be had, as in ranges mode: skipped and counted, unless so many in a row that the source is wrong
  let failedInARow = 0;
  const failBlock = (block: PlannedBlock, err: unknown): void => {
    if (++failedInARow >= MAX_FAILED_IN_A_ROW) {
      throw new CcpError('CCP_ERR_BATCHER_SOURCE', `${MAX_FAILED_IN_A_ROW} CDX blocks in a row cannot be had: check the source (base URL, mirror, crawl)`, {
        retryable: false, cause: err, detail: { code: errorCode(err), ordinal: block.ordinal },
      });
    }
    const failed = { ordinal: block.ordinal, code: errorCode(err) };
    summary.failedBlocks.push(failed);
    events.onBlockFailed?.(failed);
  };
  try {
    // 1. every planned block, one stream per CDX file
    for (const blocks of byShard(p.plan)) {
      await readShard(p, deps, blocks, failBlock, (block, bytes) => {
        let kept;
        try {
          kept = keptRecords(p, bytes, summary, events);
        } catch (err) {
          if (!skippableBlockError(err)) throw err;
          failBlock(block, err);
          return;
        }
        failedInARow = 0;
        for (const r of kept) {
          const fileNo = fileNoOf.get(r.filename);
          if (fileNo === undefined) {
            summary.kept--;
            summary.dropped[WARC_UNLISTED] = (summary.dropped[WARC_UNLISTED] ?? 0) + 1;
            continue;
          }
          files.add(fileNo);
          spill.add(fileNo, r);
        }
      });
      signal?.throwIfAborted();
    }

    // 2. a job per WARC file with kept records, in file order
    const jobs = files.size;
    const confirmed: boolean[] = [];
    const counts: { batches: number; records: number }[] = [];
    let prefix = 0; // jobs before this one are all confirmed
    let batchesBefore = 0; // sub-batches and records of the jobs before `prefix`
    let recordsBefore = 0;
    let lastSaved = -1;
    let lastSaveAt = clock.now();
    let failure: unknown = null;
    const inflight = new Set<Promise<void>>();
    const checkpoint = (done: boolean): Checkpoint => ({
        v: 1, crawl: p.crawl, dataset: p.dataset, fingerprint: p.fingerprint, nextPlanIndex: prefix, planLength: jobs,
        batchesPublished: batchesBefore, recordsPublished: recordsBefore,
        ...(summary.failedBlocks.length > 0 && { failedBlocks: summary.failedBlocks.slice(0, 1000), failedBlockCount: summary.failedBlocks.length }),
        mode: 'bulk', modeChoice: p.choice, done, updatedAt: new Date(clock.now()).toISOString(),
    });
    const saveIfDue = async (force: boolean): Promise<void> => {
      for (; prefix < confirmed.length && confirmed[prefix]; prefix++) {
        batchesBefore += counts[prefix]!.batches;
        recordsBefore += counts[prefix]!.records;
      }
      if (prefix === lastSaved) return;
      if (!force && prefix - lastSaved < 64 && clock.now() - lastSaveAt < 5_000) return;
      lastSaved = prefix;
      lastSaveAt = clock.now();
      await saveCheckpoint(store, checkpoint(false));
      events.onCheckpoint?.(prefix);
    };
    let index = 0;
    for (const g of spill.groups()) {
      if (signal?.aborted || failure) break;
      const i = index++;
      const batches = subBatchCount(g.records.length, p.batchSize);
      counts[i] = { batches, records: g.records.length };
      if (i < p.startJob) {
        confirmed[i] = true; // an earlier run's: confirmed, its batches counted
        continue;
      }
      confirmed[i] = false;
      const list = layout.bulkList(p.datasetId, p.crawl, g.fileNo);
      await store.put(list, gzipSync(encodeRecordList(g.records)));
      const job: WarcJob = {
        v: 1, kind: 'warc', id: warcJobId(p.crawl, g.fileNo), crawl: p.crawl, dataset: p.dataset, datasetId: p.datasetId,
        ...(p.store !== undefined && { store: p.store }),
        fileNo: g.fileNo, filename: p.warcPaths[g.fileNo]!, list, records: g.records.length, batchSize: p.batchSize,
      };
      while (inflight.size >= p.publishWindow) await Promise.race(inflight);
      if (failure) break;
      // counted as the sub-batches (what workers complete and markers show), with their records
      const sizes = Array.from({ length: batches }, (_, s) => Math.min(p.batchSize, job.records - s * p.batchSize));
      for (const n of sizes) events.onBatchPublished?.(n);
      const task = publishWithRetry(job, p.publishAttempts, deps).then(
        () => {
          confirmed[i] = true;
          summary.batches += batches;
          for (const n of sizes) events.onBatchConfirmed?.(n);
        },
        (err: unknown) => {
          if (!signal?.aborted) failure ??= err;
        },
      );
      const tracked = task.finally(() => inflight.delete(tracked));
      inflight.add(tracked);
      await saveIfDue(false);
    }
    await Promise.allSettled(inflight);
    if (failure) {
      await saveIfDue(true).catch(() => undefined);
      throw failure;
    }
    await saveIfDue(true);
    if (!signal?.aborted && prefix >= jobs) {
      summary.done = true;
      await saveCheckpoint(store, checkpoint(true));
      events.onCheckpoint?.(jobs);
    }
    return summary;
  } finally {
    spill.close();
  }
}

/**
 * Streams one CDX file's planned blocks in one request (from the first block to the end of the last) and hands each
 * block's bytes to `onBlock`. A stream cut short, or failing for now, starts again at the first block not handled (up to
 * `publishAttempts` tries, with the retry policy's backoff); a file that cannot be had for good (404, 410, 416) skips its
 * remaining blocks, each counted as a failed block.
 */
async function readShard(
  p: BulkParams, deps: BatcherDeps, blocks: readonly PlannedBlock[], failBlock: (block: PlannedBlock, err: unknown) => void,
  onBlock: (block: PlannedBlock, bytes: Uint8Array) => void,
): Promise<void> {
  const { reader, clock, signal } = deps;
  const path = `cc-index/collections/${p.crawl}/indexes/${blocks[0]!.entry.shard}`;
  const last = blocks[blocks.length - 1]!.entry;
  let next = 0;
  for (let attempt = 1; next < blocks.length; attempt++) {
    const from = blocks[next]!.entry.offset;
    try {
      const ranges = blocks.slice(next).map((b) => ({ offset: b.entry.offset, length: b.entry.length }));
      const short = (at: number, upTo: number): Error =>
        new CcpError('CCP_ERR_FETCH_SHORT_BODY', 'the CDX file stream ended early', { retryable: true, detail: { at, upTo } });
      for await (const bytes of cutRanges(reader.streamRange(path, from, last.offset + last.length - from, signal), ranges, from, short)) {
        onBlock(blocks[next]!, bytes);
        next++;
      }
    } catch (err) {
      if (signal?.aborted) throw err;
      if (skippableBlockError(err)) {
        for (const b of blocks.slice(next)) failBlock(b, err);
        return;
      }
      if (!(err instanceof CcpError && err.retryable) || attempt >= p.publishAttempts) throw err;
      await clock.sleep(retryDelayMs(DEFAULT_RETRY_POLICY, attempt), signal);
    }
  }
}

/** The crawl's WARC files in `crawl-data/<crawl>/warc.paths.gz` order (one request). */
export async function loadWarcPaths(crawl: string, reader: RangeReader, signal?: AbortSignal): Promise<string[]> {
  const parts: Buffer[] = [];
  for await (const c of reader.stream(`crawl-data/${crawl}/warc.paths.gz`, signal)) parts.push(Buffer.from(c));
  let text: string;
  try {
    text = gunzipSync(Buffer.concat(parts)).toString('utf8');
  } catch (cause) {
    throw new CcpError('CCP_ERR_WARC_PATHS', `crawl-data/${crawl}/warc.paths.gz does not inflate`, { retryable: false, cause });
  }
  return text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
}
