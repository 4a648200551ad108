import type { MergeOptions, MergeResult, PendingMerge } from '@ccpipe/index';
import type { MergeMetrics } from './merge-metrics';
import type { MergeProgress } from './merge-progress';

/** Ports of {@link runMergerLoop}. */
export interface MergerLoopDeps {
  /**
   * One merge (runMerge with the command's options); it reports phases through `onPhase`, and lists every batch
   * marker besides the inbox with `rescan` (merge-inbox.ts).
   */
  merge(onPhase: NonNullable<MergeOptions['onPhase']>, opts: { rescan: boolean }): Promise<MergeResult>;
  metrics: MergeMetrics;
  /** A fresh progress reporter per merge. */
  progress(): MergeProgress;
  /** Stops the loop: a merge in progress finishes first (it is not interrupted), the wait between merges is cut short. */
  signal: AbortSignal;
  now?: () => number;
  /**
   * When to merge (default: every time). With a `minNewRatio`, each tick first asks `pending` what a merge would
   * fold in, and a due-check ({@link mergeDue}) may defer it (counted in `metrics`); `deferred` hears why (logs).
   */
  policy?: MergePolicy;
  pending?: () => Promise<PendingMerge>;
  deferred?: (p: PendingMerge, waitedMs: number) => void;
  /** Hears of a merge made due by the last batches of a crawl (`p.completes`), before it runs (logs). */
  completing?: (p: PendingMerge) => void;
  /**
   * A merge lists every batch marker (`rescan`) once this long has passed since the loop started or since a merge
   * last did (default: never). Markers written without an inbox entry — a worker of an older ccpipe left running, a
   * batch folder copied in by hand — are then merged within that time instead of never.
   */
  rescanEveryMs?: number;
}

/**
 * When the merger service merges. A merge rewrites every lake partition its new rows touch, old rows included, so
 * merging a small delta into a big lake every few minutes rewrites the dataset again and again; waiting until the
 * new rows are a fraction `minNewRatio` of the lake's URLs keeps the total rewrite work a bounded multiple of the
 * final lake (geometric growth) instead of growing with the square of it. `maxWaitMs` bounds how long new batches
 * wait (the tail of a crawl is merged at the latest that long after the first deferral).
 */
export interface MergePolicy {
  /** New rows / lake URLs that make a merge due (0 = always). */
  minNewRatio: number;
  maxWaitMs: number;
}

/**
 * Whether a merge is due: always with nothing to fold in (the merge then only collects garbage), before the first
 * version, or when the new batches complete a crawl (its last batches: nothing more will come to wait for);
 * otherwise when the new rows reach `minNewRatio` of the lake's URLs or they have waited `maxWaitMs`.
 */
export function mergeDue(p: PendingMerge, policy: MergePolicy, waitedMs: number): boolean {
  if (policy.minNewRatio <= 0 || p.batches === 0 || p.lakeUrls === 0 || p.completes.length > 0) return true;
  return p.rows >= policy.minNewRatio * p.lakeUrls || waitedMs >= policy.maxWaitMs;
}

/**
 * Merges, waits `everyMs`, repeats until `signal` aborts (or after `maxMerges` merges, for tests). With a policy, a
 * tick whose merge is not due yet is deferred (not counted as a merge). A failed merge is counted and reported, and
 * the next one runs on schedule: the previous version keeps serving meanwhile, and a rerun rebuilds the same version
 * over leftovers. Never throws for a merge's error. Resolves to what it did.
 */
export async function runMergerLoop(everyMs: number, deps: MergerLoopDeps, maxMerges = Infinity): Promise<{ merges: number; failed: number }> {
  const now = deps.now ?? Date.now;
  let merges = 0;
  let failed = 0;
  let waitingSince: number | null = null;
  let lastFullScan = now();
  while (!deps.signal.aborted && merges < maxMerges) {
    if (deps.policy !== undefined && deps.policy.minNewRatio > 0 && deps.pending !== undefined) {
      // A store that cannot answer is not a reason to defer: the merge then runs and reports its own error.
      const p = await deps.pending().catch(() => null);
      const waited = waitingSince === null ? 0 : now() - waitingSince;
      if (p !== null && !mergeDue(p, deps.policy, waited)) {
        waitingSince ??= now();
        deps.metrics.deferred(p.batches, p.rows);
        deps.deferred?.(p, waited);
        await sleep(everyMs, deps.signal);
        continue;
      }
      if (p !== null && p.completes.length > 0) deps.completing?.(p);
    }
    waitingSince = null;
    const progress = deps.progress();
    const t0 = now();
    try {
      const rescan = deps.rescanEveryMs !== undefined && deps.rescanEveryMs > 0 && now() - lastFullScan >= deps.rescanEveryMs;
      const result = await deps.merge((phase, ms) => {
        deps.metrics.phase(phase, ms);
        progress.phase(phase, ms);
      }, { rescan });
      if (result.scan === 'full') lastFullScan = now();
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
