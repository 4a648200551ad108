import { InvalidArgumentError, type Command } from 'commander';
import { CcpError, loadConfig, type ConfigKey } from '@ccpipe/core';
import { createLogger, shutdownSignal } from '@ccpipe/adapters';
import { runEmbedded } from '../run/run-embedded';
import { STORE_KEYS, addConfigFlags, configFlagsOf } from './config-flags';
import { QUALITY_KEYS, addQualityFlags, foldQualityFlags } from './quality-flags';

/** Config-table flags `ccpipe run` takes (everything the batcher and worker use, minus the broker's). */
const RUN: ConfigKey[] = [...STORE_KEYS,
  'logLevel', 'baseUrl', 'connections', 'clusterIdxDir', 'batchSize', 'maxBlocks', 'domainsFile', 'filterStatus', 'filterLanguages',
  'filterLanguageMode', 'filterMimes', 'filterMimesDetected', 'filterUrlRegex', 'filterUrlRegexExclude', 'filterDomainsAllow', 'filterDomainsDeny', 'prefetch', 'concurrency', 'extractThreads', 'extractTimeoutMs', 'dom', 'includeText', 'extract',
  'parquetEngine', 'rowGroupSize', 'lakeRowGroupSize', 'metricsPort', 'metricsHost', ...QUALITY_KEYS,
];

const CRAWL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

function fileList(v: string): string[] {
  const list = v.split(',').map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw new InvalidArgumentError('--import takes file paths separated by commas');
  return list;
}

function crawlList(v: string): string[] {
  const list = v.split(',').map((s) => s.trim()).filter(Boolean);
  if (list.length === 0 || !list.every((c) => CRAWL.test(c))) throw new InvalidArgumentError('--crawl takes crawl names separated by commas, e.g. CC-MAIN-2024-30,CC-MAIN-2024-33');
  return [...new Set(list)];
}

function port(v: string): number {
  if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new InvalidArgumentError('port must be 0-65535');
  return Number(v);
}

interface RunFlags {
  crawl?: string[];
  port: number;
  host: string;
  exitAfterMerge?: boolean;
  [k: string]: unknown;
}

/**
 * `ccpipe run [--crawl A,B --base-url URL] [--port P] [--host H] [--data DIR] [--max-blocks N] [--exit-after-merge]`:
 * the whole pipeline in one process (in-process queue), then the API. Without --crawl it ingests the bundled sample
 * crawl through the built-in mirror. Sets `process.exitCode` (0, 1, or 130 when interrupted before serving).
 */
export function registerRunCommand(program: Command): void {
  addQualityFlags(addConfigFlags(
    program
      .command('run')
      .description('run batcher, worker, merger and API in one process (default: over the bundled sample crawl), then serve the API')
      .option('--crawl <names>', 'crawls to ingest, comma-separated (default: the bundled sample crawls via the built-in mirror)', crawlList)
      .option('--port <p>', 'API port (0 picks a free one)', port, 8080)
      .option('--host <h>', 'API bind address', '127.0.0.1')
      .option('--import <files>', 'CSV, TSV or JSONL files to import (comma-separated; docs/import.md) before the merge: with no --crawl, the sample crawl is left out', fileList)
      .option('--dataset <name>', 'the dataset --import fills')
      .option('--exit-after-merge', 'exit once the index is merged and the API answered (for scripts and tests)'),
    RUN,
  )).action(async (flags: RunFlags) => {
    const tty = process.stderr.isTTY === true;
    const configFlags = configFlagsOf(flags, RUN);
    foldQualityFlags(flags, configFlags, process.env);
    if (flags.crawl === undefined && configFlags.baseUrl !== undefined) {
      // it would be ignored: without --crawl the bundled sample is served by the built-in mirror
      throw new CcpError('CCP_ERR_CONFIG', '--base-url needs --crawl: name the crawls to ingest from that mirror (without --crawl, run ingests the bundled sample)');
    }
    if ((flags.import === undefined) !== (flags.dataset === undefined)) throw new CcpError('CCP_ERR_CONFIG', '--import and --dataset go together: the files and the dataset they fill');
    const config = loadConfig(process.env, configFlags);
    // On a terminal the bar shows progress and only warnings are logged; otherwise pino JSON at the chosen level.
    const level = tty && config.logLevel === 'info' ? 'warn' : config.logLevel;
    const log = createLogger({ service: 'run', level });
    // on a terminal a plain line (the log there shows warnings only, as JSON); otherwise one log line per signal
    const shutdown = shutdownSignal((sig) =>
      tty ? void process.stderr.write(`\nStopping (${sig}); press Ctrl-C again to exit at once.\n`) : log.warn({ sig }, 'stopping'),
    );
    try {
      process.exitCode = await runEmbedded(
        {
          config, crawls: flags.crawl ?? (flags.import !== undefined ? [] : null), port: flags.port, host: flags.host, exitAfterMerge: flags.exitAfterMerge === true,
          imports: flags.import === undefined ? null : { files: flags.import as string[], dataset: String(flags.dataset) },
        },
        { print: (l) => void process.stdout.write(`${l}\n`), log, tty, signal: shutdown.signal },
      );
    } finally {
      shutdown.dispose();
      log.flush?.();
    }
  });
}
