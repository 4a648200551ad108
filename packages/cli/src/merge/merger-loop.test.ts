import { Registry } from 'prom-client';
import { createLogger } from '@ccpipe/adapters';
import type { MergeResult } from '@ccpipe/index';
import { mergeMetrics } from './merge-metrics';
import { mergeProgress, type MergeProgress } from './merge-progress';
import { runMergerLoop } from './merger-loop';

const silent = createLogger({ service: 'merger', level: 'silent' });
const progress = (): MergeProgress => mergeProgress({ stream: { isTTY: false } as NodeJS.WritableStream & { isTTY: boolean }, log: silent });

const result = (over: Partial<MergeResult>): MergeResult => ({
  version: 'v000001', published: true, batches: 2, rowsIn: 100, urls: 90, domains: 7, rewrittenFiles: 3, newCollisions: 0, collectedVersions: [], ms: 1500, ...over,
});

async function values(registry: Registry, name: string): Promise<Record<string, number>> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  if (!m) throw new Error(`no metric ${name}`);
  return Object.fromEntries(m.values.map((v) => [`${(v as { metricName?: string }).metricName ?? name}${JSON.stringify(v.labels)}`, v.value]));
}

describe('runMergerLoop', () => {
  it('merges on schedule, counts outcomes, phases and what was merged, and keeps going after a failed merge', async () => {
    const registry = new Registry();
    const outcomes: (MergeResult | Error)[] = [result({}), new Error('store unreachable'), result({ version: 'v000002', batches: 1, rowsIn: 20, urls: 105, domains: 8 }), result({ version: 'v000002', published: false, batches: 0, rowsIn: 0, urls: 105, domains: 8, ms: 10 })];
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
});
