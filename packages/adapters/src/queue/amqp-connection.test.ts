import { createServer, type Server } from 'node:net';
import { AmqpConnection, brokerRefusalOf, describeBrokerRefusal, reconnectDelayMs, type AmqpConnectionEvent } from './amqp-connection';
import { QueueError } from './queue-error';

describe('reconnectDelayMs', () => {
  const opts = { initialDelayMs: 100, maxDelayMs: 1000, factor: 2, jitter: 0.5, maxAttempts: Infinity };
  it('doubles from the initial delay up to the cap', () => {
    expect([1, 2, 3, 4, 5, 6].map((a) => reconnectDelayMs(opts, a, () => 0))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
  it('jitter only shortens the delay, by at most the jitter fraction', () => {
    expect(reconnectDelayMs(opts, 3, () => 1)).toBe(200);
    expect(reconnectDelayMs(opts, 3, () => 0.5)).toBe(300);
  });
});

describe('brokerRefusalOf', () => {
  const sys = (code: string): Error => Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code });
  it('tells the refusals retrying will not mend from failures that may pass', () => {
    expect(brokerRefusalOf(new Error('Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused"'))).toBe('login-refused');
    expect(brokerRefusalOf(new Error('Connection closed: 530 (NOT-ALLOWED) with message "NOT_ALLOWED - vhost nope not found"'))).toBe('vhost-refused');
    expect(brokerRefusalOf(sys('ECONNREFUSED'))).toBe('port-closed');
    expect(brokerRefusalOf(new AggregateError([sys('ECONNREFUSED'), sys('ECONNREFUSED')], ''))).toBe('port-closed');
    expect(brokerRefusalOf(sys('ENOTFOUND'))).toBe('host-unknown');
    for (const passing of [sys('ETIMEDOUT'), sys('ECONNRESET'), sys('EAI_AGAIN'), new Error('Socket closed abruptly during opening handshake'), 'string']) {
      expect(brokerRefusalOf(passing)).toBeNull();
    }
  });
  it('says in one plain line what to check, naming the setting', () => {
    for (const r of ['login-refused', 'vhost-refused', 'port-closed', 'host-unknown'] as const) {
      const line = describeBrokerRefusal(r, 120_000);
      expect(line).toMatch(/for 120 s: check .*RABBITMQ_URL \(--rabbitmq\)/);
      expect(line).not.toContain('\n');
    }
  });
});

describe('AmqpConnection without a broker', () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    // Accepts and at once closes every socket: a port where no AMQP handshake can succeed, found without guessing.
    server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('retries with the injected backoff, then rejects CCP_ERR_QUEUE_UNAVAILABLE (retryable)', async () => {
    const events: AmqpConnectionEvent[] = [];
    const conn = new AmqpConnection({
      url: `amqp://guest:guest@127.0.0.1:${port}`,
      reconnect: { initialDelayMs: 10, maxDelayMs: 40, factor: 2, jitter: 0, maxAttempts: 4 },
      onEvent: (e) => events.push(e),
    });
    const gaveUp = new Promise((r) => conn.once('gave-up', r));
    await expect(conn.start()).rejects.toMatchObject({ code: 'CCP_ERR_QUEUE_UNAVAILABLE', retryable: true });
    await gaveUp;
    expect(events.filter((e) => e.type === 'reconnect-scheduled').map((e) => (e as { delayMs: number }).delayMs)).toEqual([10, 20, 40]);
    expect(events.at(-1)?.type).toBe('gave-up');
    await expect(conn.createChannel()).rejects.toBeInstanceOf(QueueError);
    await conn.close();
  });

  it('gives up with CCP_ERR_QUEUE_REFUSED once a closed port has refused for giveUpAfterRefusedMs, on time', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const events: AmqpConnectionEvent[] = [];
    const conn = new AmqpConnection({
      url: `amqp://guest:guest@127.0.0.1:${closedPort}`,
      // a backoff far longer than the bound: the last attempt is brought forward to the bound
      reconnect: { initialDelayMs: 50, maxDelayMs: 60_000, factor: 4, jitter: 0, maxAttempts: Infinity },
      giveUpAfterRefusedMs: 600,
      onEvent: (e) => events.push(e),
    });
    const t = Date.now();
    const err = await conn.start().then(() => null, (e: unknown) => e);
    const ms = Date.now() - t;
    expect(err).toMatchObject({ code: 'CCP_ERR_QUEUE_REFUSED', retryable: false, detail: { refusal: 'port-closed' } });
    expect((err as Error).message).toMatch(/^nothing accepted a connection at the broker's host and port \(ECONNREFUSED\) for \d+ s: check/);
    expect(ms).toBeGreaterThanOrEqual(600);
    expect(ms).toBeLessThan(3_000);
    expect(events.at(-1)).toMatchObject({ type: 'gave-up', error: err });
    await expect(conn.createChannel()).rejects.toBe(err); // later callers get the same reason
    await conn.close();
  });

  it('keeps trying past giveUpAfterRefusedMs while failures are not refusals (a port that accepts, then drops)', async () => {
    const conn = new AmqpConnection({
      url: `amqp://guest:guest@127.0.0.1:${port}`,
      reconnect: { initialDelayMs: 20, maxDelayMs: 20, factor: 1, jitter: 0, maxAttempts: Infinity },
      giveUpAfterRefusedMs: 100,
    });
    let settled = false;
    const started = conn.start().finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 500));
    expect(settled).toBe(false);
    await conn.close();
    await expect(started).rejects.toMatchObject({ code: 'CCP_ERR_QUEUE_CLOSED' });
  });

  it('close() while connecting stops retrying, rejects waiters with CCP_ERR_QUEUE_CLOSED and is idempotent', async () => {
    const events: AmqpConnectionEvent[] = [];
    const conn = new AmqpConnection({
      url: `amqp://guest:guest@127.0.0.1:${port}`,
      reconnect: { initialDelayMs: 20, maxDelayMs: 20, factor: 1, jitter: 0, maxAttempts: Infinity },
      onEvent: (e) => events.push(e),
    });
    const started = conn.start();
    await new Promise((r) => setTimeout(r, 100));
    await conn.close();
    await conn.close();
    await expect(started).rejects.toMatchObject({ code: 'CCP_ERR_QUEUE_CLOSED', retryable: false });
    const n = events.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(events.length).toBe(n);
  });
});
