/**
 * A batcher SIGKILLed after its checkpoint passed every planned block but before it saved `done: true` (the chaos
 * suite's batcher kill landed there with seed 171357969): rerun, it must mark the crawl done — not only say
 * "run already complete" and leave the checkpoint so, which kept `/v1/status` from ever calling the crawl done.
 * The real `ccpipe batcher` on cc-mirror-dev, the real RabbitMQ (a queue prefix of its own, deleted after).
 */
import { readFile, rm, writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AmqpConnection, deleteTopology, topologyNames } from '@ccpipe/adapters';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { CC_MIRROR_DEV, DEV_CRAWLS, loadOracle } from './support/corpus';
import { killAll, logLine, spawnCcpipe, type CcpipeProcess } from './support/processes';

const prefix = `ccpipe-complete-${randomBytes(4).toString('hex')}`;
const crawl = DEV_CRAWLS[1];
let data: string;
let mirror: MirrorServer;
const procs: CcpipeProcess[] = [];

beforeAll(async () => {
  data = await mkdtemp(join(tmpdir(), 'ccpipe-complete-'));
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
  await mirror.close();
  await rm(data, { recursive: true, force: true });
});

async function batcher(): Promise<CcpipeProcess> {
  const p = spawnCcpipe(['batcher', '--crawl', crawl, '--batch-size', '25', '--base-url', mirror.url, '--data', data, '--queue-prefix', prefix, '--metrics-port', '0']);
  procs.push(p);
  expect((await p.exited).code).toBe(0);
  return p;
}

it('a rerun after a kill between the last checkpoint save and the done one marks the crawl done, counts kept', async () => {
  const path = join(data, 'batcher', crawl, 'checkpoint.json');
  const first = await batcher();
  expect(logLine(first, 'batcher done')).toBeDefined();
  const complete = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  expect(complete).toMatchObject({ done: true, nextPlanIndex: complete['planLength'], recordsPublished: loadOracle().crawls[crawl]!.kept_captures });

  // what the forced save before the done one writes, as the kill left it
  await writeFile(path, JSON.stringify({ ...complete, done: false }) + '\n');
  const rerun = await batcher();
  expect(logLine(rerun, 'plan ready')).toMatchObject({ resumeAt: complete['planLength'] });
  expect(logLine(rerun, 'run already complete')).toBeDefined();
  const after = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  expect({ ...after, updatedAt: null }).toEqual({ ...complete, updatedAt: null });
}, 120_000);
