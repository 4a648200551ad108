/**
 * Merge across machines (docs/merge-tasks.md): `ccpipe merge --distribute` with `ccpipe merge-worker` processes over the
 * real RabbitMQ, against the in-process `ccpipe merge` of the same batches: the same files, byte for byte; a
 * merge-worker SIGKILLed mid-merge loses nothing.
 */
import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AmqpConnection, deleteTopology, mergeTaskTopologyNames } from '@ccpipe/adapters';
import { processBatch } from '@ccpipe/worker';
import { DEV_CRAWLS, loadOracle } from './support/corpus';
import { devBatches, devStore } from './support/dev-batches';
import { killAll, logLine, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';
import { mergeOutputs, outputDifferences } from './support/store-files';

const RABBITMQ = 'amqp://guest:guest@127.0.0.1:5672';
const oracle = loadOracle();
let root: string;
let source: string;
const procs: CcpipeProcess[] = [];
const prefixes: string[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ccpipe-merge-dist-'));
  // both dev crawls' batches, written once; each run merges its own copy
  source = join(root, 'source');
  const { ids, deps } = await devStore(source);
  for (const crawl of DEV_CRAWLS) for (const b of await devBatches(crawl, { datasetId: ids[crawl]!, batchSize: 40 })) await processBatch(b, deps, { concurrency: 8, includeText: true });
}, 600_000);

afterAll(async () => {
  await killAll(procs);
  const conn = new AmqpConnection({ url: RABBITMQ, reconnect: { maxAttempts: 3 } });
  await conn.start();
  const ch = await conn.createChannel();
  for (const p of prefixes) await deleteTopology(ch, mergeTaskTopologyNames(p)).catch(() => undefined);
  await ch.close().catch(() => undefined);
  await conn.close();
  await rm(root, { recursive: true, force: true });
});

async function copyOf(name: string): Promise<string> {
  const dir = join(root, name);
  await cp(source, dir, { recursive: true });
  return dir;
}

async function merge(dir: string, extra: string[]): Promise<CcpipeProcess> {
  const m = spawnCcpipe(['merge', '--data', dir, '--pass-rows', '200', ...extra]);
  procs.push(m);
  return m;
}

function mergeWorker(dir: string, prefix: string): CcpipeProcess {
  const w = spawnCcpipe(['merge-worker', '--data', dir, '--queue-prefix', prefix, '--metrics-port', '0']);
  procs.push(w);
  return w;
}

const resultOf = (p: CcpipeProcess): Record<string, unknown> => p.logs.find((l) => 'version' in l && 'published' in l)!;

describe('ccpipe merge --distribute with merge-workers', () => {
  it('two merge-workers write the version a one-process merge writes, byte for byte', async () => {
    const plain = await copyOf('plain');
    const dist = await copyOf('dist');
    const prefix = `ccpipe-md-${randomBytes(4).toString('hex')}`;
    prefixes.push(prefix);
    const one = await merge(plain, []);
    expect((await one.exited).code).toBe(0);
    const workers = [mergeWorker(dist, prefix), mergeWorker(dist, prefix)];
    const coordinator = await merge(dist, ['--distribute', 'true', '--queue-prefix', prefix]);
    expect({ code: (await coordinator.exited).code, out: coordinator.text.join('').slice(-2000) }).toMatchObject({ code: 0 });
    expect(resultOf(coordinator)).toMatchObject({ published: true, rowsIn: resultOf(one)['rowsIn'], urls: resultOf(one)['urls'] });
    expect(resultOf(one)['rowsIn']).toBe(DEV_CRAWLS.reduce((n, c) => n + oracle.crawls[c]!.kept_captures, 0));
    // both merge-workers took tasks
    await waitFor('both workers logged a task', async () => workers.every((w) => logLine(w, 'merge task done') !== undefined), 30_000, 200);
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) expect((await w.exited).code).toBe(0);
    // a stopped merge-worker leaves no temp folder behind
    for (const w of workers) expect(existsSync(join(tmpdir(), `ccpipe-merge-worker-${w.child.pid!}`))).toBe(false);
    const [a, b] = [await mergeOutputs(plain), await mergeOutputs(dist)];
    expect(outputDifferences(a, b)).toEqual([]);
    expect([...a.keys()].filter((k) => k.startsWith('urls/')).length).toBeGreaterThan(4);
  }, 600_000);

  it('a merge-worker SIGKILLed mid-merge loses nothing: another takes its task, and the version is the same', async () => {
    const plain = join(root, 'plain'); // merged by the test above
    const dist = await copyOf('killed');
    const prefix = `ccpipe-md-${randomBytes(4).toString('hex')}`;
    prefixes.push(prefix);
    const first = mergeWorker(dist, prefix);
    const coordinator = await merge(dist, ['--distribute', 'true', '--queue-prefix', prefix]);
    await waitFor('a first task done', async () => logLine(first, 'merge task done') !== undefined, 300_000, 20);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const second = mergeWorker(dist, prefix);
    expect({ code: (await coordinator.exited).code, out: coordinator.text.join('').slice(-2000) }).toMatchObject({ code: 0 });
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expect(logLine(second, 'merge task done')).toBeDefined();
    expect(outputDifferences(await mergeOutputs(plain), await mergeOutputs(dist))).toEqual([]);
  }, 600_000);
});
