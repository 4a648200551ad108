import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { CcpError, loadConfig, type ConfigKey } from '@ccpipe/core';
import { createLogger, localStoreDir, openObjectStore } from '@ccpipe/adapters';
import { DEFAULT_LAKE_ZSTD_LEVEL, DEFAULT_MAX_RUNS, runMerge, type LakeColumnSet, type MergeOptions, type MergeResult } from '@ccpipe/index';
import { mergeProgress } from '../merge/merge-progress';
import { DEFAULT_RESCAN_EVERY_MS, mergerMain } from '../merge/merger-main';
import { serveOneOffMergeMetrics } from '../merge/one-off-metrics';
import { STORE_KEYS, addConfigFlags, configFlagsOf } from './config-flags';
import { distributedTaskRunner } from './merge-worker';

const MERGE: ConfigKey[] = [...STORE_KEYS, 'lakeRowGroupSize', 'logLevel', 'metricsPort', 'metricsHost', 'mergeCacheDir', 'rabbitmqUrl', 'queuePrefix', 'mergeDistribute'];

/** Where `ccpipe merge` writes: its one JSON result line (`write`, stdout) and its progress (`progress`, stderr). */
export interface MergeCommandIo {
  write(line: string): void;
  /** Phase lines when it is a TTY, pino JSON lines otherwise (default process.stderr); tests pass their own. */
  progress?: NodeJS.WritableStream & { isTTY?: boolean };
}

/** Parses a non-negative integer flag. @throws Error naming the flag. */
function intFlag(name: string, v: unknown, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new CcpError('CCP_ERR_CONFIG', `--${name} must be an integer ≥ ${min}`);
  return n;
}

/** Parses a `--<name> <seconds>` flag (a positive number, fractions allowed) into ms. @throws Error naming the flag. */
function secondsFlag(name: string, v: unknown): number | null {
  if (v === undefined) return null;
  const s = Number(v);
  if (!Number.isFinite(s) || s <= 0) throw new CcpError('CCP_ERR_CONFIG', `--${name} must be a number of seconds > 0`);
  return Math.round(s * 1000);
}

/** Parses `--min-new-ratio <r>` (a number ≥ 0; 0 merges on every tick). @throws Error naming the flag. */
function ratioFlag(v: unknown): number {
  if (v === undefined) return 0;
  const r = Number(v);
  if (!Number.isFinite(r) || r < 0) throw new CcpError('CCP_ERR_CONFIG', '--min-new-ratio must be a number ≥ 0');
  return r;
}

/** Parses `--lake-zstd-level` (ZSTD's levels 1..22). @throws Error naming the flag. */
function zstdLevelFlag(v: unknown): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 22) throw new CcpError('CCP_ERR_CONFIG', '--lake-zstd-level must be an integer from 1 to 22');
  return n;
}

/** Checks `--memory-limit` as DuckDB reads sizes (a positive number and a unit: 512MB, 1GB, 1.5GiB), before a merge starts. */
function memoryLimitFlag(v: unknown): string {
  if (typeof v === 'string' && /^\s*\d+(\.\d+)?\s*([KMGT]i?B?|B|bytes)\s*$/i.test(v) && Number.parseFloat(v) > 0) return v.trim();
  throw new CcpError('CCP_ERR_CONFIG', "--memory-limit must be a size such as '256MB', '1GB' or '1.5GiB'");
}

/** Parses `--text-versions`: a whole number ≥ 1, or `all`. @throws CcpError CCP_ERR_CONFIG otherwise. */
export function textVersionsFlag(v: unknown): number | 'all' {
  if (v === 'all') return 'all';
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) throw new CcpError('CCP_ERR_CONFIG', "--text-versions must be a whole number ≥ 1 or 'all'", { detail: { textVersions: v } });
  return n;
}

/** Parses `--lake-columns`. @throws Error naming the allowed sets. */
function lakeColumnsFlag(v: unknown): LakeColumnSet {
  if (v === 'all' || v === 'api' || v === 'lean') return v;
  throw new CcpError('CCP_ERR_CONFIG', "--lake-columns must be 'all', 'api' or 'lean'");
}

/**
 * `ccpipe merge`: folds every completed batch of the data store into a new index version (docs/index-format.md) and
 * prints `MergeResult` as one JSON line on stdout; progress goes to stderr (phase lines on a TTY, pino JSON
 * otherwise). `--data`, `--lake-row-group-size`, `--merge-cache-dir` and `--log-level` come from the config table; merge-only flags:
 * `--keep-versions` (default 3), `--grace-ms` (default 600000), `--drop-text`, `--text-versions N|all` (the content-versions
 * policy, docs/webtable.md), `--memory-limit` (default 256MB),
 * `--lake-columns all|api|lean` (default all; fixed once the lake exists, docs/index-format.md), `--lake-max-runs`
 * (default 4: files per lake partition, docs/index-format.md), `--lake-zstd-level` (default 1; 9 for a lake written
 * once and read long), `--compact` (fold every partition into one file, even with nothing new to merge), `--rescan`
 * (list every batch marker besides the inbox). With `--metrics-port` (or CCPIPE_METRICS_PORT) it serves
 * `ccpipe_merge_*` and Node's process metrics on /metrics while it runs (none by default; a port it cannot bind fails
 * the command before anything is merged).
 * Exit code 0 also when there was nothing to merge (`published: false`).
 *
 * With `--every <seconds>` it is the merger service instead (mergerMain): merge, wait, repeat until SIGTERM, with
 * pino logs on stdout and `ccpipe_merge_*` metrics on `--metrics-port` (default 9002); no result lines. There,
 * `--min-new-ratio <r>` (default 0) defers a merge until the new rows are r × the lake's URLs, at most
 * `--max-wait <seconds>` (default 3600) after the first deferral (docs/operations.md).
 */
export function registerMergeCommand(program: Command, io: MergeCommandIo = { write: (l) => process.stdout.write(l) }): void {
  addConfigFlags(program.command('merge').description('fold completed batches into a new immutable index version and publish it'), MERGE)
    .option('--keep-versions <n>', 'index versions kept in the manifest (older ones are retired, then deleted after the grace period)')
    .option('--grace-ms <ms>', 'how long a retired version stays readable before GC deletes it')
    .option('--drop-text', 'store text as null in the lake')
    .option('--text-versions <n>', "keep the text of only the newest n captures of each URL across datasets (older ones keep their metadata), or 'all' (the default for a new lake); stays with the lake once set")
    .option('--memory-limit <size>', "DuckDB memory limit, e.g. '256MB' (the default; it spills to a temp dir beyond it)")
    .option('--lake-columns <set>', "lake columns: 'all' (every part column), 'api' (what the API and analytics need) or 'lean' ('api' without url_id); fixed once the lake exists")
    .option('--lake-max-runs <n>', 'most files a lake partition may hold (default 4; 1 = rewrite each partition receiving rows whole)')
    .option('--lake-zstd-level <n>', `ZSTD level of the lake files this merge writes, 1..22 (default ${DEFAULT_LAKE_ZSTD_LEVEL}; 9 is 1–9 % smaller for ≈ 1.4× the write CPU)`)
    .option('--compact', 'also fold every lake partition holding several runs into one file in URL order (after a crawl\'s last merge); publishes even with no new batch when some partition has several runs')
    .option('--no-search', 'write no full-text search shards for the lake files this merge writes (the version then answers no /v1/search)')
    .option('--rescan', 'also list every batch marker, not only the inbox: finds batches completed by workers of a ccpipe older than the inbox (a one-off merge)')
    .option('--pass-rows <n>', 'rows (old and new) of the lake partitions written in one group (default 250000): with --distribute a group is a task, so smaller groups spread a merge over more merge-workers')
    .option('--every <seconds>', 'run as the merger service: merge every <seconds> until SIGTERM, serving /metrics')
    .option('--min-new-ratio <r>', 'with --every: merge only once the new rows are r × the URLs already merged (0, the default: every time)')
    .option('--max-wait <seconds>', 'with --every and --min-new-ratio: merge anyway once new batches have waited this long (default 3600)')
    .option('--rescan-every <seconds>', 'with --every: list every batch marker besides the inbox at most this long apart, to merge batches completed without an inbox entry (default 86400; 0 = never)')
    .action(async (opts: Record<string, unknown>) => {
      const config = loadConfig(process.env, configFlagsOf(opts, MERGE));
      const everyMs = secondsFlag('every', opts['every']);
      const minNewRatio = ratioFlag(opts['minNewRatio']);
      const maxWaitMs = secondsFlag('max-wait', opts['maxWait']) ?? 3_600_000;
      if (everyMs !== null && opts['compact'] === true) throw new CcpError('CCP_ERR_CONFIG', '--compact is a one-off merge: run it without --every');
      if (everyMs !== null && opts['rescan'] === true) throw new CcpError('CCP_ERR_CONFIG', '--rescan is a one-off merge: run it without --every (stop the merger service first)');
      if (everyMs === null && (opts['minNewRatio'] !== undefined || opts['maxWait'] !== undefined || opts['rescanEvery'] !== undefined)) {
        throw new CcpError('CCP_ERR_CONFIG', '--min-new-ratio, --max-wait and --rescan-every apply to the merger service: add --every <seconds>');
      }
      const rescanEveryMs = opts['rescanEvery'] === '0' ? 0 : (secondsFlag('rescan-every', opts['rescanEvery']) ?? DEFAULT_RESCAN_EVERY_MS);
      const dataDir = localStoreDir(config.data);
      // a one-off merge of a directory that is not there has nothing to merge, and would create it (for its lease): a
      // mistyped --data. The service waits for one (compose starts it beside the workers that fill it).
      if (dataDir !== undefined && everyMs === null && !existsSync(dataDir)) {
        throw new CcpError('CCP_ERR_CONFIG', `there is no data store at ${dataDir}: check --data (CCPIPE_DATA)`);
      }
      const options: Omit<MergeOptions, 'onPhase'> = {
        store: openObjectStore(config.data, config),
        ...(dataDir !== undefined && { dataDir }),
        ...(config.mergeCacheDir !== undefined && { cacheDir: config.mergeCacheDir }),
        rowGroupSize: config.lakeRowGroupSize,
        keepVersions: intFlag('keep-versions', opts['keepVersions'], 3, 1),
        graceMs: intFlag('grace-ms', opts['graceMs'], 600_000, 0),
        dropText: opts['dropText'] === true,
        ...(opts['textVersions'] !== undefined && { textVersions: textVersionsFlag(opts['textVersions']) }),
        ...(opts['memoryLimit'] !== undefined && { memoryLimit: memoryLimitFlag(opts['memoryLimit']) }),
        ...(opts['lakeColumns'] !== undefined && { lakeColumns: lakeColumnsFlag(opts['lakeColumns']) }),
        ...(opts['lakeMaxRuns'] !== undefined && { lakeMaxRuns: intFlag('lake-max-runs', opts['lakeMaxRuns'], DEFAULT_MAX_RUNS, 1) }),
        ...(opts['lakeZstdLevel'] !== undefined && { compressionLevel: zstdLevelFlag(opts['lakeZstdLevel']) }),
        ...(opts['compact'] === true && { compact: true }),
        ...(opts['rescan'] === true && { rescan: true }),
        ...(opts['search'] === false && { search: false }),
        ...(opts['passRows'] !== undefined && { passRows: intFlag('pass-rows', opts['passRows'], 250_000, 1) }),
      };
      if (config.mergeDistribute) {
        const taskLog = createLogger({ service: everyMs === null ? 'merge' : 'merger', level: config.logLevel, destination: io.progress ?? process.stderr });
        options.tasks = distributedTaskRunner(config, options.store, taskLog);
      }
      const stream = io.progress ?? process.stderr;
      if (everyMs !== null) {
        process.exitCode = await mergerMain(config, options, everyMs, stream, { minNewRatio, maxWaitMs }, rescanEveryMs);
        return;
      }
      const log = createLogger({ service: 'merge', level: config.logLevel, destination: stream });
      const served = await serveOneOffMergeMetrics({ host: config.metricsHost, port: config.metricsPort });
      if (served !== null) {
        if (stream.isTTY === true) stream.write(`merge: metrics on http://${config.metricsHost}:${served.port}/metrics while it runs\n`);
        else log.info({ port: served.port }, 'metrics listening');
      }
      const progress = mergeProgress({ stream, log });
      let result: MergeResult;
      try {
        result = await runMerge({ ...options, onPhase: (phase, ms) => (progress.phase(phase, ms), served?.metrics.phase(phase, ms)) });
      } catch (err) {
        progress.failed(err);
        throw err;
      } finally {
        await served?.close(); // the outcome is the result line; the phases were served while it ran
      }
      progress.done(result);
      io.write(`${JSON.stringify(result)}\n`);
    });
}
