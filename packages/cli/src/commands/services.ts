import type { Command } from 'commander';
import type { ConfigKey } from '@ccpipe/core';
import { batcherMain } from '@ccpipe/batcher';
import { workerMain } from '@ccpipe/worker';
import { STORE_KEYS, addConfigFlags, configFlagsOf } from './config-flags';
import { QUALITY_KEYS, addQualityFlags, foldQualityFlags } from './quality-flags';

const COMMON: ConfigKey[] = [...STORE_KEYS, 'logLevel', 'rabbitmqUrl', 'brokerGiveUpMs', 'queuePrefix', 'baseUrl', 'metricsPort', 'metricsHost', 'connections'];
const BATCHER: ConfigKey[] = [
  ...COMMON, 'crawl', 'dataset', 'clusterIdxDir', 'batchSize', 'maxBlocks', 'domainsFile', 'filterStatus', 'filterLanguages',
  'filterLanguageMode', 'filterMimes', 'filterMimesDetected', 'filterUrlRegex', 'filterUrlRegexExclude', 'filterDomainsAllow', 'filterDomainsDeny', 'publishConfirmTimeoutMs',
  'metricsFinalScrapeMs', 'batcherMode', 'spillDir',
];
const WORKER: ConfigKey[] = [...COMMON, 'prefetch', 'concurrency', 'extractThreads', 'extractTimeoutMs', 'dom', 'includeText', 'extract', 'parquetEngine', 'rowGroupSize', ...QUALITY_KEYS];

/** `ccpipe batcher` and `ccpipe worker`: flags mirror the config table (flag > env var > default). */
export function registerServiceCommands(program: Command): void {
  addConfigFlags(
    program.command('batcher').description("stream a crawl's cluster.idx, filter CDX records and publish batches to RabbitMQ"),
    BATCHER,
  )
    // a one-off decision, not a setting: no env var, so it cannot stay set by accident
    .option('--reset-checkpoint', "start over a dataset begun with other settings (filter, batch size, targets, max blocks) that published no batch, e.g. after a filter that kept nothing")
    .action(async (opts: Record<string, unknown>) => {
      process.exitCode = await batcherMain(configFlagsOf(opts, BATCHER), process.env, { resetCheckpoint: opts['resetCheckpoint'] === true });
    });
  addQualityFlags(addConfigFlags(
    program.command('worker').description('consume batches: fetch WARC records, extract text, write Parquet parts and completion markers'),
    WORKER,
  )).action(async (opts: Record<string, unknown>) => {
    const flags = configFlagsOf(opts, WORKER);
    foldQualityFlags(opts, flags, process.env);
    process.exitCode = await workerMain(flags, process.env);
  });
}
