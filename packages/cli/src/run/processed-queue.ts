import { CcpError, batchKey, decodeMessage, type BatchConsumer, type BatchPublisher, type Delivery, type ObjectStore, type QueueMessage } from '@ccpipe/core';
import { DEFAULT_DELIVERY_LIMIT, MemoryBatchQueue } from '@ccpipe/adapters';

/** How a batch left the queue. */
export type Settlement = 'done' | 'dead-lettered';

/**
 * The in-process queue of `ccpipe run`: a {@link MemoryBatchQueue} whose publisher "confirms" a batch only once a
 * worker has settled it (acked after its completion marker, or dead-lettered), not when it is enqueued. A
 * dead-lettered batch is kept in the data store (`deadletters/…`, {@link deadLetterKey}) before its publish is
 * confirmed — the in-memory DLQ goes with the process — and {@link replay} publishes the kept ones again (the next
 * run does, first); without a store its publish fails instead (`CCP_ERR_RUN_BATCH_FAILED`).
 *
 * Why: the batcher advances its checkpoint past blocks whose batches are confirmed. With RabbitMQ a confirmed batch
 * is durable; an in-memory queue forgets everything on exit, so here a confirm must mean "processed". Then the
 * checkpoint is exactly "every batch before it has a marker", and a re-run with the same data directory resumes
 * there (batches re-published past it find their markers and are skipped). Nothing is persisted by the queue.
 * Settlements are matched to publishes by batch id (decoded from the body), so only batches published through
 * {@link publisher} are confirmed; a worker crash must be reported with {@link failAll} or publishes wait forever.
 */
export class ProcessedQueue {
  readonly queue: MemoryBatchQueue;
  private readonly waiting = new Map<string, { resolve: (s: Settlement) => void; reject: (err: unknown) => void }[]>();
  private readonly deliveryLimit: number;
  private readonly store: ObjectStore | undefined;
  private readonly inner: BatchPublisher;
  private failure: unknown = null;
  readonly counts = { done: 0, deadLettered: 0 };

  constructor(opts: { deliveryLimit?: number; store?: ObjectStore } = {}) {
    this.deliveryLimit = opts.deliveryLimit ?? DEFAULT_DELIVERY_LIMIT;
    this.store = opts.store;
    this.queue = new MemoryBatchQueue({ deliveryLimit: this.deliveryLimit });
    this.inner = this.queue.publisher();
  }

  /**
   * Publishes every batch kept under `deadletters/` again, through the queue (a worker must be consuming), and
   * deletes each one a worker completes; one dead-lettered again stays. Returns how many were tried and completed.
   */
  async replay(signal?: AbortSignal): Promise<{ tried: number; done: number; unreadable: number }> {
    if (this.store === undefined) return { tried: 0, done: 0, unreadable: 0 };
    const store = this.store;
    const keys = await keptDeadLetters(store);
    let done = 0;
    let unreadable = 0;
    await Promise.all(
      keys.map(async (key) => {
        const body = await store.get(key);
        if (body === null) return;
        let batch: QueueMessage;
        try {
          batch = decodeMessage(body);
        } catch {
          // not a batch (damaged, or put there by hand): set aside, so that it does not stop every later run
          await store.put(`${key.slice(0, -'.json'.length)}.bad`, body);
          await store.delete(key);
          unreadable++;
          return;
        }
        if ((await this.publishSettled(batch, signal)) === 'done') {
          await store.delete(key);
          done++;
        }
      }),
    );
    return { tried: keys.length, done, unreadable };
  }

  /** Publishes `batch` and resolves with how a worker settled it. */
  private async publishSettled(batch: QueueMessage, signal?: AbortSignal): Promise<Settlement> {
    if (this.failure !== null) throw this.failure;
    let onAbort: (() => void) | null = null;
    const settled = new Promise<Settlement>((resolve, reject) => {
      const list = this.waiting.get(batch.id) ?? [];
      list.push({ resolve, reject });
      this.waiting.set(batch.id, list);
      if (signal) signal.addEventListener('abort', (onAbort = () => reject(signal.reason)), { once: true });
    });
    settled.catch(() => undefined);
    try {
      await this.inner.publish(batch, signal);
      return await settled;
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  }


  /** A publisher whose `publish` resolves when the batch is settled; rejects after {@link failAll}. */
  publisher(): BatchPublisher {
    return {
      publish: async (batch, signal) => {
        // without a store to keep it in, a dead-lettered batch would be lost with this process: its publish fails, so
        // the batcher's checkpoint stops before its block, the run fails, and a rerun resumes there
        if ((await this.publishSettled(batch, signal)) === 'dead-lettered' && this.store === undefined) {
          throw new CcpError('CCP_ERR_RUN_BATCH_FAILED', 'a batch could not be processed and was dead-lettered; the run stops before its block (a rerun resumes there)', {
            retryable: false, detail: { batchId: batch.id },
          });
        }
      },
      close: async () => undefined,
    };
  }

  /** A consumer of the queue that reports each settlement back to the publishers. */
  consumer(opts: { prefetch: number }): BatchConsumer {
    const inner = this.queue.consumer(opts);
    return {
      start: (handler) => inner.start((d) => handler(this.tracked(d))),
      stop: () => inner.stop(),
      close: () => inner.close(),
    };
  }

  /** Rejects every waiting and future publish (a worker crashed: the run cannot finish). Idempotent. */
  failAll(err: unknown): void {
    this.failure ??= err;
    for (const list of this.waiting.values()) for (const w of list) w.reject(this.failure);
    this.waiting.clear();
  }

  private async settle(body: Uint8Array, how: Settlement): Promise<void> {
    if (how === 'done') this.counts.done++;
    else this.counts.deadLettered++;
    let batch: QueueMessage;
    try {
      batch = decodeMessage(body);
    } catch {
      return; // not a batch: nobody published it through us
    }
    if (how === 'dead-lettered' && this.store !== undefined) {
      // its publishes stay waiting (failAll still reaches them) until the batch is kept
      try {
        await this.store.put(deadLetterKey(batch.datasetId, batch.id), body);
      } catch (err) {
        const list = this.waiting.get(batch.id);
        this.waiting.delete(batch.id);
        for (const w of list ?? []) w.reject(err); // not kept: the run must not go past it
        return;
      }
    }
    const list = this.waiting.get(batch.id);
    this.waiting.delete(batch.id);
    for (const w of list ?? []) w.resolve(how);
  }

  private tracked(d: Delivery): Delivery {
    return {
      body: d.body,
      deliveryCount: d.deliveryCount,
      redelivered: d.redelivered,
      ack: async () => {
        await d.ack();
        await this.settle(d.body, 'done');
      },
      deadLetter: async (reason) => {
        await d.deadLetter(reason);
        await this.settle(d.body, 'dead-lettered');
      },
      requeue: async () => {
        await d.requeue();
        // The queue dead-letters a message returned more often than its delivery limit.
        if (d.deliveryCount + 1 > this.deliveryLimit) await this.settle(d.body, 'dead-lettered');
      },
    };
  }
}

/** Where `ccpipe run` keeps the batches its in-process queue dead-lettered. */
const DEAD_LETTERS = 'deadletters/';

/** Keys of the batches kept under `deadletters/` (not those set aside as `.bad`). */
export async function keptDeadLetters(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of store.list(DEAD_LETTERS)) if (o.key.endsWith('.json')) keys.push(o.key);
  return keys;
}

/** The key of a kept dead-lettered batch. */
export function deadLetterKey(datasetId: number, id: string): string {
  return `${DEAD_LETTERS}dataset_id=${datasetId}/${batchKey(id)}.json`;
}
