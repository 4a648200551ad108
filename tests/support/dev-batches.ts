import {
  compileFilter, emptyDatasetRegistry, ensureDatasetIn, extractDocument, registeredDomainOf, serializeDatasetRegistry, type Batch, type BatchPublisher,
} from '@ccpipe/core';
import { FsObjectStore, FsRangeReader, MemoryObjectStore, systemClock, writeParquetPart } from '@ccpipe/adapters';
import { loadClusterIdx, planBlocks, runBatcher, runFingerprint } from '@ccpipe/batcher';
import type { BatchDeps } from '@ccpipe/worker';
import { CC_MIRROR_DEV, DEV_CRAWLS } from './corpus';

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
  const publisher: BatchPublisher = { publish: async (b) => void out.push(b as Batch), close: async () => undefined };
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

/**
 * A data store in `dir` whose dataset registry names cc-mirror-dev's crawls (ids by crawl name), and the deps a worker
 * processes their batches with: the mirror's files, real extraction, DuckDB parts. The start of the end-to-end tests.
 */
export async function devStore(dir: string): Promise<{ store: FsObjectStore; ids: Record<string, number>; deps: BatchDeps }> {
  const store = new FsObjectStore({ root: dir });
  let reg = emptyDatasetRegistry();
  for (const crawl of DEV_CRAWLS) reg = ensureDatasetIn(reg, crawl, crawl, '2030-01-01T00:00:00Z').registry;
  await store.put('datasets.json', serializeDatasetRegistry(reg));
  const ids = Object.fromEntries(reg.datasets.map((d) => [d.name, d.id]));
  const deps: BatchDeps = {
    reader: devReader(), store,
    extract: async (html, url) => extractDocument(html, { url }),
    writePart: (rows) => writeParquetPart(rows, { engine: 'duckdb' }),
  };
  return { store, ids, deps };
}
