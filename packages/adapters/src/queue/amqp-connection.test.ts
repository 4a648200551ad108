import { createServer, type Server } from 'node:net';
import { AmqpConnection, reconnectDelayMs, type AmqpConnectionEvent } from './amqp-connection';
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
