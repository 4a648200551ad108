import { createHash } from 'node:crypto';
import { CcpError, layout, type ObjectStore } from '@ccpipe/core';
import type { ModeChoice } from './mode-choice';

/** What a batcher run remembers between restarts. */
export interface Checkpoint {
  v: 1;
  crawl: string;
  dataset: string;
  /** Hash of everything that decides batch contents (filter, batch size, targets, max blocks). */
  fingerprint: string;
  /** Every planned block before this plan index has all its batches confirmed. */
  nextPlanIndex: number;
  planLength: number;
  /**
   * Batches published for the blocks before nextPlanIndex, over every run of the dataset (with `done`: all of them);
   * absent in checkpoints written before it was counted, and then unknown. The API's status compares it with the
   * batches merged to say when a crawl is done.
   */
  batchesPublished?: number;
  /** Records in those batches (the CDX records the filter kept); absent in checkpoints written before it was counted. */
  recordsPublished?: number;
  /**
   * Blocks before nextPlanIndex that could not be had for good (a 404, a block that does not inflate) and were
   * skipped, with the error code; absent when none (and in checkpoints written before blocks were skipped).
   */
  failedBlocks?: FailedBlock[];
  /** How many blocks were skipped in all (failedBlocks lists the first 1,000). */
  failedBlockCount?: number;
  /**
   * `bulk`: the dataset is published as WARC file jobs (docs/bulk.md); `nextPlanIndex` and `planLength` then count
   * jobs, not CDX blocks. Absent: ranges mode (every checkpoint written before bulk mode existed).
   */
  mode?: 'bulk';
  /** How `--mode auto` chose (or the mode that was asked for), with the estimate it chose from: shown by `ccpipe status`. */
  modeChoice?: ModeChoice;
  done: boolean;
  updatedAt: string;
}

/** A planned CDX block the batcher skipped: its global ordinal and why (an error code). */
export interface FailedBlock {
  ordinal: number;
  code: string;
}

/**
 * A fingerprint of the settings that decide which records land in which batch. Batch ids are (crawl, block, seq),
 * so resuming a dataset with other settings would publish different contents under ids workers already finished:
 * the batcher refuses that (see {@link loadCheckpoint}).
 */
export function runFingerprint(parts: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 16);
}

/**
 * Loads the dataset's checkpoint (`null` when the run is new). Throws CcpError CCP_ERR_CHECKPOINT_MISMATCH when the
 * dataset was started with different settings, and CCP_ERR_CHECKPOINT when the file is corrupt.
 *
 * With `reset` (`ccpipe batcher --reset-checkpoint`), a dataset started with other settings that never published a
 * batch (a filter that kept nothing) starts over with these: `null` is returned and the next checkpoint written
 * replaces the old one. One that did publish batches is still refused: the new batches would carry the ids of
 * batches workers have finished (ids are crawl, block and sequence), so they would be skipped as done and the
 * index would mix both settings. With equal settings `reset` changes nothing, so a flag left set does no harm.
 */
export async function loadCheckpoint(store: ObjectStore, dataset: string, fingerprint: string, opts: { reset?: boolean } = {}): Promise<Checkpoint | null> {
  const bytes = await store.get(layout.batcherCheckpoint(dataset));
  if (bytes === null) return null;
  let cp: Checkpoint;
  try {
    cp = JSON.parse(Buffer.from(bytes).toString('utf8')) as Checkpoint;
  } catch (cause) {
    throw new CcpError('CCP_ERR_CHECKPOINT', 'batcher checkpoint is not JSON', { cause });
  }
  if (cp.v !== 1 || typeof cp.nextPlanIndex !== 'number') throw new CcpError('CCP_ERR_CHECKPOINT', 'batcher checkpoint has an unknown shape');
  if (cp.fingerprint !== fingerprint) {
    const published = cp.batchesPublished;
    if (published === 0 && opts.reset === true) return null;
    const detail = { dataset, batchesPublished: published ?? null };
    if (published === 0) {
      throw new CcpError(
        'CCP_ERR_CHECKPOINT_MISMATCH',
        `dataset "${dataset}" was started with other settings (filter, batch size, targets or max blocks) and published no batch under them; ` +
          'to start it over with these settings, run ccpipe batcher again with --reset-checkpoint',
        { detail },
      );
    }
    throw new CcpError(
      'CCP_ERR_CHECKPOINT_MISMATCH',
      `dataset "${dataset}" was started with other settings (filter, batch size, targets or max blocks) and published ${published ?? 'an unknown number of'} batches under them; ` +
        'finish it with the same settings, or start over in another data directory (--data) or, with ccpipe batcher, under another --dataset name ' +
        '(--reset-checkpoint only starts over a dataset that published no batch: new batches would reuse the finished ones\' ids)',
      { detail },
    );
  }
  return cp;
}

/** Stores the checkpoint atomically. */
export async function saveCheckpoint(store: ObjectStore, cp: Checkpoint): Promise<void> {
  await store.put(layout.batcherCheckpoint(cp.dataset), Buffer.from(JSON.stringify(cp) + '\n', 'utf8'));
}

/**
 * A checkpoint past every planned block is done: every batch of the plan was confirmed. A run saves that position
 * (periodically, then forced at its end) before it saves `done: true`, so a batcher SIGKILLed between the two left
 * `done: false` — and a rerun, finding nothing to publish, used to leave it so: `/v1/status` then never called the crawl
 * done (found by the chaos suite, tests/chaos). Saves such a checkpoint with `done: true` and returns it; any other
 * (done already, or short of `planLength`) is returned as it is. Idempotent.
 */
export async function completeCheckpoint(store: ObjectStore, cp: Checkpoint, planLength: number, now: Date): Promise<Checkpoint> {
  if (cp.done || cp.nextPlanIndex < planLength) return cp;
  const done: Checkpoint = { ...cp, nextPlanIndex: planLength, planLength, done: true, updatedAt: now.toISOString() };
  await saveCheckpoint(store, done);
  return done;
}
