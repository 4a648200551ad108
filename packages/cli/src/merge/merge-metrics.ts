import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { versionSeq, type MergeOptions, type MergeResult } from '@ccpipe/index';

/** A phase of `runMerge`, as its `onPhase` callback names it. */
export type MergePhase = Parameters<NonNullable<MergeOptions['onPhase']>>[0];

/** How a merge ended: a new version, nothing new to fold in, or an error. */
export type MergeOutcome = 'published' | 'unchanged' | 'failed';

/** Every phase `runMerge` reports, in order (a merge with nothing new reports only `load`). */
export const MERGE_PHASES: readonly MergePhase[] = ['load', 'read', 'domains', 'collisions', 'stage', 'lake', 'orderings', 'links', 'search', 'index', 'publish'];
const OUTCOMES: readonly MergeOutcome[] = ['published', 'unchanged', 'failed'];
// Merges of the dev corpus take ~1 s, a crawl's worth minutes; a phase can be a few ms.
const BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800];

/** Hooks that record merges into the `ccpipe_merge_*` metrics. */
export interface MergeMetrics {
  /** A phase ended after `ms`. */
  phase(phase: MergePhase, ms: number): void;
  /** A merge returned `result`. */
  finished(result: MergeResult): void;
  /** A merge threw after `ms`. */
  failed(ms: number): void;
  /** A due-check deferred the merge with `rows` new rows in `batches` batches waiting. */
  deferred(batches: number, rows: number): void;
}

/**
 * Registers the merger's metrics on `registry` (never prom-client's global one): runs and duration by outcome,
 * duration by phase, what the merges folded in (batches, rows, rewritten lake files, new collisions, collected
 * versions) and the state of the current version (sequence number, URLs, domains) with the time of the last
 * successful merge. Label values are closed sets (phase, outcome). Every series exists from the start at 0.
 */
export function mergeMetrics(registry: Registry, nowMs: () => number = Date.now): MergeMetrics {
  const registers = [registry];
  const runs = new Counter({ name: 'ccpipe_merge_runs_total', help: 'merges run, by outcome (published, unchanged, failed)', labelNames: ['outcome'], registers });
  const duration = new Histogram({ name: 'ccpipe_merge_duration_seconds', help: 'wall time of one merge, by outcome', labelNames: ['outcome'], buckets: BUCKETS, registers });
  const phaseSeconds = new Histogram({ name: 'ccpipe_merge_phase_seconds', help: 'wall time of one merge phase', labelNames: ['phase'], buckets: BUCKETS, registers });
  const batches = new Counter({ name: 'ccpipe_merge_batches_merged_total', help: 'completed batches folded into a new version', registers });
  const rowsIn = new Counter({ name: 'ccpipe_merge_rows_in_total', help: 'part rows read into new versions', registers });
  const rewritten = new Counter({ name: 'ccpipe_merge_lake_files_rewritten_total', help: 'lake files written by merges', registers });
  const rowsWritten = new Counter({ name: 'ccpipe_merge_lake_rows_written_total', help: 'rows written into lake files by merges (new rows + rows of the runs folded in; ÷ rows_in = write amplification)', registers });
  const lakeFiles = new Gauge({ name: 'ccpipe_merge_lake_files', help: 'lake files (runs) of the current index version', registers });
  const collisions = new Counter({ name: 'ccpipe_merge_collisions_total', help: 'url_id collisions resolved by merges', registers });
  const collected = new Counter({ name: 'ccpipe_merge_versions_collected_total', help: 'retired index versions deleted after their grace period', registers });
  const scans = new Counter({ name: 'ccpipe_merge_scans_total', help: 'how merges found new batches: the inbox, or a listing of every batch marker (full)', labelNames: ['scan'], registers });
  const withoutInbox = new Counter({ name: 'ccpipe_merge_batches_without_inbox_total', help: 'batches a full listing found without an inbox entry (a worker of an older ccpipe, or a lake written before the inbox)', registers });
  const gcFailures = new Counter({ name: 'ccpipe_merge_gc_failures_total', help: 'garbage collections that failed after a merge (what is left is deleted by a later one)', registers });
  const version = new Gauge({ name: 'ccpipe_merge_index_version', help: 'sequence number of the current index version (v000042 → 42; 0 = none)', registers });
  const urls = new Gauge({ name: 'ccpipe_merge_index_urls', help: 'URLs in the current index version', registers });
  const domains = new Gauge({ name: 'ccpipe_merge_index_domains', help: 'domains in the current index version', registers });
  const deferred = new Counter({ name: 'ccpipe_merge_deferred_total', help: 'merger ticks that waited for more new rows (merge --min-new-ratio)', registers });
  const pendingRows = new Gauge({ name: 'ccpipe_merge_pending_rows', help: 'rows of completed batches not in the current version, as last seen by a deferred tick (0 after a merge)', registers });
  const lastSuccess = new Gauge({ name: 'ccpipe_merge_last_success_timestamp_seconds', help: 'when the last merge that did not fail ended (unix seconds)', registers });
  for (const outcome of OUTCOMES) {
    runs.inc({ outcome }, 0);
    duration.zero({ outcome });
  }
  for (const phase of MERGE_PHASES) phaseSeconds.zero({ phase });
  for (const scan of ['inbox', 'full']) scans.inc({ scan }, 0);
  return {
    phase: (phase, ms) => phaseSeconds.observe({ phase }, ms / 1000),
    finished: (r) => {
      const outcome: MergeOutcome = r.published ? 'published' : 'unchanged';
      runs.inc({ outcome });
      duration.observe({ outcome }, r.ms / 1000);
      batches.inc(r.batches);
      rowsIn.inc(r.rowsIn);
      rewritten.inc(r.rewrittenFiles);
      rowsWritten.inc(r.rowsWritten);
      lakeFiles.set(r.lakeFiles);
      collisions.inc(r.newCollisions);
      collected.inc(r.collectedVersions.length);
      scans.inc({ scan: r.scan });
      withoutInbox.inc(r.withoutInbox);
      if (r.gcError !== undefined) gcFailures.inc();
      version.set(r.version === null ? 0 : versionSeq(r.version));
      urls.set(r.urls);
      domains.set(r.domains);
      lastSuccess.set(nowMs() / 1000);
      pendingRows.set(0);
    },
    failed: (ms) => {
      runs.inc({ outcome: 'failed' });
      duration.observe({ outcome: 'failed' }, ms / 1000);
    },
    deferred: (_batches, rows) => {
      deferred.inc();
      pendingRows.set(rows);
    },
  };
}
