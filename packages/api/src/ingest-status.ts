import { layout, parseDatasetRegistry, type ObjectStore } from '@ccpipe/core';

/** A batcher checkpoint as the status reads it (packages/batcher/src/checkpoint.ts writes it; the API does not depend on the batcher). */
interface CheckpointFacts {
  crawl?: string;
  nextPlanIndex?: number;
  planLength?: number;
  batchesPublished?: number;
  done?: boolean;
}

/** One dataset's ingest as `/v1/status` shows it. */
export interface DatasetIngest {
  dataset_id: number;
  name: string;
  crawl: string | null;
  blocksPlanned: number;
  /** Blocks whose batches are all published (the batcher's checkpoint). */
  blocksDone: number;
  batcherDone: boolean;
  /** Batches the batcher published for those blocks (null: a checkpoint written before they were counted). */
  batchesPublished: number | null;
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
  batchesMerged: number;
  done: boolean;
  datasets: DatasetIngest[];
}

/**
 * Reads ingest progress from the data store — each registered dataset's batcher checkpoint
 * (`batcher/<dataset>/checkpoint.json`; the batcher registers a dataset before it saves one) — against the batches a
 * version holds (`batchesMerged`: dataset id → completed batches). A dataset is done once its batcher is done and the
 * version holds every batch it published; the whole run once every dataset with a checkpoint is. A few small GETs;
 * the caller caches. A dataset without a checkpoint, or with one that cannot be read, is left out.
 */
export async function ingestStatus(store: ObjectStore, batchesMerged: ReadonlyMap<number, number>): Promise<IngestStatus> {
  const reg = await store.get(layout.datasetRegistry());
  const datasets: DatasetIngest[] = [];
  for (const entry of reg ? parseDatasetRegistry(reg).datasets : []) {
    const bytes = await store.get(layout.batcherCheckpoint(entry.name));
    if (bytes === null) continue;
    let cp: CheckpointFacts;
    try {
      cp = JSON.parse(Buffer.from(bytes).toString('utf8')) as CheckpointFacts;
    } catch {
      continue;
    }
    const merged = batchesMerged.get(entry.id) ?? 0;
    const published = typeof cp.batchesPublished === 'number' ? cp.batchesPublished : null;
    const batcherDone = cp.done === true;
    datasets.push({
      dataset_id: entry.id, name: entry.name, crawl: cp.crawl ?? entry.crawl,
      blocksPlanned: cp.planLength ?? 0, blocksDone: cp.nextPlanIndex ?? 0, batcherDone, batchesPublished: published, batchesMerged: merged,
      done: batcherDone && published !== null && merged >= published,
    });
  }
  datasets.sort((a, b) => a.dataset_id - b.dataset_id);
  const sum = (f: (d: DatasetIngest) => number): number => datasets.reduce((n, d) => n + f(d), 0);
  return {
    blocksPlanned: sum((d) => d.blocksPlanned), blocksRead: sum((d) => d.blocksDone),
    batchesPublished: datasets.every((d) => d.batchesPublished !== null) ? sum((d) => d.batchesPublished!) : null, batchesMerged: sum((d) => d.batchesMerged),
    done: datasets.length > 0 && datasets.every((d) => d.done), datasets,
  };
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
