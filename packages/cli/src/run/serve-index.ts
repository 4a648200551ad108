import type { Registry } from 'prom-client';
import type { ObjectStore } from '@ccpipe/core';
import type { Logger } from '@ccpipe/adapters';
import { openIndexSource, runMerge, type MergeResult } from '@ccpipe/index';
import { indexSourceReporting, startApi, type StatusProvider } from '@ccpipe/api';

/** A merged index behind a running API. */
export interface ServedIndex {
  merge: MergeResult;
  url: string;
  port: number;
  /**
   * The registered domain with the most URLs in dataset `datasetId` of the version served (its top-domains list), for
   * example queries; null when the dataset has none or the version has no such list.
   */
  largestDomain(datasetId: number): Promise<string | null>;
  /** Closes the API, then the index source. Idempotent. */
  close(): Promise<void>;
}

/**
 * Folds every completed batch into a new index version (a re-run with nothing new keeps the current one), then
 * opens that index and serves the API on `host:port` (0 = a free port). Throws the merge, open or listen error;
 * whatever was opened before the failure is closed.
 */
export async function mergeAndServe(opts: {
  store: ObjectStore;
  /** The store's local root when it is a directory (the merge reads parts in place); absent for S3. */
  dataDir?: string;
  rowGroupSize: number;
  port: number;
  host: string;
  registry: Registry;
  log: Logger;
  status: StatusProvider;
}): Promise<ServedIndex> {
  const local = opts.dataDir === undefined ? {} : { dataDir: opts.dataDir };
  const merge = await runMerge({ store: opts.store, ...local, rowGroupSize: opts.rowGroupSize, keepVersions: 2, graceMs: 10 * 60_000 });
  opts.log.info({ version: merge.version, published: merge.published, batches: merge.batches, rowsIn: merge.rowsIn, urls: merge.urls, domains: merge.domains, ms: merge.ms }, 'merged');
  if (merge.gcError !== undefined) opts.log.warn({ code: merge.gcError }, 'garbage collection failed after the merge; the next merge deletes what is left');
  // the same warnings and index and lake-reader metrics as `ccpipe api` (version served, failed loads, row-group cache)
  const reporting = indexSourceReporting(opts.log, opts.registry);
  const source = await openIndexSource({ store: opts.store, ...local, warmUp: true, onError: reporting.onError });
  try {
    reporting.watch(source);
    // loaded and checked before the address is printed, as `ccpipe api` does: a damaged index fails the run here, not
    // at a user's first query
    await source.current();
    const api = await startApi({ source, port: opts.port, host: opts.host, registry: opts.registry, logger: opts.log.child({ component: 'http' }), statusProvider: opts.status });
    let closing: Promise<void> | null = null;
    return {
      merge,
      url: api.url,
      port: api.port,
      largestDomain: async (datasetId) => (await source.current())?.topDomains?.(datasetId, 1)?.[0]?.domain ?? null,
      close: () =>
        (closing ??= (async () => {
          await api.close().catch(() => undefined);
          await source.close();
        })()),
    };
  } catch (err) {
    await source.close().catch(() => undefined);
    throw err;
  }
}
