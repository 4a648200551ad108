import { SingleBar } from 'cli-progress';
import { CLEAR_LINE, terminalStatusLine, type Logger } from '@ccpipe/adapters';

/** Counters of an embedded run, shared by the batchers and the worker. */
export interface RunCounters {
  blocksPlanned: number;
  /** Blocks read, counting those before each crawl's checkpoint (`blocksResumed`). */
  blocksRead: number;
  /** Blocks this process did not read: before the checkpoints it resumed at. */
  blocksResumed: number;
  /** Blocks skipped because they cannot be had (not in blocksRead). */
  blocksFailed: number;
  records: number;
  kept: number;
  batchesPublished: number;
  batchesDone: number;
  batchesFailed: number;
  rows: number;
}

/** Counters at zero. */
export const emptyCounters = (): RunCounters => ({ blocksPlanned: 0, blocksRead: 0, blocksResumed: 0, blocksFailed: 0, records: 0, kept: 0, batchesPublished: 0, batchesDone: 0, batchesFailed: 0, rows: 0 });

/**
 * Where the run's bar stands: batches settled (done or dead-lettered) out of the batches published plus those the
 * blocks not read yet should yield (at the rate of the blocks read so far; one per block before any). The batcher
 * reads blocks far ahead of the worker (a publish window of batches), so a bar over blocks would end long before the
 * work does; this one ends exactly when the last block is read and its last batch settled. Pure.
 */
export function runBarState(c: RunCounters): { value: number; total: number } {
  const settled = c.batchesDone + c.batchesFailed;
  const handled = c.blocksRead + c.blocksFailed;
  const readHere = c.blocksRead - c.blocksResumed;
  const perBlock = readHere > 0 ? c.batchesPublished / readHere : 1;
  const expected = c.batchesPublished + Math.ceil(Math.max(0, c.blocksPlanned - handled) * perBlock);
  // batches an earlier run dead-lettered are settled again without being published by this one
  const total = Math.max(expected, settled, 1);
  return { value: Math.min(settled, total), total };
}

/**
 * Shows the run's progress: a bar on a TTY (stderr), otherwise a pino line every `intervalMs`. `update()` redraws;
 * `stop()` is idempotent.
 */
export function runProgress(c: RunCounters, opts: { tty: boolean; log: Logger; intervalMs?: number }): { update(): void; stop(): void } {
  let stopped = false;
  if (opts.tty) {
    const bar = new SingleBar({
      format: 'ingest {bar} {percentage}% | blocks {blocks}/{planned} | batches {done}/{published} | rows {rows}',
      stream: process.stderr,
      hideCursor: true,
      forceRedraw: true, // log lines wipe its line (terminalStatusLine): it draws itself again below them
    });
    const release = terminalStatusLine.hold(() => void process.stderr.write(CLEAR_LINE));
    const fields = () => ({ blocks: c.blocksRead, planned: c.blocksPlanned, done: c.batchesDone + c.batchesFailed, published: c.batchesPublished, rows: c.rows });
    bar.start(runBarState(c).total, 0, fields());
    return {
      update: () => {
        if (stopped) return;
        const { value, total } = runBarState(c);
        bar.setTotal(total);
        bar.update(value, fields());
      },
      stop: () => {
        if (stopped) return;
        stopped = true;
        release();
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
