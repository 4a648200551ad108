import type { MergeOptions, MergeResult } from '@ccpipe/index';
import type { MergeMetrics } from './merge-metrics';
import type { MergeProgress } from './merge-progress';

/** Ports of {@link runMergerLoop}. */
export interface MergerLoopDeps {
  /** One merge (runMerge with the command's options); it reports phases through `onPhase`. */
  merge(onPhase: NonNullable<MergeOptions['onPhase']>): Promise<MergeResult>;
  metrics: MergeMetrics;
  /** A fresh progress reporter per merge. */
  progress(): MergeProgress;
  /** Stops the loop: a merge in progress finishes first (it is not interrupted), the wait between merges is cut short. */
  signal: AbortSignal;
  now?: () => number;
}

/**
 * Merges, waits `everyMs`, repeats until `signal` aborts (or after `maxMerges`, for tests). A failed merge is
 * counted and reported, and the next one runs on schedule: the previous version keeps serving meanwhile, and a
 * rerun rebuilds the same version over leftovers. Never throws for a merge's error. Resolves to what it did.
 */
export async function runMergerLoop(everyMs: number, deps: MergerLoopDeps, maxMerges = Infinity): Promise<{ merges: number; failed: number }> {
  const now = deps.now ?? Date.now;
  let merges = 0;
  let failed = 0;
  while (!deps.signal.aborted && merges < maxMerges) {
    const progress = deps.progress();
    const t0 = now();
    try {
      const result = await deps.merge((phase, ms) => {
        deps.metrics.phase(phase, ms);
        progress.phase(phase, ms);
      });
      deps.metrics.finished(result);
      progress.done(result);
    } catch (err) {
      failed++;
      deps.metrics.failed(now() - t0);
      progress.failed(err);
    }
    merges++;
    if (merges < maxMerges) await sleep(everyMs, deps.signal);
  }
  return { merges, failed };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
