import { SingleBar } from 'cli-progress';
import type { Logger } from '@ccpipe/adapters';

/** Counters of an embedded run, shared by the batchers and the worker. */
export interface RunCounters {
  blocksPlanned: number;
  blocksRead: number;
  records: number;
  kept: number;
  batchesPublished: number;
  batchesDone: number;
  batchesFailed: number;
  rows: number;
}

/** Counters at zero. */
export const emptyCounters = (): RunCounters => ({ blocksPlanned: 0, blocksRead: 0, records: 0, kept: 0, batchesPublished: 0, batchesDone: 0, batchesFailed: 0, rows: 0 });

/**
 * Shows the run's progress: a bar on a TTY (stderr), otherwise a pino line every `intervalMs`. `update()` redraws;
 * `stop()` is idempotent.
 */
export function runProgress(c: RunCounters, opts: { tty: boolean; log: Logger; intervalMs?: number }): { update(): void; stop(): void } {
  let stopped = false;
  if (opts.tty) {
    const bar = new SingleBar({
      format: 'ingest {bar} {value}/{total} blocks | batches {done}/{published} | rows {rows}',
      stream: process.stderr,
      hideCursor: true,
    });
    bar.start(Math.max(1, c.blocksPlanned), 0, { done: 0, published: 0, rows: 0 });
    return {
      update: () => {
        if (stopped) return;
        bar.setTotal(Math.max(1, c.blocksPlanned));
        bar.update(c.blocksRead, { done: c.batchesDone + c.batchesFailed, published: c.batchesPublished, rows: c.rows });
      },
      stop: () => {
        if (stopped) return;
        stopped = true;
        bar.stop();
      },
    };
  }
  const timer = setInterval(() => opts.log.info({ ...c }, 'progress'), opts.intervalMs ?? 5_000);
  timer.unref();
  return {
    update: () => undefined,
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
