/**
 * A worker and a batcher that the real RabbitMQ refuses (wrong password) say why in their logs, and a SIGTERM while
 * they wait for the broker stops them at once: nothing was taken, so there is nothing to drain (compose stops a worker
 * within 45 s; one waiting for the broker used to retry until killed). Broker settings that can never work (a refused
 * login, a closed port, a URL that is not AMQP) stop them, non-zero, with the cause in one line: at once for the URL,
 * after --broker-give-up-ms (short here) for the others. Real processes, the real broker, a mirror server over
 * cc-mirror-dev for the batcher's plan.
 */
import { createServer } from 'node:net';
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

/** A TCP port on 127.0.0.1 that nothing listens on (taken from the system, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** Starts `args` against `url`, giving up on refusals after 1.5 s; resolves to its exit, time taken and give-up line. */
async function givenUp(args: string[], url: string): Promise<{ code: number | null; ms: number; line: Record<string, unknown> | undefined; p: CcpipeProcess }> {
  const t = Date.now();
  const p = spawnCcpipe([...args, '--rabbitmq', url, '--broker-give-up-ms', '1500', '--data', data, '--metrics-port', '0', '--queue-prefix', 'ccpipe-login-test']);
  procs.push(p);
  const { code } = await p.exited;
  return { code, ms: Date.now() - t, line: p.logs.find((l) => l['msg'] === 'broker unusable: stopping'), p };
}

describe('broker settings that can never work', () => {
  it('a worker whose login is refused stops after --broker-give-up-ms, exit 1, saying what to check', async () => {
    const { code, ms, line, p } = await givenUp(['worker', '--extract-threads', '1'], REFUSED);
    expect(code).toBe(1);
    expect(line).toMatchObject({ level: 'error', code: 'CCP_ERR_QUEUE_REFUSED', reason: expect.stringMatching(/^the broker refused the login \(ACCESS_REFUSED\) for \d+ s: check the user and password in RABBITMQ_URL/) });
    expect(p.stdout + p.text.join('')).not.toContain('not-the-password');
    expect(p.logs.some((l) => l['msg'] === 'worker failed')).toBe(false); // one plain line, not a stack
    expect(ms).toBeLessThan(30_000);
  }, 60_000);

  it('a batcher facing a closed port stops after --broker-give-up-ms, exit 1, saying what to check', async () => {
    const { code, line, p } = await givenUp(['batcher', '--crawl', 'CC-MAIN-2030-40', '--base-url', mirror.url], `amqp://guest:guest@127.0.0.1:${await closedPort()}`);
    expect(code).toBe(1);
    expect(line).toMatchObject({ level: 'error', code: 'CCP_ERR_QUEUE_REFUSED', reason: expect.stringMatching(/^nothing accepted a connection at the broker's host and port \(ECONNREFUSED\) .*check the host and port in RABBITMQ_URL/) });
    expect(p.logs.some((l) => l['msg'] === 'batcher failed')).toBe(false);
  }, 60_000);

  it('a batcher whose login is refused stops too (exit 1)', async () => {
    const { code, line } = await givenUp(['batcher', '--crawl', 'CC-MAIN-2030-40', '--base-url', mirror.url], REFUSED);
    expect(code).toBe(1);
    expect(line).toMatchObject({ reason: expect.stringMatching(/refused the login/) });
  }, 60_000);

  it.each([[['worker']], [['batcher', '--crawl', 'CC-MAIN-2030-40']]])('%j refuses an http:// broker URL at start, before connecting, without repeating it', async (args) => {
    const t = Date.now();
    const p = spawnCcpipe([...args, '--metrics-port', '0'], { RABBITMQ_URL: 'http://ccpipe:s3cret@127.0.0.1:15672' });
    procs.push(p);
    const { code } = await p.exited;
    expect(code).toBe(1);
    const out = p.text.join('');
    expect(out).toMatch(/--rabbitmq \/ RABBITMQ_URL: must be an amqp:\/\/ or amqps:\/\/ URL .*not http:\/\//);
    expect(out).not.toContain('s3cret');
    expect(p.logs).toEqual([]); // nothing started
    expect(Date.now() - t).toBeLessThan(10_000);
  }, 30_000);
});

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
