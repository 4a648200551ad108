/**
 * A worker and a batcher that the real RabbitMQ refuses (wrong password) say why in their logs, and a SIGTERM while
 * they wait for the broker stops them at once: nothing was taken, so there is nothing to drain (compose stops a worker
 * within 45 s; one waiting for the broker used to retry until killed). Real processes, the real broker, a mirror
 * server over cc-mirror-dev for the batcher's plan.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { CC_MIRROR_DEV } from './support/corpus';
import { killAll, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';

const REFUSED = 'amqp://guest:not-the-password@127.0.0.1:5672';
let data: string;
let mirror: MirrorServer;
const procs: CcpipeProcess[] = [];

beforeAll(async () => {
  data = await mkdtemp(join(tmpdir(), 'ccpipe-login-'));
  mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
});
afterAll(async () => {
  await killAll(procs);
  await mirror.close();
  await rm(data, { recursive: true, force: true });
});

/** Starts `args`, waits for its first refused login, stops it with SIGTERM and returns its exit and the refusal line. */
async function refusedThenStopped(args: string[]): Promise<{ code: number | null; line: Record<string, unknown>; ms: number }> {
  const p = spawnCcpipe([...args, '--rabbitmq', REFUSED, '--data', data, '--metrics-port', '0', '--queue-prefix', 'ccpipe-login-test']);
  procs.push(p);
  const line = await waitFor('a refused login in the logs', () => p.logs.find((l) => l['event'] === 'reconnect-scheduled'), 60_000);
  const t = Date.now();
  p.child.kill('SIGTERM');
  const { code } = await p.exited;
  return { code, line: line!, ms: Date.now() - t };
}

describe('a service the broker refuses', () => {
  it('a worker logs why and exits 0 on SIGTERM without waiting for the broker', async () => {
    const { code, line, ms } = await refusedThenStopped(['worker', '--extract-threads', '1']);
    expect(line).toMatchObject({ level: 'warn', msg: 'broker', reason: expect.stringMatching(/ACCESS_REFUSED|403/) });
    expect(JSON.stringify(line)).not.toContain('not-the-password');
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
  }, 90_000);

  it('a batcher logs why and exits 130 (its run undone, the checkpoint kept) on SIGTERM', async () => {
    const { code, line } = await refusedThenStopped(['batcher', '--crawl', 'CC-MAIN-2030-40', '--base-url', mirror.url]);
    expect(line).toMatchObject({ msg: 'broker', reason: expect.stringMatching(/ACCESS_REFUSED|403/) });
    expect(code).toBe(130);
  }, 90_000);
});
