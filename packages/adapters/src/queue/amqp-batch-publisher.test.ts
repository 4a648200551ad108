import { EventEmitter } from 'node:events';
import type { ConfirmChannel } from 'amqplib';
import { AmqpBatchPublisher } from './amqp-batch-publisher';
import type { AmqpConnection } from './amqp-connection';
import { corpusBatches } from './batch-queue.contract';
import { topologyNames } from './topology';

/** A confirm channel that records publishes and lets the test decide the buffer state and the confirms. */
class FakeChannel extends EventEmitter {
  sent: Array<{ messageId: string; cb: (err: unknown) => void }> = [];
  full = false;
  publish(_ex: string, _rk: string, _body: Buffer, opts: { messageId: string }, cb: (err: unknown) => void): boolean {
    this.sent.push({ messageId: opts.messageId, cb });
    return !this.full;
  }
  async close(): Promise<void> {
    this.emit('close');
  }
}

function fakeConnection(ch: FakeChannel): AmqpConnection {
  return { isBlocked: false, createConfirmChannel: async () => ch as unknown as ConfirmChannel } as unknown as AmqpConnection;
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('AmqpBatchPublisher flow control (fake channel)', () => {
  const batches = corpusBatches(20, 3);

  it('stops sending when publish() returns false and resumes on drain', async () => {
    const ch = new FakeChannel();
    const pub = new AmqpBatchPublisher({ connection: fakeConnection(ch), names: topologyNames('t'), confirmTimeoutMs: 5000 });
    ch.full = true;
    const p1 = pub.publish(batches[0]!);
    await tick();
    const p2 = pub.publish(batches[1]!);
    const p3 = pub.publish(batches[2]!);
    await tick();
    expect(ch.sent.map((s) => s.messageId)).toEqual([batches[0]!.id]);
    ch.full = false;
    ch.emit('drain');
    await tick();
    expect(ch.sent.map((s) => s.messageId)).toEqual(batches.map((b) => b.id));
    for (const s of ch.sent) s.cb(null);
    await Promise.all([p1, p2, p3]);
    await pub.close();
  });

  it('a return before the confirm rejects that publish only, even with the same id in flight twice', async () => {
    const ch = new FakeChannel();
    const pub = new AmqpBatchPublisher({ connection: fakeConnection(ch), names: topologyNames('t'), confirmTimeoutMs: 5000 });
    const a = pub.publish(batches[0]!);
    const b = pub.publish(batches[0]!);
    await tick();
    ch.emit('return', { properties: { messageId: batches[0]!.id }, fields: { replyCode: 312, replyText: 'NO_ROUTE', exchange: '' } });
    ch.sent[0]!.cb(null);
    ch.sent[1]!.cb(null);
    await expect(a).rejects.toMatchObject({ code: 'CCP_ERR_QUEUE_RETURNED', retryable: true });
    await expect(b).resolves.toBeUndefined();
  });

  it('a channel closed with publishes parked on drain wakes them onto a new channel', async () => {
    const first = new FakeChannel();
    const second = new FakeChannel();
    const channels = [first, second];
    const conn = { isBlocked: false, createConfirmChannel: async () => channels.shift() as unknown as ConfirmChannel } as unknown as AmqpConnection;
    const pub = new AmqpBatchPublisher({ connection: conn, names: topologyNames('t'), confirmTimeoutMs: 5000 });
    first.full = true;
    const p1 = pub.publish(batches[0]!);
    await tick();
    const p2 = pub.publish(batches[1]!);
    await tick();
    first.sent[0]!.cb(new Error('channel closed'));
    first.emit('close');
    await expect(p1).rejects.toMatchObject({ code: 'CCP_ERR_QUEUE_CHANNEL_CLOSED', retryable: true });
    await tick();
    expect(second.sent.map((s) => s.messageId)).toEqual([batches[1]!.id]);
    second.sent[0]!.cb(null);
    await p2;
  });
});
