import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { batchId, decodeBatch, parseCdxLine, type Batch, type BatchConsumer, type BatchPublisher, type Delivery, type QueueDepth } from '@ccpipe/core';

/** What the contract needs from one queue backend; a fresh, empty queue per harness. */
export interface BatchQueueHarness {
  readonly deliveryLimit: number;
  publisher(): BatchPublisher;
  consumer(prefetch: number): BatchConsumer;
  depth(): Promise<QueueDepth>;
  /** Removes and returns what is in the DLQ. */
  takeDeadLetters(): Promise<Array<{ messageId: string; reason: string; body: Uint8Array }>>;
  /** Closes every publisher/consumer it made and deletes the queues. Must not throw. */
  dispose(): Promise<void>;
}

const REPO_ROOT = resolve(__dirname, '../../../..');
const CDX_00187 = join(REPO_ROOT, '../shared/corpus/cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187');

/**
 * Batches cut from the 1140 real CDX lines of CC-MAIN-2024-30 cdx-00187, `perBatch` records each, as the batcher
 * would make them (block 187, seq 0…).
 */
export function corpusBatches(perBatch: number, limit = Infinity): Batch[] {
  const lines = readFileSync(CDX_00187, 'utf8').split('\n').filter((l) => l.length > 0);
  const batches: Batch[] = [];
  for (let i = 0; i < lines.length && batches.length < limit; i += perBatch) {
    const records = lines.slice(i, i + perBatch).map((line) => {
      const r = parseCdxLine(line);
      return {
        url: r.url, ts: r.timestamp, status: r.status, mime: r.mime, mimeDetected: r.mimeDetected, charset: r.charset,
        languages: r.languages, digest: r.digest, filename: r.filename, offset: r.offset, length: r.length,
      };
    });
    batches.push({ v: 1, id: batchId('CC-MAIN-2024-30', 187, batches.length), crawl: 'CC-MAIN-2024-30', dataset: 'cc-main', datasetId: 1, blockNo: 187, seq: batches.length, records });
  }
  return batches;
}

/** Polls `check` until it returns true; fails (never hangs) after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Time to wait for deliveries that must NOT come (a broker on loopback delivers within a few ms). */
const QUIET_MS = 400;

/**
 * The behaviour every BatchPublisher/BatchConsumer pair must have, run against each backend with a fresh queue per
 * test. `factory` is called once per test; the harness is disposed after it, pass or fail.
 */
export function describeBatchQueueContract(name: string, factory: () => Promise<BatchQueueHarness>): void {
  describe(`batch queue contract: ${name}`, () => {
    let h: BatchQueueHarness | null = null;
    const open = async (): Promise<BatchQueueHarness> => {
      h = await factory();
      return h;
    };
    afterEach(async () => {
      await h?.dispose();
      h = null;
    });

    it('publish N → consume exactly N, bodies intact, then the queue is empty', async () => {
      const q = await open();
      const batches = corpusBatches(95);
      expect(batches).toHaveLength(12);
      const pub = q.publisher();
      await Promise.all(batches.map((b) => pub.publish(b)));
      await eventually(async () => (await q.depth()).ready === batches.length, 5000, 'ready count');
      const got: Batch[] = [];
      const firstTime: boolean[] = [];
      const c = q.consumer(4);
      await c.start(async (d) => {
        got.push(decodeBatch(d.body));
        firstTime.push(d.deliveryCount === 0 && !d.redelivered);
        await d.ack();
      });
      await eventually(() => got.length >= batches.length, 10_000, 'all deliveries');
      await sleep(QUIET_MS);
      expect(got).toHaveLength(batches.length);
      expect(firstTime.every(Boolean)).toBe(true);
      const byId = new Map(got.map((b) => [b.id, b]));
      for (const b of batches) expect(byId.get(b.id)).toEqual(b);
      await eventually(async () => {
        const depth = await q.depth();
        return depth.ready === 0 && (depth.unacked ?? 0) === 0 && depth.deadLettered === 0;
      }, 5000, 'empty queue');
    });

    it('prefetch bounds the unacknowledged deliveries; an ack lets exactly one more in', async () => {
      const q = await open();
      const pub = q.publisher();
      await Promise.all(corpusBatches(100, 10).map((b) => pub.publish(b)));
      const held: Delivery[] = [];
      const c = q.consumer(3);
      await c.start(async (d) => {
        held.push(d);
      });
      await eventually(() => held.length >= 3, 5000, 'three deliveries');
      await sleep(QUIET_MS);
      expect(held).toHaveLength(3);
      await held[0]!.ack();
      await eventually(() => held.length >= 4, 5000, 'a fourth delivery');
      await sleep(QUIET_MS);
      expect(held).toHaveLength(4);
      expect(new Set(held.map((d) => decodeBatch(d.body).id)).size).toBe(4);
    });

    it('requeue → redelivered with deliveryCount + 1 and the same body', async () => {
      const q = await open();
      const [batch] = corpusBatches(50, 1);
      await q.publisher().publish(batch!);
      const seen: Array<{ count: number; redelivered: boolean; id: string }> = [];
      const c = q.consumer(1);
      await c.start(async (d) => {
        seen.push({ count: d.deliveryCount, redelivered: d.redelivered, id: decodeBatch(d.body).id });
        if (seen.length === 1) await d.requeue();
        else await d.ack();
      });
      await eventually(() => seen.length >= 2, 5000, 'redelivery');
      await sleep(QUIET_MS);
      expect(seen).toEqual([
        { count: 0, redelivered: false, id: batch!.id },
        { count: 1, redelivered: true, id: batch!.id },
      ]);
    });

    it('a message requeued past the delivery limit ends in the DLQ with reason delivery_limit', async () => {
      const q = await open();
      const [batch] = corpusBatches(20, 1);
      await q.publisher().publish(batch!);
      const counts: number[] = [];
      const c = q.consumer(1);
      await c.start(async (d) => {
        counts.push(d.deliveryCount);
        await d.requeue();
      });
      const dead: Awaited<ReturnType<BatchQueueHarness['takeDeadLetters']>> = [];
      await eventually(async () => {
        dead.push(...(await q.takeDeadLetters()));
        return dead.length > 0;
      }, 15_000, 'dead letter');
      await sleep(QUIET_MS);
      expect(counts).toEqual(Array.from({ length: q.deliveryLimit + 1 }, (_, i) => i));
      expect(dead).toHaveLength(1);
      expect(dead[0]!.reason).toBe('delivery_limit');
      expect(dead[0]!.messageId).toBe(batch!.id);
      expect(decodeBatch(dead[0]!.body)).toEqual(batch);
    });

    it('deadLetter(reason) → the message is in the DLQ with that reason and not redelivered', async () => {
      const q = await open();
      const batches = corpusBatches(100, 2);
      const pub = q.publisher();
      for (const b of batches) await pub.publish(b);
      const seen: string[] = [];
      const c = q.consumer(2);
      await c.start(async (d) => {
        const b = decodeBatch(d.body);
        seen.push(b.id);
        if (b.seq === 0) await d.deadLetter('CCP_ERR_BATCH_FORMAT');
        else await d.ack();
      });
      const dead: Awaited<ReturnType<BatchQueueHarness['takeDeadLetters']>> = [];
      await eventually(async () => {
        dead.push(...(await q.takeDeadLetters()));
        return dead.length > 0 && seen.length >= 2;
      }, 10_000, 'dead letter');
      await sleep(QUIET_MS);
      expect(seen.sort()).toEqual(batches.map((b) => b.id).sort());
      expect(dead.map((m) => ({ id: m.messageId, reason: m.reason }))).toEqual([{ id: batches[0]!.id, reason: 'CCP_ERR_BATCH_FORMAT' }]);
      expect(decodeBatch(dead[0]!.body)).toEqual(batches[0]);
      expect((await q.depth()).ready).toBe(0);
    });

    it('closing a consumer with unacked deliveries hands them to the next consumer, counted as a delivery', async () => {
      const q = await open();
      const batches = corpusBatches(100, 3);
      const pub = q.publisher();
      await Promise.all(batches.map((b) => pub.publish(b)));
      const first: Delivery[] = [];
      const a = q.consumer(5);
      await a.start(async (d) => {
        first.push(d);
      });
      await eventually(() => first.length >= 3, 5000, 'first deliveries');
      await a.close();
      await expect(first[0]!.ack()).rejects.toMatchObject({ code: 'CCP_ERR_QUEUE_CHANNEL_CLOSED', retryable: true });
      const second: Array<{ id: string; count: number; redelivered: boolean }> = [];
      const b = q.consumer(5);
      await b.start(async (d) => {
        second.push({ id: decodeBatch(d.body).id, count: d.deliveryCount, redelivered: d.redelivered });
        await d.ack();
      });
      await eventually(() => second.length >= 3, 5000, 'redeliveries');
      await sleep(QUIET_MS);
      expect(second.map((s) => s.id).sort()).toEqual(batches.map((x) => x.id).sort());
      for (const s of second) expect(s).toMatchObject({ count: 1, redelivered: true });
    });

    it('stop() takes no new deliveries but an in-flight one still acks', async () => {
      const q = await open();
      const batches = corpusBatches(100, 2);
      const pub = q.publisher();
      for (const b of batches) await pub.publish(b);
      const held: Delivery[] = [];
      const c = q.consumer(1);
      await c.start(async (d) => {
        held.push(d);
      });
      await eventually(() => held.length >= 1, 5000, 'first delivery');
      await c.stop();
      await c.stop();
      await held[0]!.ack();
      await sleep(QUIET_MS);
      expect(held).toHaveLength(1);
      const next: Delivery[] = [];
      const c2 = q.consumer(1);
      await c2.start(async (d) => {
        next.push(d);
        await d.ack();
      });
      await eventually(() => next.length >= 1, 5000, 'the other batch');
      await sleep(QUIET_MS);
      expect(next).toHaveLength(1);
      expect(decodeBatch(next[0]!.body).id).not.toBe(decodeBatch(held[0]!.body).id);
      expect(next[0]!.deliveryCount).toBe(0);
    });

    it('settling twice throws; publish after close rejects, not retryable; close is idempotent', async () => {
      const q = await open();
      const [batch] = corpusBatches(10, 1);
      const pub = q.publisher();
      await pub.publish(batch!);
      await pub.close();
      await pub.close();
      await expect(pub.publish(batch!)).rejects.toMatchObject({ code: 'CCP_ERR_QUEUE_CLOSED', retryable: false });
      const got: Delivery[] = [];
      const c = q.consumer(1);
      await c.start(async (d) => {
        got.push(d);
      });
      await eventually(() => got.length >= 1, 5000, 'delivery');
      await got[0]!.ack();
      await expect(got[0]!.requeue()).rejects.toMatchObject({ code: 'CCP_ERR_QUEUE_ALREADY_SETTLED' });
      await c.close();
      await c.close();
    });
  });
}
