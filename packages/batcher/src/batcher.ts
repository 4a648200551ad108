import {
  CcpError,
  batchId,
  errorCode,
  parseCdxBlock,
  retryDelayMs,
  DEFAULT_RETRY_POLICY,
  type Batch,
  type BatchPublisher,
  type BatchRecord,
  type CdxBlockResult,
  type CdxRecord,
  type Clock,
  type ObjectStore,
  type QueueMessage,
  type RangeReader,
  type RecordFilter,
} from '@ccpipe/core';
import { saveCheckpoint, type Checkpoint, type FailedBlock } from './checkpoint';
import type { ModeChoice } from './mode-choice';
import type { PlannedBlock } from './plan-blocks';
import type { TargetSet } from './targets';

/** What one run does. */
export interface BatcherParams {
  crawl: string;
  dataset: string;
  datasetId: number;
  /** The data store's id (its registry's storeId), named by every batch so a worker over another store refuses it. */
  store?: string;
  fingerprint: string;
  plan: readonly PlannedBlock[];
  /** Plan index to start from (from the checkpoint). */
  startIndex: number;
  /** Batches published before startIndex: the checkpoint's batchesPublished (absent: unknown, unless startIndex is 0). */
  startBatches?: number | undefined;
  /** Records in those batches: the checkpoint's recordsPublished (absent: unknown, unless startIndex is 0). */
  startRecords?: number | undefined;
  /** Blocks skipped before startIndex: the checkpoint's failedBlocks (the first ones), and how many in all. */
  startFailedBlocks?: readonly FailedBlock[] | undefined;
  startFailedCount?: number | undefined;
  filter: RecordFilter;
  targets: TargetSet | null;
  batchSize: number;
  /** CDX blocks fetched concurrently. */
  blockConcurrency: number;
  /** Batches published and not yet confirmed, at most. */
  publishWindow: number;
  /** Attempts per batch publish before the run fails (the checkpoint makes a rerun resume). */
  publishAttempts: number;
  /** How the read mode was chosen (`--mode`), kept in the checkpoint for `ccpipe status`. */
  modeChoice?: ModeChoice;
}

/** The ports a run uses. */
export interface BatcherDeps {
  reader: RangeReader;
  publisher: BatchPublisher;
  store: ObjectStore;
  clock: Clock;
  events?: BatcherEvents;
  signal?: AbortSignal;
  /** The totals object the run fills as it goes (and returns); pass one to watch progress. Default: a new one. */
  summary?: BatcherSummary;
}

/** Progress and metric hooks (closed-set labels only). */
export interface BatcherEvents {
  onBlock?(e: { records: number; kept: number; dropped: Record<string, number>; lineErrors: number; bytes: number }): void;
  onBatchPublished?(records: number): void;
  onBatchConfirmed?(records: number): void;
  onPublishRetry?(code: string): void;
  /** A block that cannot be had for good was skipped (`code`: why). */
  onBlockFailed?(e: { ordinal: number; code: string }): void;
  onCheckpoint?(nextPlanIndex: number): void;
}

/** Totals of a run. */
export interface BatcherSummary {
  blocks: number;
  records: number;
  kept: number;
  dropped: Record<string, number>;
  batches: number;
  /** Blocks this run skipped because they cannot be had for good (also kept in the checkpoint). */
  failedBlocks: FailedBlock[];
  done: boolean;
}

/** A summary with nothing counted yet. */
export const emptySummary = (): BatcherSummary => ({ blocks: 0, records: 0, kept: 0, dropped: {}, batches: 0, failedBlocks: [], done: false });


/** Dropped because a domain-targeted run did not ask for that domain. */
export const NOT_TARGETED = 'not_targeted';
/** Skipped blocks in a row after which the source, not the blocks, is taken to be wrong: the run fails. */
export const MAX_FAILED_IN_A_ROW = 16;
/** Skipped blocks the checkpoint lists (beyond, it counts them): a crawl with many would grow it without bound. */
const MAX_LISTED_FAILED = 1000;

/** A block missing at the source (404, 410, 416) or that does not inflate: skipped. Anything else stops the run. */
export function skippableBlockError(err: unknown): boolean {
  if (!(err instanceof CcpError) || err.retryable) return false;
  if (err.code === 'CCP_ERR_CDX_BLOCK') return true;
  return err.code === 'CCP_ERR_FETCH_STATUS' && [404, 410, 416].includes(Number(err.detail?.['status']));
}

/** Dropped because the CDX line did not parse. */
export const BAD_CDX_LINE = 'cdx_line';

/**
 * Reads the planned blocks from `startIndex` on, filters their records, publishes them as batches of at most
 * `batchSize` (batches never span blocks, so ids are (crawl, block ordinal, seq) and deterministic), and advances
 * the checkpoint past every block whose batches are all confirmed, in plan order. A block that cannot be had for
 * good (a non-retryable read error such as a 404, or bytes that do not inflate) is skipped, counted and kept in the
 * checkpoint's `failedBlocks`: one bad block must not stop the crawl at the same place on every rerun. Throws when a
 * batch cannot be published after `publishAttempts` or a block cannot be read for now (retries exhausted): everything
 * before the checkpoint is safe, and a rerun resumes there (a re-published batch is harmless: workers see its
 * completion marker).
 */
export async function runBatcher(p: BatcherParams, deps: BatcherDeps): Promise<BatcherSummary> {
  const { reader, store, clock, events = {}, signal } = deps;
  const summary = deps.summary ?? emptySummary();
  const shardPath = (shard: string): string => `cc-index/collections/${p.crawl}/indexes/${shard}`;

  // Per plan index: batches still unconfirmed (undefined until the block has been published), and its batches.
  const pending = new Map<number, number>();
  const batchesAt = new Map<number, number>();
  const recordsAt = new Map<number, number>();
  let nextCheckpoint = p.startIndex;
  let published: number | null = p.startIndex === 0 ? 0 : (p.startBatches ?? null);
  let records: number | null = p.startIndex === 0 ? 0 : (p.startRecords ?? null);
  const failedAt = new Map<number, FailedBlock>();
  /** Plan indices of skipped blocks not yet followed by a block that was had. */
  const unconfirmed: number[] = [];
  const failedBefore: FailedBlock[] = [...(p.startFailedBlocks ?? [])].slice(0, MAX_LISTED_FAILED);
  let failedCount = p.startFailedCount ?? p.startFailedBlocks?.length ?? 0;
  let lastSaved = p.startIndex;
  let lastSaveAt = clock.now();
  let failure: unknown = null;
  const inflight = new Set<Promise<void>>();

  const saveIfDue = async (force: boolean): Promise<void> => {
    while (pending.get(nextCheckpoint) === 0) {
      if (published !== null) published += batchesAt.get(nextCheckpoint) ?? 0;
      if (records !== null) records += recordsAt.get(nextCheckpoint) ?? 0;
      batchesAt.delete(nextCheckpoint);
      recordsAt.delete(nextCheckpoint);
      const failed = failedAt.get(nextCheckpoint);
      if (failed !== undefined) {
        failedCount++;
        if (failedBefore.length < MAX_LISTED_FAILED) failedBefore.push(failed);
      }
      failedAt.delete(nextCheckpoint);
      pending.delete(nextCheckpoint++);
    }
    if (nextCheckpoint === lastSaved) return;
    if (!force && nextCheckpoint - lastSaved < 64 && clock.now() - lastSaveAt < 5_000) return;
    lastSaved = nextCheckpoint;
    lastSaveAt = clock.now();
    await saveCheckpoint(store, checkpointOf(p, nextCheckpoint, false, clock, published, records, failedBefore, failedCount));
    events.onCheckpoint?.(nextCheckpoint);
  };

  const publishBlock = async (index: number, batches: Batch[]): Promise<void> => {
    pending.set(index, batches.length);
    batchesAt.set(index, batches.length);
    recordsAt.set(index, batches.reduce((n, b) => n + b.records.length, 0));
    for (const batch of batches) {
      while (inflight.size >= p.publishWindow) await Promise.race(inflight);
      if (failure) return;
      events.onBatchPublished?.(batch.records.length);
      const task = publishWithRetry(batch, p.publishAttempts, deps).then(
        () => {
          pending.set(index, (pending.get(index) ?? 1) - 1);
          summary.batches++;
          events.onBatchConfirmed?.(batch.records.length);
        },
        (err: unknown) => {
          // a publish cut short by a stop is not a failure: unconfirmed, its block stays past the checkpoint and a
          // rerun publishes it again (harmless: workers find the marker)
          if (!signal?.aborted) failure ??= err;
        },
      );
      const tracked = task.finally(() => inflight.delete(tracked));
      inflight.add(tracked);
    }
    await saveIfDue(false);
  };

  // Fetch blocks ahead (bounded), consume them in plan order.
  const fetches: Promise<Uint8Array>[] = [];
  const fetchAt = (i: number): Promise<Uint8Array> => {
    const { entry } = p.plan[i]!;
    return reader.read(shardPath(entry.shard), entry.offset, entry.length, signal);
  };
  let fetchedUpTo = p.startIndex;
  const fillAhead = (from: number): void => {
    while (fetchedUpTo < p.plan.length && fetchedUpTo < from + p.blockConcurrency) {
      const pr = fetchAt(fetchedUpTo);
      pr.catch(() => undefined); // observed when awaited in order
      fetches[fetchedUpTo++] = pr;
    }
  };

  try {
    for (let i = p.startIndex; i < p.plan.length; i++) {
      if (signal?.aborted || failure) break;
      fillAhead(i);
      const block = p.plan[i]!;
      let batches: Batch[] = [];
      let skipped = false;
      try {
        const bytes = await fetches[i]!;
        batches = batchBlock(p, block.ordinal, bytes, summary, events);
      } catch (err) {
        // for now (retries exhausted, an abort) or anything but a missing or damaged block → the run fails and a
        // rerun resumes here; a missing or damaged block → skipped, unless many in a row are (a source that is wrong)
        if (signal?.aborted || !skippableBlockError(err)) throw err;
        if (unconfirmed.length + 1 >= MAX_FAILED_IN_A_ROW) {
          throw new CcpError('CCP_ERR_BATCHER_SOURCE', `${MAX_FAILED_IN_A_ROW} CDX blocks in a row cannot be had: check the source (base URL, mirror, crawl)`, {
            retryable: false, cause: err, detail: { code: errorCode(err), ordinal: block.ordinal },
          });
        }
        const failed = { ordinal: block.ordinal, code: errorCode(err) };
        failedAt.set(i, failed);
        summary.failedBlocks.push(failed);
        events.onBlockFailed?.(failed);
        skipped = true;
      } finally {
        delete fetches[i];
      }
      if (skipped) {
        // a skipped block is passed by the checkpoint only once a later block was had (it is held unconfirmed until
        // then): a run that stops on a row of failures resumes before them
        pending.set(i, 1);
        unconfirmed.push(i);
        continue;
      }
      for (const j of unconfirmed.splice(0)) pending.set(j, 0);
      await publishBlock(i, batches);
    }
    // the plan ended on skipped blocks: nothing later can vouch for them, but they are fewer than a row's limit
    if (!signal?.aborted && !failure) for (const j of unconfirmed.splice(0)) pending.set(j, 0);
  } catch (err) {
    if (!signal?.aborted) failure ??= err;
  }
  await Promise.allSettled(inflight);
  if (failure) {
    await saveIfDue(true).catch(() => undefined);
    throw failure;
  }
  await saveIfDue(true);
  if (!signal?.aborted && nextCheckpoint >= p.plan.length) {
    summary.done = true;
    await saveCheckpoint(store, checkpointOf(p, p.plan.length, true, clock, published, records, failedBefore, failedCount));
    events.onCheckpoint?.(p.plan.length);
  }
  return summary;
}

function batchBlock(p: BatcherParams, ordinal: number, bytes: Uint8Array, summary: BatcherSummary, events: BatcherEvents): Batch[] {
  const kept = keptRecords(p, bytes, summary, events);
  const batches: Batch[] = [];
  for (let seq = 0; seq * p.batchSize < kept.length; seq++) {
    batches.push({
      v: 1,
      id: batchId(p.crawl, ordinal, seq),
      crawl: p.crawl,
      dataset: p.dataset,
      datasetId: p.datasetId,
      ...(p.store !== undefined && { store: p.store }),
      blockNo: ordinal,
      seq,
      records: kept.slice(seq * p.batchSize, (seq + 1) * p.batchSize),
    });
  }
  return batches;
}

/**
 * Publishes one message, again after a retryable failure (the retry policy's backoff), at most `attempts` times; both
 * read modes publish through it. Rethrows the last failure, or at once one that is not retryable or a stop.
 */
export async function publishWithRetry(message: QueueMessage, attempts: number, deps: Pick<BatcherDeps, 'publisher' | 'clock' | 'events' | 'signal'>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.publisher.publish(message, deps.signal);
      return;
    } catch (err) {
      const retryable = err instanceof CcpError && err.retryable;
      if (!retryable || attempt >= attempts || deps.signal?.aborted) throw err;
      deps.events?.onPublishRetry?.(errorCode(err));
      await deps.clock.sleep(retryDelayMs(DEFAULT_RETRY_POLICY, attempt), deps.signal);
    }
  }
}

/**
 * The records of one CDX block (the bytes of its gzip member) the run keeps, as batch records: parsed, targeted and
 * filtered, with the summary and `onBlock` counts. Both modes decide here, so they keep the same records.
 * Without targets, the filter's line gate drops lines on their bytes before their records are made (most of a block:
 * docs/cdx.md); it names the reason the filter would, so the records and counts are those of the full path. With
 * targets every record is made: the targets are asked first, and a line out of them counts as not targeted.
 */
export function keptRecords(
  p: Pick<BatcherParams, 'targets' | 'filter'>, bytes: Uint8Array, summary: BatcherSummary, events: Pick<BatcherEvents, 'onBlock'>,
): BatchRecord[] {
  return keptOfBlock(p, parseCdxBlock(bytes, p.targets ? undefined : p.filter.lineGate), bytes.length, summary, events);
}

/**
 * {@link keptRecords} of a block already parsed (`bytes`: its gzip member's size, for `onBlock`); the lines a gate
 * dropped while parsing (`dropped`) are counted with the rest.
 */
export function keptOfBlock(
  p: Pick<BatcherParams, 'targets' | 'filter'>, { records, errors, lines, dropped: gated }: CdxBlockResult, bytes: number, summary: BatcherSummary,
  events: Pick<BatcherEvents, 'onBlock'>,
): BatchRecord[] {
  const dropped: Record<string, number> = {};
  const drop = (reason: string, n = 1): void => {
    dropped[reason] = (dropped[reason] ?? 0) + n;
    summary.dropped[reason] = (summary.dropped[reason] ?? 0) + n;
  };
  if (errors.length > 0) drop(BAD_CDX_LINE, errors.length);
  if (gated !== undefined) for (const reason in gated) drop(reason, gated[reason]);
  const kept: BatchRecord[] = [];
  for (const rec of records) {
    if (p.targets && !p.targets.has(rec.surt)) {
      drop(NOT_TARGETED);
      continue;
    }
    const d = p.filter(rec);
    if (!d.keep) {
      drop(d.reason);
      continue;
    }
    kept.push(toBatchRecord(rec));
  }
  summary.blocks++;
  summary.records += lines;
  summary.kept += kept.length;
  events.onBlock?.({ records: lines, kept: kept.length, dropped, lineErrors: errors.length, bytes });
  return kept;
}

/** What a batch carries of a CDX record (the fields a worker needs). */
export function toBatchRecord(r: CdxRecord): BatchRecord {
  const out: BatchRecord = { url: r.url, ts: r.timestamp, languages: [...r.languages], filename: r.filename, offset: r.offset, length: r.length };
  if (r.status !== undefined) out.status = r.status;
  if (r.mime !== undefined) out.mime = r.mime;
  if (r.mimeDetected !== undefined) out.mimeDetected = r.mimeDetected;
  if (r.charset !== undefined) out.charset = r.charset;
  if (r.digest !== undefined) out.digest = r.digest;
  return out;
}

function checkpointOf(
  p: BatcherParams, nextPlanIndex: number, done: boolean, clock: Clock, batchesPublished: number | null, recordsPublished: number | null,
  failedBlocks: readonly FailedBlock[], failedBlockCount: number,
): Checkpoint {
  return {
    v: 1,
    crawl: p.crawl,
    dataset: p.dataset,
    fingerprint: p.fingerprint,
    nextPlanIndex,
    planLength: p.plan.length,
    ...(batchesPublished !== null && { batchesPublished }),
    ...(recordsPublished !== null && { recordsPublished }),
    ...(failedBlockCount > 0 && { failedBlocks: [...failedBlocks], failedBlockCount }),
    ...(p.modeChoice !== undefined && { modeChoice: p.modeChoice }),
    done,
    updatedAt: new Date(clock.now()).toISOString(),
  };
}
