import { compileFilter, registeredDomainOf, type Batch, type BatchPublisher } from '@ccpipe/core';
import { FsRangeReader, MemoryObjectStore, systemClock } from '@ccpipe/adapters';
import { loadClusterIdx, planBlocks, runBatcher, runFingerprint } from '@ccpipe/batcher';
import { CC_MIRROR_DEV } from './corpus';

/** A range reader over cc-mirror-dev's files (no HTTP), requiring gzip members like the worker's. */
export const devReader = (): FsRangeReader => new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true });

/**
 * The batches the real batcher makes of one cc-mirror-dev crawl under the default filter (or `filter`), collected in memory
 * instead of published: the input of worker, merger and API tests.
 */
export async function devBatches(
  crawl: string,
  opts: { datasetId: number; batchSize?: number; maxBlocks?: number; filter?: Parameters<typeof compileFilter>[0] },
): Promise<Batch[]> {
  const reader = devReader();
  const { entries } = await loadClusterIdx(crawl, { localDir: '/nonexistent', reader });
  const out: Batch[] = [];
  const publisher: BatchPublisher = { publish: async (b) => void out.push(b), close: async () => undefined };
  await runBatcher(
    {
      crawl, dataset: crawl, datasetId: opts.datasetId, fingerprint: runFingerprint({}), plan: planBlocks(entries, { maxBlocks: opts.maxBlocks ?? null }),
      startIndex: 0, filter: compileFilter(opts.filter ?? {}, { registeredDomainOf }), targets: null, batchSize: opts.batchSize ?? 60, blockConcurrency: 2,
      publishWindow: 4, publishAttempts: 1,
    },
    { reader, publisher, store: new MemoryObjectStore(), clock: systemClock },
  );
  return out;
}
