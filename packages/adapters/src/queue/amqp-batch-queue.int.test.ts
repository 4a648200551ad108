// Integration tests against the real RabbitMQ on 127.0.0.1:5672 (guest/guest). Every test uses its own
// `ccpipe-test-<random>` queues, deleted after the test and again in afterAll if anything was left.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfirmChannel } from 'amqplib';
import { decodeBatch, type BatchConsumer, type BatchPublisher, type Delivery } from '@ccpipe/core';
import { AmqpBatchConsumer, amqpQueueDepth } from './amqp-batch-consumer';
import { AmqpBatchPublisher } from './amqp-batch-publisher';
import { AmqpConnection, type AmqpConnectionOptions } from './amqp-connection';
import { corpusBatches, describeBatchQueueContract, eventually, sleep, type BatchQueueHarness } from './batch-queue.contract';
import { deadLetterInfo } from './dead-letter';
import { QueueError } from './queue-error';
import { declareTopology, deleteTopology, topologyNames, workQueueArguments, deadLetterQueueArguments, type QueueTopologyNames } from './topology';
import { killConnectionFromBroker } from '../../../../tests/support/rabbitmq';

const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
const REPO_ROOT = join(__dirname, '../../../..');
// Few attempts: with the broker down every test fails in seconds instead of running into jest's timeout.
const FAST_RECONNECT = { initialDelayMs: 50, maxDelayMs: 500, factor: 2, jitter: 0, maxAttempts: 10 };

const leftovers = new Set<string>();
const uniquePrefix = (): string => `ccpipe-test-${randomBytes(6).toString('hex')}`;

function connection(name: string, extra: Partial<AmqpConnectionOptions> = {}): AmqpConnection {
  return new AmqpConnection({ url: AMQP_URL, name, reconnect: FAST_RECONNECT, ...extra });
}

async function withChannel<T>(fn: (ch: ConfirmChannel) => Promise<T>): Promise<T> {
  const conn = connection('ccpipe-test-admin');
  try {
    return await fn(await conn.createConfirmChannel());
  } finally {
    await conn.close();
  }
}

async function declare(names: QueueTopologyNames): Promise<void> {
  leftovers.add(names.queue.replace(/\.batches$/, ''));
  await withChannel((ch) => declareTopology(ch, names));
}

async function remove(names: QueueTopologyNames): Promise<void> {
  await withChannel((ch) => deleteTopology(ch, names)).catch(() => {});
  leftovers.delete(names.queue.replace(/\.batches$/, ''));
}

afterAll(async () => {
  for (const prefix of [...leftovers]) await remove(topologyNames(prefix));
});

/** A fresh topology, one connection, and everything made on it closed/deleted by dispose(). */
async function amqpHarness(connOpts: Partial<AmqpConnectionOptions> = {}): Promise<BatchQueueHarness & { conn: AmqpConnection; names: QueueTopologyNames; prefix: string }> {
  const prefix = uniquePrefix();
  const names = topologyNames(prefix);
  await declare(names);
  const conn = connection(prefix, connOpts);
  await conn.start();
  const made: Array<BatchPublisher | BatchConsumer> = [];
  return {
    conn,
    names,
    prefix,
    deliveryLimit: names.deliveryLimit,
    publisher: () => {
      const p = new AmqpBatchPublisher({ connection: conn, names, confirmTimeoutMs: 5000 });
      made.push(p);
      return p;
    },
    consumer: (prefetch) => {
      const c = new AmqpBatchConsumer({ connection: conn, names, prefetch, resubscribe: FAST_RECONNECT });
      made.push(c);
      return c;
    },
    depth: () => amqpQueueDepth(conn, names),
    takeDeadLetters: async () => {
      const ch = await conn.createChannel();
      const out: Array<{ messageId: string; reason: string; body: Uint8Array }> = [];
      try {
        for (let m = await ch.get(names.deadLetterQueue, { noAck: true }); m; m = await ch.get(names.deadLetterQueue, { noAck: true })) {
          out.push({ messageId: String(m.properties.messageId), reason: deadLetterInfo(m.properties.headers).reason, body: m.content });
        }
      } finally {
        await ch.close().catch(() => {});
      }
      return out;
    },
    dispose: async () => {
      await Promise.all(made.map((m) => m.close().catch(() => {})));
      await conn.close();
      await remove(names);
    },
  };
}

describeBatchQueueContract('amqp (RabbitMQ quorum queue)', () => amqpHarness());

describe('topology', () => {
  it('agrees with rabbitmq/definitions.json', () => {
    const defs = JSON.parse(readFileSync(join(REPO_ROOT, 'rabbitmq/definitions.json'), 'utf8')) as {
      exchanges: Array<{ name: string; type: string; durable: boolean }>;
      queues: Array<{ name: string; durable: boolean; arguments: Record<string, unknown> }>;
      bindings: Array<{ source: string; destination: string; routing_key: string }>;
    };
    const names = topologyNames();
    const q = defs.queues.find((x) => x.name === names.queue);
    const dlq = defs.queues.find((x) => x.name === names.deadLetterQueue);
    expect(q).toMatchObject({ durable: true, arguments: workQueueArguments(names) });
    expect(q?.arguments).toEqual(workQueueArguments(names));
    expect(dlq?.arguments).toEqual(deadLetterQueueArguments());
    expect(defs.exchanges).toContainEqual(expect.objectContaining({ name: names.deadLetterExchange, type: 'fanout', durable: true }));
    expect(defs.bindings).toContainEqual(expect.objectContaining({ source: names.deadLetterExchange, destination: names.deadLetterQueue, routing_key: '' }));
  });

  it('declaring twice is a no-op; declaring with other arguments is refused by the broker', async () => {
    const names = topologyNames(uniquePrefix());
    try {
      await declare(names);
      await declare(names);
      await expect(declare({ ...names, deliveryLimit: names.deliveryLimit + 1 })).rejects.toThrow(/PRECONDITION_FAILED/);
    } finally {
      await remove(names);
    }
  });
});

describe('AmqpBatchPublisher (RabbitMQ)', () => {
  it('a publish to a missing queue is returned and rejects retryable; routable ones in flight still resolve', async () => {
    const h = await amqpHarness();
    const missing = new AmqpBatchPublisher({ connection: h.conn, names: topologyNames(uniquePrefix()), confirmTimeoutMs: 5000 });
    try {
      const batches = corpusBatches(100, 6);
      const good = h.publisher();
      const results = await Promise.allSettled(batches.flatMap((b) => [missing.publish(b), good.publish(b)]));
      const [bad, ok] = [results.filter((_, i) => i % 2 === 0), results.filter((_, i) => i % 2 === 1)];
      for (const r of ok) expect(r.status).toBe('fulfilled');
      for (const r of bad) {
        expect(r.status).toBe('rejected');
        const err = (r as PromiseRejectedResult).reason as QueueError;
        expect(err).toBeInstanceOf(QueueError);
        expect(err).toMatchObject({ code: 'CCP_ERR_QUEUE_RETURNED', retryable: true, detail: expect.objectContaining({ replyCode: 312 }) });
      }
      await eventually(async () => (await h.depth()).ready === batches.length, 5000, 'ready count');
    } finally {
      await missing.close();
      await h.dispose();
    }
  });

  it('a confirm that never comes rejects with CCP_ERR_QUEUE_CONFIRM_TIMEOUT (confirms dropped client-side)', async () => {
    // A disk alarm would stall every engineer's broker; instead the channel ignores the broker's acks, which
    // looks the same to the publisher: the message is sent and no confirm arrives.
    class DeafConnection extends AmqpConnection {
      override async createConfirmChannel(signal?: AbortSignal): Promise<ConfirmChannel> {
        const ch = await super.createConfirmChannel(signal);
        ch.removeAllListeners('ack');
        return ch;
      }
    }
    const h = await amqpHarness();
    const deaf = new DeafConnection({ url: AMQP_URL, name: `${h.prefix}-deaf`, reconnect: FAST_RECONNECT });
    const pub = new AmqpBatchPublisher({ connection: deaf, names: h.names, confirmTimeoutMs: 300 });
    try {
      const [batch] = corpusBatches(100, 1);
      const t0 = Date.now();
      await expect(pub.publish(batch!)).rejects.toMatchObject({ code: 'CCP_ERR_QUEUE_CONFIRM_TIMEOUT', retryable: true });
      expect(Date.now() - t0).toBeLessThan(5000);
      await pub.close();
      expect(pub.pendingCount).toBe(0);
    } finally {
      await deaf.close();
      await h.dispose();
    }
  });

  it('publishes pending when the socket dies reject retryable, none hang, and publishing resumes after reconnect', async () => {
    const h = await amqpHarness();
    try {
      const pub = h.publisher();
      const batches = corpusBatches(10, 114);
      await pub.publish(batches[0]!);
      const inFlight = batches.slice(1).map((b) => pub.publish(b));
      h.conn.destroySocketForTest();
      const results = await Promise.allSettled(inFlight);
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      for (const r of failed) expect(r.reason).toMatchObject({ retryable: true });
      expect(failed.length).toBeGreaterThan(0);
      await eventually(() => h.conn.isOpen, 10_000, 'reconnect');
      await pub.publish(batches[1]!);
    } finally {
      await h.dispose();
    }
  });
});

describe('AmqpBatchConsumer (RabbitMQ)', () => {
  it('resumes after the broker closes its connection and loses nothing', async () => {
    const h = await amqpHarness();
    try {
      const batches = corpusBatches(30);
      const pub = h.publisher();
      await Promise.all(batches.map((b) => pub.publish(b)));
      const acked = new Set<string>();
      const lostAcks: string[] = [];
      const ackErrors: unknown[] = []; // asserted after the run: the consumer swallows what a handler throws
      // Deliveries after the 8th wait until the broker has killed the connection, so some acks are surely lost.
      let release!: () => void;
      const killed = new Promise<void>((r) => (release = r));
      let killDone = false;
      const c = h.consumer(5);
      await c.start(async (d) => {
        const id = decodeBatch(d.body).id;
        if (acked.size >= 8 && !killDone) await killed;
        try {
          await d.ack();
          acked.add(id);
        } catch (err) {
          ackErrors.push(err);
          lostAcks.push(id);
        }
      });
      await eventually(() => acked.size >= 8, 10_000, 'some acks');
      const lost = new Promise((r) => h.conn.once('lost', r));
      const reconnected = new Promise((r) => h.conn.once('connected', r));
      killConnectionFromBroker(h.prefix);
      await lost;
      killDone = true;
      release();
      await reconnected;
      await eventually(() => acked.size === batches.length, 20_000, 'every batch acked');
      expect(lostAcks.length).toBeGreaterThan(0);
      for (const err of ackErrors) expect(err).toMatchObject({ code: 'CCP_ERR_QUEUE_CHANNEL_CLOSED', retryable: true });
      await eventually(async () => (await h.depth()).ready === 0, 5000, 'empty queue');
      expect((await h.depth()).deadLettered).toBe(0);
    } finally {
      await h.dispose();
    }
  });

  it('a delivery whose channel is lost has its signal aborted, so its handler can stop; the redelivery comes on the new channel', async () => {
    const h = await amqpHarness();
    try {
      const pub = h.publisher();
      await Promise.all(corpusBatches(5, 3).map((b) => pub.publish(b)));
      const held: Delivery[] = [];
      const later: Delivery[] = [];
      let killed = false;
      const c = h.consumer(3);
      await c.start(async (d) => {
        if (killed) {
          later.push(d);
          await d.ack();
          return;
        }
        held.push(d); // holds the delivery, unsettled, until its channel goes
        await new Promise<void>((r) => (d.signal!.aborted ? r() : d.signal!.addEventListener('abort', () => r(), { once: true })));
      });
      await eventually(() => held.length === 3, 10_000, 'three deliveries held');
      expect(held.map((d) => d.signal?.aborted)).toEqual([false, false, false]);
      const reconnected = new Promise((r) => h.conn.once('connected', r));
      killed = true;
      killConnectionFromBroker(h.prefix);
      await eventually(() => held.every((d) => d.signal!.aborted), 10_000, 'the held deliveries aborted');
      expect(held[0]!.signal!.reason).toMatchObject({ code: 'CCP_ERR_QUEUE_CHANNEL_CLOSED', retryable: true });
      await expect(held[0]!.ack()).rejects.toMatchObject({ code: 'CCP_ERR_QUEUE_CHANNEL_CLOSED' });
      await reconnected;
      await eventually(() => later.length === 3, 20_000, 'redelivered on the new channel and acked');
      expect(later.map((d) => [d.signal?.aborted, d.redelivered])).toEqual([[false, true], [false, true], [false, true]]);
      await eventually(async () => (await h.depth()).ready === 0, 5000, 'empty queue');
    } finally {
      await h.dispose();
    }
  });

  it('when its queue is deleted it backs off resubscribing, and resumes once the queue is back', async () => {
    const h = await amqpHarness();
    const events: Array<{ type: string; delayMs?: number }> = [];
    const c = new AmqpBatchConsumer({
      connection: h.conn, names: h.names, prefetch: 2,
      resubscribe: { initialDelayMs: 40, maxDelayMs: 160, factor: 2, jitter: 0 },
      onEvent: (e) => events.push(e),
    });
    try {
      const got: string[] = [];
      await c.start(async (d) => {
        got.push(decodeBatch(d.body).id);
        await d.ack();
      });
      await withChannel((ch) => ch.deleteQueue(h.names.queue));
      await eventually(() => events.filter((e) => e.type === 'resubscribe-failed').length >= 4, 10_000, 'failed resubscribes');
      const delays = events.filter((e) => e.type === 'resubscribe-failed').map((e) => e.delayMs);
      expect(delays.slice(0, 4)).toEqual([40, 80, 160, 160]);
      expect(events.find((e) => e.type === 'subscription-lost')).toBeDefined();
      // The delays are really waited: in 480 ms at most 3 more attempts at 160 ms (a hot loop would make hundreds).
      const before = events.filter((e) => e.type === 'resubscribe-failed').length;
      await sleep(480);
      expect(events.filter((e) => e.type === 'resubscribe-failed').length - before).toBeLessThanOrEqual(4);
      await declare(h.names);
      const [batch] = corpusBatches(100, 1);
      await eventually(() => events.filter((e) => e.type === 'subscribed').length >= 2, 10_000, 'resubscribed');
      await h.publisher().publish(batch!);
      await eventually(() => got.length === 1, 5000, 'delivery after resubscribe');
      expect(got).toEqual([batch!.id]);
    } finally {
      await c.close();
      await h.dispose();
    }
  });

  it('start() rejects when the queue does not exist, and does not keep retrying', async () => {
    const conn = connection('ccpipe-test-missing');
    const events: string[] = [];
    const c = new AmqpBatchConsumer({ connection: conn, names: topologyNames(uniquePrefix()), prefetch: 1, onEvent: (e) => events.push(e.type) });
    try {
      await expect(c.start(async () => {})).rejects.toThrow(/NOT_FOUND/);
      await sleep(300);
      expect(events).not.toContain('resubscribe-failed');
    } finally {
      await c.close();
      await conn.close();
    }
  });
});
