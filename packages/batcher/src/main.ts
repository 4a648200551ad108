import { tmpdir } from 'node:os';
import { CcpError, compileFilter, hasCode, loadConfig, registeredDomainOf, type Config, type ConfigKey } from '@ccpipe/core';
import {
  AmqpBatchPublisher,
  AmqpConnection,
  UndiciRangeReader,
  giveUpAfterRefusedMs,
  logBrokerEvent,
  declareTopology,
  openObjectStore,
  runService,
  systemClock,
  topologyNames,
} from '@ccpipe/adapters';
import { emptySummary, NOT_TARGETED, runBatcher, type BatcherSummary } from './batcher';
import { emptyFilterWatch } from './empty-filter-watch';
import { completeCheckpoint, loadCheckpoint, runFingerprint } from './checkpoint';
import { loadClusterIdx } from './cluster-idx-source';
import { ensureDataset } from '@ccpipe/adapters';
import { batcherMetrics } from './metrics';
import { planBlocks } from './plan-blocks';
import { batcherProgress, chainEvents } from './progress';
import { TargetSet } from './targets';
import { loadWarcPaths, runBulkBatcher } from './bulk';
import { chooseReadMode } from './read-mode';

const USER_AGENT = 'ccpipe/0.1 (+https://github.com/ccpipe/ccpipe)';

/**
 * The filter spec the config describes. It is also what the dataset's checkpoint fingerprint records (runFingerprint),
 * so every rule must be here, and a rule left unset must add no key: datasets begun before a rule existed keep their
 * fingerprint.
 */
export function filterSpecOf(c: Config): Parameters<typeof compileFilter>[0] {
  return {
    status: c.filterStatus.length > 0 ? c.filterStatus : null,
    languages: c.filterLanguages.length > 0 ? { mode: c.filterLanguageMode, codes: c.filterLanguages } : null,
    ...(c.filterMimes ? { mimes: c.filterMimes } : {}),
    ...(c.filterUrlRegex ? { urlRegex: c.filterUrlRegex } : {}),
    ...(c.filterMimesDetected ? { mimeDetected: c.filterMimesDetected } : {}),
    ...(c.filterUrlRegexExclude ? { urlRegexExclude: c.filterUrlRegexExclude } : {}),
    ...(c.filterDomainsAllow ? { domainsAllow: c.filterDomainsAllow } : {}),
    ...(c.filterDomainsDeny ? { domainsDeny: c.filterDomainsDeny } : {}),
  };
}

/** What the batcher warns when its filter kept no record of a block-sized sample (or of a whole shorter run). */
export const FILTER_KEPT_NOTHING =
  'the filter kept no record: check --languages (ISO 639-3 codes), --status, --mimes and the other filter flags against the dropped counts; to change a dataset\'s filter, run again with --reset-checkpoint';

/**
 * What a batcher started without a crawl says (compose starts it with `CCPIPE_CRAWL` unset when none was given, so
 * that every other service and command works without one): the variable and flag to set, and how to start it again.
 */
export const MISSING_CRAWL =
  'no crawl to index: set CCPIPE_CRAWL (or --crawl) to a crawl name such as CC-MAIN-2024-30; under docker compose: CCPIPE_CRAWL=CC-MAIN-2024-30 docker compose up -d batcher';

/**
 * `ccpipe batcher`: config → logger → metrics → adapters → run. Resolves to the exit code: 0 when every planned
 * block is published and confirmed, 1 on failure (the checkpoint keeps what was confirmed), 130 when interrupted.
 */
export async function batcherMain(
  flags: Partial<Record<ConfigKey, unknown>>,
  env: NodeJS.ProcessEnv,
  /** `resetCheckpoint`: start over a dataset begun with other settings that published no batch ({@link loadCheckpoint}). */
  opts: { resetCheckpoint?: boolean } = {},
): Promise<number> {
  const config = loadConfig(env, flags);
  if (!config.crawl) throw new CcpError('CCP_ERR_CONFIG', MISSING_CRAWL, { retryable: false });
  const crawl = config.crawl;
  const datasetName = config.dataset ?? crawl;
  return runService(
    {
      service: 'batcher',
      logLevel: config.logLevel,
      // it exits within seconds of its last publish: without a final scrape Prometheus may never see its counts
      metrics: { host: config.metricsHost, port: config.metricsPort ?? 9000, finalScrapeMs: config.metricsFinalScrapeMs },
      onSignal: (log, sig) => log.warn({ sig }, 'stopping: unconfirmed batches are published again by the next run'),
    },
    async ({ log: rootLog, registry, signal, defer }) => {
      const log = rootLog.child({ crawl, dataset: datasetName });
      const metrics = batcherMetrics(registry);
      const store = openObjectStore(config.data, config);
      defer(() => store.close());
      const reader = new UndiciRangeReader({ baseUrl: config.baseUrl, connections: config.connections, userAgent: USER_AGENT, expectGzip: true, observer: metrics.fetchObserver });
      defer(() => reader.close());

      const { entries, source } = await loadClusterIdx(crawl, { localDir: config.clusterIdxDir, reader, signal, baseUrl: config.baseUrl });
      const targets = config.domainsFile ? await TargetSet.fromFile(config.domainsFile) : null;
      const plan = planBlocks(entries, { targets, maxBlocks: config.maxBlocks ?? null });
      const fingerprint = runFingerprint({ crawl, filter: filterSpecOf(config), batchSize: config.batchSize, targets: targets?.ranges ?? null, maxBlocks: config.maxBlocks ?? null });
      const checkpoint = await loadCheckpoint(store, datasetName, fingerprint, { reset: opts.resetCheckpoint === true });
      const filter = compileFilter(filterSpecOf(config), { registeredDomainOf });
      const bulk = await chooseReadMode({ asked: config.batcherMode, checkpoint, crawl, plan, filter, targets, maxBlocks: config.maxBlocks ?? null, reader, signal });
      const choice = bulk.choice;
      log.info({ mode: choice.mode, asked: choice.asked, reason: choice.reason, ...(choice.estimate !== undefined && { estimate: choice.estimate }) }, 'read mode chosen');
      metrics.mode.set({ mode: choice.mode }, 1);
      const startIndex = checkpoint?.nextPlanIndex ?? 0;
      metrics.planned.set(plan.length);
      metrics.checkpoint.set(choice.mode === 'bulk' ? 0 : startIndex);
      log.info({ clusterIdx: source, blocksInIndex: entries.length, planned: plan.length, resumeAt: startIndex, targets: targets?.size ?? 0 }, 'plan ready');
      // bulk: the checkpoint counts WARC file jobs; one past every job was complete (a kill before `done` was saved)
      if (choice.mode === 'bulk' && checkpoint !== null && (checkpoint.done || checkpoint.nextPlanIndex >= checkpoint.planLength)) {
        await completeCheckpoint(store, checkpoint, checkpoint.planLength, new Date(systemClock.now()));
        log.info({ jobs: checkpoint.planLength }, 'run already complete');
        return 0;
      }
      if (choice.mode === 'ranges' && (checkpoint?.done || startIndex >= plan.length)) {
        // a run stopped between its last checkpoint save and the one saying done: it was complete, say so now
        if (checkpoint !== null) await completeCheckpoint(store, checkpoint, plan.length, new Date(systemClock.now()));
        log.info({ planned: plan.length }, 'run already complete');
        return 0;
      }

      const { entry: dataset, storeId } = await ensureDataset(store, datasetName, crawl, new Date());

      const connection = new AmqpConnection({
        url: config.rabbitmqUrl,
        name: 'ccpipe-batcher',
        giveUpAfterRefusedMs: giveUpAfterRefusedMs(config.brokerGiveUpMs),
        onEvent: (e) => logBrokerEvent(log, e),
      });
      defer(() => connection.close());
      try {
        await connection.start(signal);
      } catch (err) {
        // stopped while the broker could not be reached: nothing published this run, the checkpoint stands
        if (signal.aborted) return 130;
        // refused for --broker-give-up-ms: logged with what to check ('broker unusable: stopping'); the checkpoint stands
        if (hasCode(err, 'CCP_ERR_QUEUE_REFUSED')) return 1;
        throw err;
      }
      const names = topologyNames(config.queuePrefix);
      const ch = await connection.createChannel(signal);
      await declareTopology(ch, names);
      await ch.close();
      const publisher = new AmqpBatchPublisher({ connection, names, confirmTimeoutMs: config.publishConfirmTimeoutMs });
      defer(() => publisher.close());

      const running = emptySummary();
      const progress = batcherProgress({ total: plan.length, done: startIndex, tty: process.stderr.isTTY === true, log, summary: () => running });
      let summary: BatcherSummary;
      const deps = {
        reader, publisher, store, clock: systemClock, signal, summary: running,
        events: chainEvents(metrics.events, progress.events, {
          onBlockFailed: (e: { ordinal: number; code: string }) => log.error({ ordinal: e.ordinal, code: e.code }, 'CDX block skipped: it cannot be read or inflated (kept in the checkpoint as failedBlocks)'),
        }, emptyFilterWatch((e) => log.warn({ ...e, filter: filterSpecOf(config) }, FILTER_KEPT_NOTHING))),
      };
      try {
        summary = choice.mode === 'bulk' ? await runBulkBatcher({
          crawl, dataset: datasetName, datasetId: dataset.id, store: storeId, fingerprint, plan, filter, targets, batchSize: config.batchSize,
          publishWindow: 256, publishAttempts: 8, warcPaths: bulk.warcPaths ?? await loadWarcPaths(crawl, reader, signal),
          spillDir: config.spillDir ?? tmpdir(), startJob: checkpoint?.nextPlanIndex ?? 0, choice,
        }, deps) : await runBatcher(
          {
            crawl,
            dataset: datasetName,
            datasetId: dataset.id,
            store: storeId,
            fingerprint,
            plan,
            startIndex,
            startBatches: checkpoint?.batchesPublished,
            startRecords: checkpoint?.recordsPublished,
            startFailedBlocks: checkpoint?.failedBlocks,
            startFailedCount: checkpoint?.failedBlockCount,
            filter,
            targets,
            batchSize: config.batchSize,
            blockConcurrency: 4,
            publishWindow: 256,
            publishAttempts: 8,
            modeChoice: choice,
          },
          deps,
        );
      } finally {
        progress.stop();
      }
      const failed = summary.failedBlocks.length + (checkpoint?.failedBlockCount ?? checkpoint?.failedBlocks?.length ?? 0);
      const { failedBlocks: _skipped, ...totals } = summary;
      const unparsable = summary.dropped['cdx_line'] ?? 0;
      const fields = { ...totals, failedBlocks: failed, datasetId: dataset.id };
      if (!summary.done) log.info(fields, 'batcher stopped');
      // blocks skipped and CDX lines that do not parse are records lost to the index: say how many and why, at warn
      else if (failed > 0 || unparsable > 0) {
        const codes: Record<string, number> = {};
        for (const b of summary.failedBlocks) codes[b.code] = (codes[b.code] ?? 0) + 1;
        log.warn({ ...fields, failedBlockCodes: codes, unparsableLines: unparsable }, failed > 0 ? 'batcher done, with blocks skipped' : 'batcher done, with CDX lines that do not parse');
      } else log.info(fields, 'batcher done');
      // a run shorter than the sample the watch waits for says it here (records of other domains alone do not count)
      if (summary.kept === 0 && Object.keys(summary.dropped).some((r) => r !== NOT_TARGETED)) {
        log.warn({ records: summary.records, dropped: summary.dropped, filter: filterSpecOf(config) }, FILTER_KEPT_NOTHING);
      }
      return summary.done ? 0 : 130;
    },
  );
}
