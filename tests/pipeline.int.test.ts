/**
 * The whole pipeline as separate processes, as an operator runs it: `ccpipe batcher` per crawl and two `ccpipe worker`s
 * over the real RabbitMQ and a mirror server over cc-mirror-dev, then `ccpipe merge`, then `ccpipe api`; the answers
 * of the HTTP API are compared with oracle.json for every (domain, crawl).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AmqpConnection, deleteTopology, topologyNames } from '@ccpipe/adapters';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { DEV_CRAWLS, CC_MIRROR_DEV, loadOracle } from './support/corpus';
import { expectApiMatchesOracle } from './support/api-oracle';
import { killAll, logLine, markersIn, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';

const prefix = `ccpipe-pipe-${randomBytes(4).toString('hex')}`;
const procs: CcpipeProcess[] = [];
let data = '';
let mirror: MirrorServer | undefined;

beforeAll(async () => {
  data = await mkdtemp(join(tmpdir(), 'ccpipe-pipeline-'));
  mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
});

afterAll(async () => {
  await killAll(procs);
  const conn = new AmqpConnection({ url: 'amqp://guest:guest@127.0.0.1:5672', reconnect: { maxAttempts: 3 } });
  await conn.start();
  const ch = await conn.createChannel();
  await deleteTopology(ch, topologyNames(prefix)).catch(() => undefined);
  await ch.close().catch(() => undefined);
  await conn.close();
  await mirror?.close();
  await rm(data, { recursive: true, force: true });
});

const start = (args: string[]): CcpipeProcess => {
  const p = spawnCcpipe(args);
  procs.push(p);
  return p;
};


describe('batcher → RabbitMQ → 2 workers → merge → api, as separate processes', () => {
  it('answers every (domain, crawl) of the oracle with its datasets, exact counts and URL set', async () => {
    const common = ['--data', data, '--base-url', mirror!.url, '--queue-prefix', prefix, '--metrics-port', '0'];
    let batches = 0;
    for (const crawl of DEV_CRAWLS) {
      const b = start(['batcher', '--crawl', crawl, '--batch-size', '50', ...common]);
      expect((await b.exited).code).toBe(0);
      batches += logLine(b, 'batcher done')!['batches'] as number;
    }
    const workers = [0, 1].map(() => start(['worker', '--extract-threads', '1', ...common]));
    await waitFor('every batch done', async () => (await markersIn(data)).length === batches, 900_000, 500);
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) expect((await w.exited).code).toBe(0);

    const merge = start(['merge', '--data', data]);
    expect((await merge.exited).code).toBe(0);

    const api = start(['api', '--data', data, '--api-port', '0', '--api-host', '127.0.0.1']);
    const listening = (await waitFor('api listening', () => logLine(api, 'api listening'), 60_000))!;
    const base = `http://127.0.0.1:${String(listening['port'])}`;

    await expectApiMatchesOracle(base);
    // /v1/status: both batchers are done and the version served holds every batch they published
    const status = (await (await fetch(`${base}/v1/status`)).json()) as {
      ingest: { done: boolean; recordsPublished: number; datasets: { name: string; batcherDone: boolean; batchesPublished: number; recordsPublished: number; batchesMerged: number }[] };
    };
    expect(status.ingest.done).toBe(true);
    // the records the batchers kept and published: the oracle's kept captures of each crawl
    const oracle = loadOracle();
    for (const d of status.ingest.datasets) expect([d.name, d.recordsPublished]).toEqual([d.name, oracle.crawls[d.name]!.kept_captures]);
    expect(status.ingest.recordsPublished).toBe(DEV_CRAWLS.reduce((n, c) => n + oracle.crawls[c]!.kept_captures, 0));
    expect(status.ingest.datasets.map((d) => d.name).sort()).toEqual([...DEV_CRAWLS].sort());
    expect(status.ingest.datasets.reduce((n, d) => n + d.batchesPublished, 0)).toBe(batches);
    for (const d of status.ingest.datasets) expect(d).toMatchObject({ batcherDone: true, batchesMerged: d.batchesPublished });
    // the lake reader behind the real API: chunks were decoded and kept, every file's locator was found
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? NaN);
    expect(value('ccpipe_api_lake_cache_misses_total')).toBeGreaterThan(0);
    expect(value('ccpipe_api_lake_cache_hits_total')).toBeGreaterThan(0);
    expect(value('ccpipe_api_lake_cache_bytes')).toBeGreaterThan(0);
    expect(value('ccpipe_api_lake_locator_fallbacks_total')).toBe(0);
    api.child.kill('SIGTERM');
    expect((await api.exited).code).toBe(0);
  }, 1_200_000);
});
