import { setMaxListeners } from 'node:events';
import { availableParallelism } from 'node:os';
import { compileFilter, registeredDomainOf, type Config, type ObjectStore } from '@ccpipe/core';
import { ExtractionPool, UndiciRangeReader, closeDuckDbParquetEngine, ensureDataset, systemClock, writeParquetPart, type Logger } from '@ccpipe/adapters';
import type { Registry } from 'prom-client';
import {
  batcherMetrics, chainEvents, completeCheckpoint, filterSpecOf, loadCheckpoint, loadClusterIdx, planBlocks, runBatcher, runFingerprint, TargetSet,
  type BatcherSummary, type FailedBlock, type PlannedBlock,
} from '@ccpipe/batcher';
import { StoreIdentity, extractionPorts, pageThreadPath, qualityOptionsOf, startWorker, workerMetrics } from '@ccpipe/worker';
import { ProcessedQueue, keptDeadLetters } from './processed-queue';
import type { RunCounters } from './run-progress';

const USER_AGENT = 'ccpipe/0.1 (+https://github.com/ccpipe/ccpipe)';

/** What one crawl's ingestion did. */
export interface CrawlIngest {
  crawl: string;
  dataset: string;
  datasetId: number;
  planned: number;
  /** Plan index the run started at (from the checkpoint). */
  resumedAt: number;
  /** Null when the checkpoint said the crawl was already complete. */
  summary: BatcherSummary | null;
  /**
   * What became of the kept records in the batches this run's worker completed: rows written, records that failed
   * (fetch, WARC, extraction…) and those by reason (error code). A kept record is not an indexed one.
   */
  written: { rows: number; failed: number; failures: Record<string, number> };
}

/** Inputs of {@link ingestCrawls}. */
export interface IngestParams {
  config: Config;
  crawls: readonly string[];
  /** Where cluster.idx, CDX blocks and WARCs are read (a mirror or data.commoncrawl.org). */
  baseUrl: string;
  store: ObjectStore;
  log: Logger;
  counters: RunCounters;
  /** Where the batchers' and the worker's metrics go (`ccpipe_batcher_*`, `ccpipe_worker_*`, as the services name them). */
  registry: Registry;
  onProgress?: () => void;
  signal: AbortSignal;
}

/**
 * Ingests every crawl into the store in this process: one batcher per crawl (run concurrently) publishing to an
 * in-process {@link ProcessedQueue}, one worker consuming it with an extraction thread pool. Resolves when every
 * planned block's batches are processed (markers written) or dead-lettered; each crawl's checkpoint then says done.
 * A crawl whose checkpoint is already done is skipped; otherwise the run resumes at its checkpoint.
 * Rejects with the first batcher error or the worker's crash error (everything confirmed stays checkpointed);
 * with the abort reason when `signal` fires (in-flight batches finish first). Closes what it opened.
 */
export async function ingestCrawls(p: IngestParams): Promise<CrawlIngest[]> {
  const { config, store, log, counters, signal } = p;
  // Every in-flight publish and block read listens on the run's signal (up to the publish window plus reads).
  setMaxListeners(256, signal);
  const closers: (() => Promise<unknown>)[] = [];
  try {
    // the services' metrics on one registry; the batchers and the worker each read through their own reader, as the
    // separate services do, so their HTTP counters stay apart
    const batcherM = batcherMetrics(p.registry);
    const workerM = workerMetrics(p.registry);
    const reader = new UndiciRangeReader({ baseUrl: p.baseUrl, connections: config.connections, userAgent: USER_AGENT, expectGzip: true, observer: batcherM.fetchObserver });
    closers.push(() => reader.close());
    const warcReader = new UndiciRangeReader({ baseUrl: p.baseUrl, connections: config.connections, userAgent: USER_AGENT, expectGzip: true, observer: workerM.fetch });
    closers.push(() => warcReader.close());
    const targets = config.domainsFile ? await TargetSet.fromFile(config.domainsFile) : null;
    const filterSpec = filterSpecOf(config);
    const filter = compileFilter(filterSpec, { registeredDomainOf });

    // Plan every crawl first (the dataset registry has one writer: register datasets one after the other).
    const runs: {
      ingest: CrawlIngest; store: string; plan: PlannedBlock[]; fingerprint: string; startBatches: number | undefined; startRecords: number | undefined; startFailedBlocks: FailedBlock[] | undefined; startFailedCount: number | undefined;
    }[] = [];
    for (const crawl of p.crawls) {
      const dataset = p.crawls.length === 1 && config.dataset ? config.dataset : crawl;
      const { entries } = await loadClusterIdx(crawl, { localDir: config.clusterIdxDir, reader, signal, baseUrl: p.baseUrl });
      const plan = planBlocks(entries, { targets, maxBlocks: config.maxBlocks ?? null });
      const fingerprint = runFingerprint({ crawl, filter: filterSpec, batchSize: config.batchSize, targets: targets?.ranges ?? null, maxBlocks: config.maxBlocks ?? null });
      // a run stopped between its last checkpoint save and the one saying done was complete: completeCheckpoint says so
      const loaded = await loadCheckpoint(store, dataset, fingerprint);
      const cp = loaded === null ? null : await completeCheckpoint(store, loaded, plan.length, new Date());
      const { entry, storeId } = await ensureDataset(store, dataset, crawl, new Date());
      const resumedAt = cp?.done ? plan.length : Math.min(cp?.nextPlanIndex ?? 0, plan.length);
      runs.push({ ingest: { crawl, dataset, datasetId: entry.id, planned: plan.length, resumedAt, summary: null, written: { rows: 0, failed: 0, failures: {} } }, store: storeId, plan, fingerprint, startBatches: cp?.batchesPublished, startRecords: cp?.recordsPublished, startFailedBlocks: cp?.failedBlocks, startFailedCount: cp?.failedBlockCount });
      counters.blocksPlanned += plan.length;
      counters.blocksRead += resumedAt;
      counters.blocksResumed += resumedAt;
      log.info({ crawl, dataset, datasetId: entry.id, planned: plan.length, resumeAt: resumedAt }, resumedAt >= plan.length ? 'crawl already ingested' : 'plan ready');
    }
    batcherM.planned.set(counters.blocksPlanned);
    const checkpointAt = new Map(runs.map((r) => [r.ingest.crawl, r.ingest.resumedAt]));
    const setCheckpoint = (): void => void batcherM.checkpoint.set([...checkpointAt.values()].reduce((a, b) => a + b, 0));
    setCheckpoint();
    p.onProgress?.();
    const todo = runs.filter((r) => r.ingest.resumedAt < r.plan.length);
    // batches an earlier run dead-lettered and kept (ProcessedQueue): tried again first, even when every crawl is done
    const kept = (await keptDeadLetters(store)).length;
    if (todo.length === 0 && kept === 0) return runs.map((r) => r.ingest);

    // the worker's thread script, as `ccpipe worker` runs it: a record's bytes go to the thread, WARC/HTTP, charset and
    // extraction happen there
    const pool = new ExtractionPool({ size: config.extractThreads ?? Math.max(1, availableParallelism() - 1), timeoutMs: config.extractTimeoutMs, dom: config.dom, workerPath: pageThreadPath() });
    await pool.start();
    closers.push(() => pool.close());
    closers.push(() => closeDuckDbParquetEngine());

    const queue = new ProcessedQueue({ store });
    const consumer = queue.consumer({ prefetch: config.prefetch });
    const worker = await startWorker(
      consumer,
      {
        reader: warcReader,
        store,
        ...extractionPorts(pool, () => workerM.extractSeconds.startTimer()),
        writePart: (rows) => writeParquetPart(rows, { engine: config.parquetEngine, includeText: config.includeText, rowGroupSize: config.rowGroupSize }),
        events: workerM.batch,
      },
      { concurrency: config.concurrency, includeText: config.includeText, extract: config.extract, quality: qualityOptionsOf(config), identity: new StoreIdentity(store) },
      {
        onBatchDone: (e) => {
          workerM.worker.onBatchDone?.(e);
          counters.batchesDone++;
          counters.rows += e.marker.rows;
          const w = runs.find((r) => r.ingest.datasetId === e.marker.datasetId && r.ingest.crawl === e.marker.crawl)?.ingest.written;
          // a batch an earlier run completed (skipped) was counted by that run
          if (w !== undefined && !e.skipped) {
            w.rows += e.marker.rows;
            w.failed += e.marker.failed;
            for (const [reason, n] of Object.entries(e.marker.failures)) w.failures[reason] = (w.failures[reason] ?? 0) + n;
          }
          if (e.marker.failed > 0) log.warn({ batchId: e.batchId, rows: e.marker.rows, failed: e.marker.failed, failures: e.marker.failures }, 'batch done, with records failed');
          else log.debug({ batchId: e.batchId, rows: e.marker.rows, failed: e.marker.failed, skipped: e.skipped, ms: e.ms }, 'batch done');
          p.onProgress?.();
        },
        onBatchFailed: (e) => {
          workerM.worker.onBatchFailed?.(e);
          if (e.action !== 'requeue') counters.batchesFailed++;
          log.warn({ batchId: e.batchId, action: e.action, reason: e.reason, err: e.error }, 'batch failed');
          p.onProgress?.();
        },
      },
    );
    closers.push(() => worker.drain(30_000));
    void worker.crashed.then((err) => queue.failAll(err));

    const publisher = queue.publisher();
    closers.push(() => publisher.close());
    if (kept > 0) {
      const r = await queue.replay(signal);
      log.info({ tried: r.tried, done: r.done, unreadable: r.unreadable }, 'batches kept from an earlier run tried again');
    }
    const results = await Promise.allSettled(
      todo.map(async (r) => {
        r.ingest.summary = await runBatcher(
          {
            crawl: r.ingest.crawl, dataset: r.ingest.dataset, datasetId: r.ingest.datasetId, store: r.store, fingerprint: r.fingerprint, plan: r.plan,
            startIndex: r.ingest.resumedAt, startBatches: r.startBatches, startRecords: r.startRecords, startFailedBlocks: r.startFailedBlocks, startFailedCount: r.startFailedCount, filter, targets, batchSize: config.batchSize, blockConcurrency: 4, publishWindow: 64, publishAttempts: 3,
          },
          {
            reader, publisher, store, clock: systemClock, signal,
            events: chainEvents(batcherM.events, {
              onBlock: (e) => {
                counters.blocksRead++;
                counters.records += e.records;
                counters.kept += e.kept;
                p.onProgress?.();
              },
              onBatchPublished: () => void counters.batchesPublished++,
              onCheckpoint: (n) => {
                checkpointAt.set(r.ingest.crawl, n);
                setCheckpoint();
              },
              onBlockFailed: (e) => {
                counters.blocksFailed++;
                log.error({ crawl: r.ingest.crawl, ordinal: e.ordinal, code: e.code }, 'CDX block skipped: it cannot be read or inflated');
                p.onProgress?.();
              },
            }),
          },
        );
        log.info({ crawl: r.ingest.crawl, ...r.ingest.summary }, r.ingest.summary.done ? 'crawl ingested' : 'crawl stopped');
      }),
    );
    const failed = results.find((x): x is PromiseRejectedResult => x.status === 'rejected');
    if (failed) throw failed.reason;
    for (const { ingest: c } of runs) {
      if (c.written.failed > 0) {
        log.warn({ crawl: c.crawl, kept: c.summary?.kept ?? null, rows: c.written.rows, failed: c.written.failed, failures: c.written.failures }, 'records kept by the filter failed to be indexed');
      }
    }
    if (queue.counts.deadLettered > 0) {
      log.warn({ batches: queue.counts.deadLettered }, 'batches could not be processed: kept under deadletters/ in the data store and tried again by the next run');
    }
    signal.throwIfAborted();
    return runs.map((r) => r.ingest);
  } finally {
    for (const close of closers.reverse()) await close().catch((err: unknown) => log.warn({ err }, 'close failed'));
  }
}
