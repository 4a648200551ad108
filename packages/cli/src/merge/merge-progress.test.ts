import { Writable } from 'node:stream';
import { createLogger } from '@ccpipe/adapters';
import type { MergeResult } from '@ccpipe/index';
import { Registry } from 'prom-client';
import { mergeMetrics } from './merge-metrics';
import { mergeProgress } from './merge-progress';

/** A stream that collects what is written; `isTTY` as a terminal would set it. */
function fakeStream(isTTY: boolean): Writable & { isTTY: boolean; text(): string } {
  const chunks: string[] = [];
  const s = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  }) as Writable & { isTTY: boolean; text(): string };
  s.isTTY = isTTY;
  s.text = () => chunks.join('');
  return s;
}

const result: MergeResult = {
  version: 'v000004', published: true, batches: 12, rowsIn: 43210, urls: 40000, domains: 345, rewrittenFiles: 9, rowsWritten: 45000, lakeFiles: 300, newCollisions: 0, textDropped: 0, foreignBatches: 0,
  scan: 'inbox', withoutInbox: 0, collectedVersions: ['v000001'], ms: 3200,
};

describe('mergeProgress', () => {
  it('on a TTY writes one line per completed phase with its time and the elapsed time, then the rows and the version', () => {
    const stream = fakeStream(true);
    let t = 1000;
    const log = createLogger({ service: 'merge', level: 'info', destination: stream });
    const p = mergeProgress({ stream, log, now: () => t });
    t += 120;
    p.phase('load', 120);
    t += 2000;
    p.phase('read', 2000);
    p.done(result);
    const lines = stream.text().trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^merge load\s+0\.12s\s+elapsed 0\.12s$/);
    expect(lines[1]).toMatch(/^merge read\s+2\.00s\s+elapsed 2\.12s$/);
    expect(lines[2]).toBe('merge published v000004: 12 batches, 43,210 rows in → 40,000 URLs in 345 domains, 9 lake files written (45,000 rows), 300 in the lake (3.20s)');
    expect(stream.text()).not.toContain('{');
  });

  it('on a TTY says when nothing was new and when a merge failed', () => {
    const stream = fakeStream(true);
    const p = mergeProgress({ stream, log: createLogger({ service: 'merge', level: 'info', destination: stream }), now: () => 0 });
    p.done({ ...result, published: false, batches: 0, rowsIn: 0, ms: 40 });
    p.failed(new Error('disk full'));
    expect(stream.text().split('\n')).toEqual([
      'merge: nothing new; v000004 stays current with 40,000 URLs in 345 domains (0.04s)',
      'merge failed after 0.00s: disk full',
      '',
    ]);
  });

  it('otherwise writes pino JSON lines: a phase line each, then the result counts', () => {
    const stream = fakeStream(false);
    let t = 0;
    const p = mergeProgress({ stream, log: createLogger({ service: 'merge', level: 'info', destination: stream }), now: () => t });
    t = 50;
    p.phase('load', 50);
    p.done(result);
    p.failed(new Error('boom'));
    const lines = stream.text().trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l['msg'])).toEqual(['merge phase', 'merge done', 'merge failed']);
    expect(lines[0]).toMatchObject({ level: 'info', service: 'merge', phase: 'load', ms: 50, elapsedMs: 50 });
    expect(lines[1]).toMatchObject({ version: 'v000004', published: true, batches: 12, rowsIn: 43210, urls: 40000, domains: 345, collectedVersions: 1 });
    expect(lines[2]).toMatchObject({ level: 'error', err: { message: 'boom' } });
  });

  it('says how many batches had no inbox entry, as a warning in both modes', () => {
    const tty = fakeStream(true);
    mergeProgress({ stream: tty, log: createLogger({ service: 'merge', level: 'info', destination: tty }), now: () => 0 }).done({ ...result, scan: 'full', withoutInbox: 3 });
    expect(tty.text()).toMatch(/^merge: 3 batches had no inbox entry \(a lake written before the merge inbox, or a worker of an older ccpipe/m);
    const json = fakeStream(false);
    mergeProgress({ stream: json, log: createLogger({ service: 'merge', level: 'info', destination: json }), now: () => 0 }).done({ ...result, scan: 'full', withoutInbox: 3 });
    const lines = json.text().trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ msg: 'merge done', scan: 'full' });
    expect(lines[1]).toMatchObject({ level: 'warn', batches: 3 });
    const quiet = fakeStream(false);
    mergeProgress({ stream: quiet, log: createLogger({ service: 'merge', level: 'info', destination: quiet }), now: () => 0 }).done(result);
    expect(quiet.text().trimEnd().split('\n')).toHaveLength(1);
  });

  it('counts merges by how they found their batches, and the batches found without an inbox entry', async () => {
    const registry = new Registry();
    const metrics = mergeMetrics(registry);
    const values = async (name: string) => (await registry.getSingleMetric(name)!.get()).values.map((v) => [v.labels['scan'] ?? '', v.value]);
    expect(await values('ccpipe_merge_scans_total')).toEqual([['inbox', 0], ['full', 0]]);
    metrics.finished(result);
    metrics.finished({ ...result, scan: 'full', withoutInbox: 4 });
    metrics.finished({ ...result, scan: 'full', withoutInbox: 0 });
    expect(await values('ccpipe_merge_scans_total')).toEqual([['inbox', 1], ['full', 2]]);
    expect(await values('ccpipe_merge_batches_without_inbox_total')).toEqual([['', 4]]);
  });

  it('says when garbage collection failed after a merge, as a warning in both modes, and counts it', async () => {
    const tty = fakeStream(true);
    mergeProgress({ stream: tty, log: createLogger({ service: 'merge', level: 'info', destination: tty }), now: () => 0 }).done({ ...result, gcError: 'CCP_ERR_STORE_IO' });
    expect(tty.text()).toContain('merge: garbage collection failed (CCP_ERR_STORE_IO); the next merge deletes what is left');
    const json = fakeStream(false);
    mergeProgress({ stream: json, log: createLogger({ service: 'merge', level: 'info', destination: json }), now: () => 0 }).done({ ...result, gcError: 'CCP_ERR_STORE_IO' });
    const lines = json.text().trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[1]).toMatchObject({ level: 'warn', code: 'CCP_ERR_STORE_IO' });
    const registry = new Registry();
    const metrics = mergeMetrics(registry);
    metrics.finished(result);
    metrics.finished({ ...result, gcError: 'CCP_ERR_STORE_IO' });
    expect((await registry.getSingleMetric('ccpipe_merge_gc_failures_total')!.get()).values[0]!.value).toBe(1);
  });
});
