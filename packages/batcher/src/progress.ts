import { SingleBar } from 'cli-progress';
import { CLEAR_LINE, terminalStatusLine, type Logger, type StatusLine } from '@ccpipe/adapters';
import type { BatcherEvents, BatcherSummary } from './batcher';

/**
 * Progress of a run: a bar with ETA on a TTY (stderr), otherwise a JSON log line every `intervalMs`. Returns hooks
 * to chain after the metrics hooks, and `stop()`. The bar holds `status` (default the process's) while it is drawn,
 * so log lines on the terminal wipe it before they are written and it redraws below them (it redraws every tick).
 */
export function batcherProgress(opts: { total: number; done: number; tty: boolean; log: Logger; intervalMs?: number; summary: () => BatcherSummary; stream?: NodeJS.WritableStream; status?: StatusLine }): {
  events: BatcherEvents;
  stop(): void;
} {
  const started = Date.now();
  let blocks = opts.done;
  if (opts.tty) {
    const stream = opts.stream ?? process.stderr;
    const bar = new SingleBar({
      format: 'blocks {bar} {value}/{total} | kept {kept} dropped {dropped} | {rate} rec/s | ETA {eta_formatted}',
      stream,
      hideCursor: true,
      etaBuffer: 50,
      forceRedraw: true,
    });
    const release = (opts.status ?? terminalStatusLine).hold(() => void stream.write(CLEAR_LINE));
    bar.start(opts.total, opts.done, { kept: 0, dropped: 0, rate: 0 });
    return {
      events: {
        onBlock: () => {
          blocks++;
          const s = opts.summary();
          const secs = Math.max(0.001, (Date.now() - started) / 1000);
          const droppedTotal = Object.values(s.dropped).reduce((a, b) => a + b, 0);
          bar.update(blocks, { kept: s.kept, dropped: droppedTotal, rate: Math.round(s.records / secs) });
        },
      },
      stop: () => {
        release();
        bar.stop();
      },
    };
  }
  const timer = setInterval(() => {
    const s = opts.summary();
    const secs = Math.max(0.001, (Date.now() - started) / 1000);
    opts.log.info({ blocks: opts.done + s.blocks, total: opts.total, records: s.records, kept: s.kept, dropped: s.dropped, batches: s.batches, recordsPerSec: Math.round(s.records / secs) }, 'progress');
  }, opts.intervalMs ?? 10_000);
  timer.unref();
  return { events: {}, stop: () => clearInterval(timer) };
}

/** Calls each hook set in turn. */
export function chainEvents(...sets: BatcherEvents[]): BatcherEvents {
  const keys: (keyof BatcherEvents)[] = ['onBlock', 'onBatchPublished', 'onBatchConfirmed', 'onPublishRetry', 'onCheckpoint', 'onBlockFailed'];
  const out: BatcherEvents = {};
  for (const k of keys) {
    const fns = sets.map((s) => s[k]).filter((f): f is NonNullable<typeof f> => f !== undefined);
    if (fns.length > 0) (out as Record<string, unknown>)[k] = (arg: never) => fns.forEach((f) => (f as (a: never) => void)(arg));
  }
  return out;
}
