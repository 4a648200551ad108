import { layout, parseDatasetRegistry, type ObjectStore } from '@ccpipe/core';
import type { StatusProvider } from './server';

/** A batcher checkpoint as the status reads it (packages/batcher/src/checkpoint.ts writes it; the API does not depend on the batcher). */
interface CheckpointFacts {
  crawl?: string;
  nextPlanIndex?: number;
  planLength?: number;
  batchesPublished?: number;
  recordsPublished?: number;
  done?: boolean;
  mode?: 'bulk';
  modeChoice?: { mode?: string; asked?: string; reason?: string };
}

/** One registered dataset's batcher checkpoint, as read from the store ({@link readIngestFacts}). */
export interface IngestFact {
  id: number;
  name: string;
  crawl: string | null;
  checkpoint: CheckpointFacts;
}

/** One dataset's ingest as `/v1/status` shows it. */
export interface DatasetIngest {
  dataset_id: number;
  name: string;
  crawl: string | null;
  /** How the batcher reads the crawl: a range request per record, or whole WARC files (docs/bulk.md). */
  mode: 'ranges' | 'bulk';
  /** How the mode was chosen (`--mode`, auto's estimate), as the batcher said; null for a checkpoint without it. */
  modeChoice: { asked: string; reason: string } | null;
  /** In ranges mode CDX blocks; in bulk mode WARC file jobs. */
  blocksPlanned: number;
  /** Blocks (bulk mode: WARC file jobs) whose batches are all published (the batcher's checkpoint). */
  blocksDone: number;
  batcherDone: boolean;
  /** Batches the batcher published for those blocks (null: a checkpoint written before they were counted). */
  batchesPublished: number | null;
  /** CDX records in those batches, the ones the filter kept (null: a checkpoint written before they were counted). */
  recordsPublished: number | null;
  /** Completed batches of the dataset in the index version served. */
  batchesMerged: number;
  /** The batcher is done and the version served holds every batch it published. */
  done: boolean;
}

/** The ingest part of `/v1/status` for `ccpipe api`: per dataset, and `done` when every dataset is. */
export interface IngestStatus {
  /** Sums over the datasets (the explorer's progress bar reads blocksPlanned and blocksRead). */
  blocksPlanned: number;
  blocksRead: number;
  batchesPublished: number | null;
  recordsPublished: number | null;
  batchesMerged: number;
  done: boolean;
  datasets: DatasetIngest[];
}

/**
 * Reads each registered dataset's batcher checkpoint (`batcher/<dataset>/checkpoint.json`; the batcher registers a
 * dataset before it saves one): a few small GETs, which the caller caches. A dataset without a checkpoint, or with
 * one that cannot be read, is left out.
 */
export async function readIngestFacts(store: ObjectStore): Promise<IngestFact[]> {
  const reg = await store.get(layout.datasetRegistry());
  const facts: IngestFact[] = [];
  for (const entry of reg ? parseDatasetRegistry(reg).datasets : []) {
    const bytes = await store.get(layout.batcherCheckpoint(entry.name));
    if (bytes === null) continue;
    try {
      facts.push({ id: entry.id, name: entry.name, crawl: entry.crawl ?? null, checkpoint: JSON.parse(Buffer.from(bytes).toString('utf8')) as CheckpointFacts });
    } catch {
      continue;
    }
  }
  return facts;
}

/** How a checkpoint says its crawl is read (docs/bulk.md): the mode, and what was asked and why (null when it does not say). */
export function readModeOf(cp: Pick<CheckpointFacts, 'mode' | 'modeChoice'>): Pick<DatasetIngest, 'mode' | 'modeChoice'> {
  return {
    mode: cp.mode === 'bulk' ? 'bulk' : 'ranges',
    modeChoice: typeof cp.modeChoice?.reason === 'string' ? { asked: String(cp.modeChoice.asked ?? ''), reason: cp.modeChoice.reason } : null,
  };
}

/**
 * Ingest progress: the checkpoints `facts` against the batches one index version holds (`batchesMerged`: dataset id
 * → completed batches; the version the request answers from, so a response never mixes two versions), over the
 * datasets `canSee` lets the caller see (the ACL; sums too). A dataset is done once its batcher is done and the
 * version holds every batch it published; the whole run once every dataset shown is. Pure.
 */
export function ingestStatusOf(
  facts: readonly IngestFact[], batchesMerged: ReadonlyMap<number, number>, canSee: (datasetId: number, name: string) => boolean = () => true,
): IngestStatus {
  const datasets: DatasetIngest[] = [];
  for (const { id, name, crawl, checkpoint: cp } of facts) {
    if (!canSee(id, name)) continue;
    const merged = batchesMerged.get(id) ?? 0;
    const published = typeof cp.batchesPublished === 'number' ? cp.batchesPublished : null;
    const batcherDone = cp.done === true;
    datasets.push({
      dataset_id: id, name, crawl: cp.crawl ?? crawl,
      ...readModeOf(cp),
      blocksPlanned: cp.planLength ?? 0, blocksDone: cp.nextPlanIndex ?? 0, batcherDone, batchesPublished: published,
      recordsPublished: typeof cp.recordsPublished === 'number' ? cp.recordsPublished : null, batchesMerged: merged,
      done: batcherDone && published !== null && merged >= published,
    });
  }
  datasets.sort((a, b) => a.dataset_id - b.dataset_id);
  const sum = (f: (d: DatasetIngest) => number): number => datasets.reduce((n, d) => n + f(d), 0);
  const known = (f: (d: DatasetIngest) => number | null): number | null => (datasets.every((d) => f(d) !== null) ? sum((d) => f(d)!) : null);
  return {
    blocksPlanned: sum((d) => d.blocksPlanned), blocksRead: sum((d) => d.blocksDone),
    batchesPublished: known((d) => d.batchesPublished), recordsPublished: known((d) => d.recordsPublished), batchesMerged: sum((d) => d.batchesMerged),
    done: datasets.length > 0 && datasets.every((d) => d.done), datasets,
  };
}

/**
 * `/v1/status`'s ingest from `store` (`ccpipe api`, `ccpipe run`): the batcher checkpoints, read at most every 5 s,
 * against the batches the request's version holds, over the datasets its caller may see; `extra` adds fields.
 */
export function ingestStatusProvider(store: ObjectStore, extra: () => object = () => ({})): StatusProvider {
  const facts = cachedFor(5000, () => readIngestFacts(store));
  return async ({ view, canSee }) => ({ ...ingestStatusOf(await facts(), view?.batchesMerged?.() ?? new Map(), canSee), ...extra() });
}

/** `fn` memoized for `ms` (one call in flight at a time): /v1/status is polled by dashboards and explorers. */
export function cachedFor<T>(ms: number, fn: () => Promise<T>): () => Promise<T> {
  let at = -Infinity;
  let last: Promise<T> | null = null;
  return () => {
    if (last === null || Date.now() - at >= ms) {
      at = Date.now();
      last = fn();
      last.catch(() => {
        at = -Infinity; // a failure is not kept
      });
    }
    return last;
  };
}
