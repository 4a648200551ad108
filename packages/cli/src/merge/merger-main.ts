import { runService } from '@ccpipe/adapters';
import type { Config } from '@ccpipe/core';
import { pendingMerge, runMerge, type MergeOptions } from '@ccpipe/index';
import { mergeMetrics } from './merge-metrics';
import { mergeProgress } from './merge-progress';
import { runMergerLoop, type MergePolicy } from './merger-loop';

/** How often the merger service lists every batch marker besides the inbox by default (`--rescan-every`): daily. */
export const DEFAULT_RESCAN_EVERY_MS = 86_400_000;

/** The merger's /metrics port when neither `--metrics-port` nor CCPIPE_METRICS_PORT sets one (batcher 9000, worker 9001, merger 9002). */
export const MERGER_METRICS_PORT = 9002;

/**
 * `ccpipe merge --every <s>`: the merger as a long-running service under the shared lifecycle (runService): pino
 * logs on stdout, `ccpipe_merge_*` metrics on /metrics (`config.metricsPort`, default 9002), a merge every
 * `everyMs` — or, with a `policy`, every `everyMs` once enough new rows wait (merger-loop's mergeDue; a deferred tick
 * logs `merge deferred` with the counts). SIGTERM/SIGINT lets the merge in progress finish (a published version is never left half-written by
 * us), then exits 0. Phase progress goes to `progressStream` (stderr) when it is a TTY, else into the logs.
 * Resolves to the exit code: 0 when stopped by a signal, 1 when startup failed.
 */
export function mergerMain(
  config: Config,
  options: Omit<MergeOptions, 'onPhase'>,
  everyMs: number,
  progressStream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  policy: MergePolicy = { minNewRatio: 0, maxWaitMs: 0 },
  rescanEveryMs = DEFAULT_RESCAN_EVERY_MS,
): Promise<number> {
  return runService(
    {
      service: 'merger',
      logLevel: config.logLevel,
      metrics: { host: config.metricsHost, port: config.metricsPort ?? MERGER_METRICS_PORT },
      onSignal: (log, sig) => log.warn({ sig }, 'stopping: finishing the merge in progress'),
    },
    async ({ log, registry, signal }) => {
      const metrics = mergeMetrics(registry);
      const markerRows = new Map<string, number>(); // pending markers' row counts, read once each
      log.info({ everyMs, ...policy, rescanEveryMs, keepVersions: options.keepVersions, graceMs: options.graceMs }, 'merger started');
      const done = await runMergerLoop(everyMs, {
        merge: (onPhase, { rescan }) => runMerge({ ...options, onPhase, ...(rescan && { rescan }) }),
        rescanEveryMs,
        metrics,
        progress: () => mergeProgress({ stream: progressStream, log }),
        signal,
        policy,
        pending: () => pendingMerge(options.store, markerRows),
        deferred: (p, waitedMs) => {
          log.info({ pendingBatches: p.batches, pendingRows: p.rows, lakeUrls: p.lakeUrls, dueAtRows: Math.ceil(policy.minNewRatio * p.lakeUrls), waitedMs }, 'merge deferred');
        },
        completing: (p) => log.info({ datasets: p.completes, pendingBatches: p.batches, pendingRows: p.rows }, 'crawl complete: merging its last batches now'),
      });
      log.info(done, 'merger stopped');
      return 0;
    },
  );
}
