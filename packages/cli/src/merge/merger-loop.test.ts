import { Registry } from 'prom-client';
import { createLogger } from '@ccpipe/adapters';
import type { MergeResult } from '@ccpipe/index';
import { mergeMetrics } from './merge-metrics';
import { mergeProgress, type MergeProgress } from './merge-progress';
import { mergeDue, runMergerLoop } from './merger-loop';

const silent = createLogger({ service: 'merger', level: 'silent' });
const progress = (): MergeProgress => mergeProgress({ stream: { isTTY: false } as NodeJS.WritableStream & { isTTY: boolean }, log: silent });

const result = (over: Partial<MergeResult>): MergeResult => ({
  version: 'v000001', published: true, batches: 2, rowsIn: 100, urls: 90, domains: 7, rewrittenFiles: 3, rowsWritten: 100, lakeFiles: 3, newCollisions: 0, textDropped: 0, foreignBatches: 0, scan: 'inbox', withoutInbox: 0, collectedVersions: [], ms: 1500, ...over,
});

async function values(registry: Registry, name: string): Promise<Record<string, number>> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  if (!m) throw new Error(`no metric ${name}`);
  return Object.fromEntries(m.values.map((v) => [`${(v as { metricName?: string }).metricName ?? name}${JSON.stringify(v.labels)}`, v.value]));
}

describe('runMergerLoop', () => {
  it('merges on schedule, counts outcomes, phases and what was merged, and keeps going after a failed merge', async () => {
    const registry = new Registry();
    const outcomes: (MergeResult | Error)[] = [result({}), new Error('store unreachable'), result({ version: 'v000002', batches: 1, rowsIn: 20, urls: 105, domains: 8 }), result({ version: 'v000002', published: false, batches: 0, rowsIn: 0, rowsWritten: 0, urls: 105, domains: 8, ms: 10 })];
    let i = 0;
    const done = await runMergerLoop(
      1,
      {
        merge: async (onPhase) => {
          const o = outcomes[i++]!;
          onPhase('load', 5);
          if (o instanceof Error) throw o;
          if (o.published) onPhase('lake', 700);
          return o;
        },
        metrics: mergeMetrics(registry, () => 1_700_000_000_000),
        progress,
        signal: new AbortController().signal,
      },
      outcomes.length,
    );
    expect(done).toEqual({ merges: 4, failed: 1 });
    expect(await values(registry, 'ccpipe_merge_runs_total')).toEqual({
      'ccpipe_merge_runs_total{"outcome":"published"}': 2, 'ccpipe_merge_runs_total{"outcome":"unchanged"}': 1, 'ccpipe_merge_runs_total{"outcome":"failed"}': 1,
    });
    expect(await values(registry, 'ccpipe_merge_batches_merged_total')).toEqual({ 'ccpipe_merge_batches_merged_total{}': 3 });
    expect(await values(registry, 'ccpipe_merge_rows_in_total')).toEqual({ 'ccpipe_merge_rows_in_total{}': 120 });
    expect(await values(registry, 'ccpipe_merge_lake_rows_written_total')).toEqual({ 'ccpipe_merge_lake_rows_written_total{}': 200 });
    expect(await values(registry, 'ccpipe_merge_lake_files')).toEqual({ 'ccpipe_merge_lake_files{}': 3 });
    expect(await values(registry, 'ccpipe_merge_index_version')).toEqual({ 'ccpipe_merge_index_version{}': 2 });
    expect(await values(registry, 'ccpipe_merge_index_urls')).toEqual({ 'ccpipe_merge_index_urls{}': 105 });
    expect(await values(registry, 'ccpipe_merge_last_success_timestamp_seconds')).toEqual({ 'ccpipe_merge_last_success_timestamp_seconds{}': 1_700_000_000 });
    const phases = await values(registry, 'ccpipe_merge_phase_seconds');
    expect(phases['ccpipe_merge_phase_seconds_count{"phase":"load"}']).toBe(4);
    expect(phases['ccpipe_merge_phase_seconds_count{"phase":"lake"}']).toBe(2);
    expect(phases['ccpipe_merge_phase_seconds_sum{"phase":"lake"}']).toBeCloseTo(1.4);
    const duration = await values(registry, 'ccpipe_merge_duration_seconds');
    expect(duration['ccpipe_merge_duration_seconds_count{"outcome":"published"}']).toBe(2);
    expect(duration['ccpipe_merge_duration_seconds_sum{"outcome":"published"}']).toBeCloseTo(3);
    expect(duration['ccpipe_merge_duration_seconds_count{"outcome":"failed"}']).toBe(1);
  });

  it('on a stop request lets the merge in progress finish, then returns without waiting for the next one', async () => {
    const ctl = new AbortController();
    const registry = new Registry();
    let finishMerge!: (r: MergeResult) => void;
    let merges = 0;
    const loop = runMergerLoop(3_600_000, {
      merge: () => {
        merges++;
        return new Promise<MergeResult>((r) => (finishMerge = r));
      },
      metrics: mergeMetrics(registry),
      progress,
      signal: ctl.signal,
    });
    await new Promise((r) => setImmediate(r));
    ctl.abort(new Error('SIGTERM'));
    await new Promise((r) => setImmediate(r));
    finishMerge(result({}));
    expect(await loop).toEqual({ merges: 1, failed: 0 });
    expect(merges).toBe(1);
    expect(await values(registry, 'ccpipe_merge_runs_total')).toMatchObject({ 'ccpipe_merge_runs_total{"outcome":"published"}': 1 });
  });

  it('with a min-new-ratio policy defers a merge until the new rows reach the ratio or have waited max-wait', async () => {
    const registry = new Registry();
    let clock = 0;
    let lake = 0;
    let waiting = 0;
    const arrivals = [10, 4, 0, 2, 1, 0, 0, 0]; // rows of batches completed before each tick (a tick is a second)
    const merged: number[] = [];
    const deferred: { rows: number; waitedMs: number }[] = [];
    const done = await runMergerLoop(
      1,
      {
        pending: async () => {
          clock += 1000;
          waiting += arrivals.shift() ?? 0;
          return { version: lake === 0 ? null : 'v000001', batches: waiting === 0 ? 0 : 1, rows: waiting, lakeUrls: lake, completes: [] };
        },
        merge: async () => {
          merged.push(waiting);
          lake += waiting;
          const r = result({ batches: 1, rowsIn: waiting, urls: lake });
          waiting = 0;
          return r;
        },
        policy: { minNewRatio: 0.5, maxWaitMs: 2500 },
        deferred: (p, waitedMs) => deferred.push({ rows: p.rows, waitedMs }),
        metrics: mergeMetrics(registry),
        progress,
        signal: new AbortController().signal,
        now: () => clock,
      },
      3,
    );
    // t1: 10 rows, no lake yet → merge. t2, t3: 4 < 0.5 × 10 → wait. t4: 6 ≥ 5 → merge (lake 16). t5–t7: 1 < 8 → wait;
    // t8: the 1 row has waited 3 s ≥ 2.5 s → merge.
    expect(merged).toEqual([10, 6, 1]);
    expect(deferred).toEqual([{ rows: 4, waitedMs: 0 }, { rows: 4, waitedMs: 1000 }, { rows: 1, waitedMs: 0 }, { rows: 1, waitedMs: 1000 }, { rows: 1, waitedMs: 2000 }]);
    expect(done).toEqual({ merges: 3, failed: 0 });
    expect(await values(registry, 'ccpipe_merge_deferred_total')).toEqual({ 'ccpipe_merge_deferred_total{}': 5 });
    expect(await values(registry, 'ccpipe_merge_pending_rows')).toEqual({ 'ccpipe_merge_pending_rows{}': 0 }); // reset by the merge
  });

  it('mergeDue: always without a ratio, with nothing new, before the first version or when a crawl is complete; else at the ratio or after max-wait', () => {
    const p = (rows: number, lakeUrls: number, batches = 1, completes: string[] = []) => ({ version: 'v000001', batches, rows, lakeUrls, completes });
    const policy = { minNewRatio: 0.25, maxWaitMs: 60_000 };
    expect(mergeDue(p(1, 1000), { minNewRatio: 0, maxWaitMs: 0 }, 0)).toBe(true);
    expect(mergeDue(p(0, 1000, 0), policy, 0)).toBe(true); // nothing new: the merge only collects garbage
    expect(mergeDue(p(5, 0), policy, 0)).toBe(true); // first version
    expect(mergeDue(p(249, 1000), policy, 59_999)).toBe(false);
    expect(mergeDue(p(250, 1000), policy, 0)).toBe(true);
    expect(mergeDue(p(1, 1000), policy, 60_000)).toBe(true);
    expect(mergeDue(p(1, 1000, 1, ['CC-MAIN-2030-44']), policy, 0)).toBe(true); // the crawl's last batches: nothing to wait for
  });

  it('stops waiting between merges when asked to stop', async () => {
    const ctl = new AbortController();
    let merges = 0;
    const loop = runMergerLoop(3_600_000, {
      merge: async () => {
        merges++;
        setImmediate(() => ctl.abort());
        return result({});
      },
      metrics: mergeMetrics(new Registry()),
      progress,
      signal: ctl.signal,
    });
    expect(await loop).toEqual({ merges: 1, failed: 0 });
  });
  it('with rescanEveryMs a merge lists every marker once that long has passed since the start or since a merge last did', async () => {
    let clock = 0;
    const asked: boolean[] = [];
    // the second merge lists every marker on its own (a lake still settling into the inbox): the clock starts again
    const scans: MergeResult['scan'][] = ['inbox', 'full', 'inbox', 'inbox', 'inbox', 'inbox'];
    const done = await runMergerLoop(
      1,
      {
        merge: async (_onPhase, { rescan }) => {
          asked.push(rescan);
          const scan = rescan ? 'full' : scans[asked.length - 1]!;
          clock += 600;
          return result({ scan });
        },
        metrics: mergeMetrics(new Registry()),
        progress,
        signal: new AbortController().signal,
        now: () => clock,
        rescanEveryMs: 1000,
      },
      6,
    );
    expect(done).toEqual({ merges: 6, failed: 0 });
    // merges run 0–600, 600–1200 (lists every marker itself: the clock restarts at its end), 1200–1800, 1800–2400,
    // 2400–3000 (1,200 past 1200: a rescan, ending at 3000), 3000–3600
    expect(asked).toEqual([false, false, false, false, true, false]);
  });
});
