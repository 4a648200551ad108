import type { Logger } from '@ccpipe/adapters';
import type { MergeResult } from '@ccpipe/index';
import type { MergePhase } from './merge-metrics';

/** Hooks a merge calls as it goes; see {@link mergeProgress}. */
export interface MergeProgress {
  /** A phase ended after `ms` (runMerge's `onPhase`). */
  phase(phase: MergePhase, ms: number): void;
  /** The merge returned `result`. */
  done(result: MergeResult): void;
  /** The merge threw `err`. */
  failed(err: unknown): void;
}

const num = (n: number): string => n.toLocaleString('en-US');
const secs = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;

/** What batches without an inbox entry mean (MergeResult.withoutInbox). */
const WITHOUT_INBOX = 'a lake written before the merge inbox, or a worker of an older ccpipe still running; merges list every marker until an hour passes without one';

/** What batches of another store mean (MergeResult.foreignBatches). */
const FOREIGN = 'their markers name another data store, or a dataset id that means another dataset here: a worker ran with another --data than its batcher; they are not merged (delete their batch folders and inbox entries once checked)';

/**
 * Progress of one merge. When `stream` is a TTY (a person is watching): one line per phase as it completes, with
 * its time and the time since the merge started, then a summary line with the rows read in and the URLs and
 * domains of the version now current. Otherwise pino lines on `log`: `merge phase` (info) per phase, then
 * `merge done` (info, the MergeResult's counts, no URLs) or `merge failed` (error, under `err`).
 * Create one per merge: the elapsed time counts from creation.
 */
export function mergeProgress(opts: { stream: NodeJS.WritableStream & { isTTY?: boolean }; log: Logger; now?: () => number }): MergeProgress {
  const now = opts.now ?? Date.now;
  const started = now();
  if (opts.stream.isTTY === true) {
    const out = (line: string): void => void opts.stream.write(`${line}\n`);
    return {
      phase: (phase, ms) => out(`merge ${phase.padEnd(10)} ${secs(ms).padStart(8)}   elapsed ${secs(now() - started)}`),
      done: (r) => {
        out(
          r.published
            ? `merge published ${r.version ?? '-'}: ${num(r.batches)} batches, ${num(r.rowsIn)} rows in → ${num(r.urls)} URLs in ${num(r.domains)} domains, ${num(r.rewrittenFiles)} lake files written (${num(r.rowsWritten)} rows), ${num(r.lakeFiles)} in the lake (${secs(r.ms)})`
            : `merge: nothing new; ${r.version ?? 'no version'} stays current with ${num(r.urls)} URLs in ${num(r.domains)} domains (${secs(r.ms)})`,
        );
        if (r.withoutInbox > 0) out(`merge: ${num(r.withoutInbox)} batches had no inbox entry (${WITHOUT_INBOX})`);
        if (r.foreignBatches > 0) out(`merge: ${num(r.foreignBatches)} batches left out: ${FOREIGN}`);
        if (r.gcError !== undefined) out(`merge: garbage collection failed (${r.gcError}); the next merge deletes what is left`);
      },
      failed: (err) => out(`merge failed after ${secs(now() - started)}: ${err instanceof Error ? err.message : String(err)}`),
    };
  }
  return {
    phase: (phase, ms) => opts.log.info({ phase, ms, elapsedMs: now() - started }, 'merge phase'),
    done: (r) => {
      opts.log.info(
        {
          version: r.version, published: r.published, batches: r.batches, rowsIn: r.rowsIn, urls: r.urls, domains: r.domains,
          rewrittenFiles: r.rewrittenFiles, rowsWritten: r.rowsWritten, lakeFiles: r.lakeFiles, newCollisions: r.newCollisions, scan: r.scan, collectedVersions: r.collectedVersions.length, ms: r.ms,
        },
        'merge done',
      );
      if (r.withoutInbox > 0) opts.log.warn({ batches: r.withoutInbox }, `batches without an inbox entry: ${WITHOUT_INBOX}`);
      if (r.foreignBatches > 0) opts.log.warn({ batches: r.foreignBatches }, `batches left out: ${FOREIGN}`);
      if (r.gcError !== undefined) opts.log.warn({ code: r.gcError }, 'garbage collection failed after the merge; the next merge deletes what is left');
    },
    failed: (err) => opts.log.error({ err, ms: now() - started }, 'merge failed'),
  };
}
