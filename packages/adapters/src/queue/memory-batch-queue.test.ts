import { decodeBatch, type BatchConsumer, type BatchPublisher, type Delivery } from '@ccpipe/core';
import { corpusBatches, describeBatchQueueContract, eventually, sleep } from './batch-queue.contract';
import { MemoryBatchQueue } from './memory-batch-queue';

describeBatchQueueContract('memory', async () => {
  const q = new MemoryBatchQueue({ deliveryLimit: 10 });
  const made: Array<BatchPublisher | BatchConsumer> = [];
  return {
    deliveryLimit: 10,
    publisher: () => {
      const p = q.publisher();
      made.push(p);
      return p;
    },
    consumer: (prefetch) => {
      const c = q.consumer({ prefetch });
      made.push(c);
      return c;
    },
    depth: () => q.queueDepth(),
    takeDeadLetters: async () => q.takeDeadLetters().map((d) => ({ messageId: d.messageId, reason: d.reason, body: d.body })),
    dispose: async () => {
      await Promise.all(made.map((m) => m.close()));
    },
  };
});

describe('MemoryBatchQueue specifics', () => {
  it('reports unacked deliveries in its depth (RabbitMQ checkQueue cannot)', async () => {
    const q = new MemoryBatchQueue();
    const pub = q.publisher();
    for (const b of corpusBatches(100, 5)) await pub.publish(b);
    const held: Delivery[] = [];
    const c = q.consumer({ prefetch: 2 });
    await c.start(async (d) => {
      held.push(d);
    });
    await eventually(() => held.length === 2);
    expect(await q.queueDepth()).toEqual({ ready: 3, unacked: 2, deadLettered: 0 });
    await held[0]!.deadLetter('CCP_ERR_WARC_PATH');
    await eventually(async () => (await q.queueDepth()).unacked === 2);
    expect(await q.queueDepth()).toEqual({ ready: 2, unacked: 2, deadLettered: 1 });
    expect(q.deadLetters()[0]).toMatchObject({ reason: 'CCP_ERR_WARC_PATH', deliveryCount: 0 });
    await c.close();
    expect(await q.queueDepth()).toEqual({ ready: 4, unacked: 0, deadLettered: 1 });
  });

  it('a handler that throws without settling has its delivery requeued', async () => {
    const q = new MemoryBatchQueue({ deliveryLimit: 1 });
    const [batch] = corpusBatches(10, 1);
    await q.publisher().publish(batch!);
    const counts: number[] = [];
    const c = q.consumer({ prefetch: 1 });
    await c.start(async (d) => {
      counts.push(d.deliveryCount);
      throw new Error('handler bug');
    });
    await eventually(() => q.deadLetters().length === 1);
    await sleep(50);
    expect(counts).toEqual([0, 1]);
    expect(decodeBatch(q.deadLetters()[0]!.body).id).toBe(batch!.id);
    await c.close();
  });
});
