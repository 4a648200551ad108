import { CcpError, decodeBatch, type BatchConsumer, type BatchPublisher, type Delivery } from '@ccpipe/core';
import { DEFAULT_DELIVERY_LIMIT, MemoryBatchQueue } from '@ccpipe/adapters';

/** How a batch left the queue. */
export type Settlement = 'done' | 'dead-lettered';

/**
 * The in-process queue of `ccpipe run`: a {@link MemoryBatchQueue} whose publisher "confirms" a batch only once a
 * worker has completed it (acked after its completion marker), not when it is enqueued; a batch dead-lettered
 * instead fails its publish (`CCP_ERR_RUN_BATCH_FAILED`).
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
  private failure: unknown = null;
  readonly counts = { done: 0, deadLettered: 0 };

  constructor(opts: { deliveryLimit?: number } = {}) {
    this.deliveryLimit = opts.deliveryLimit ?? DEFAULT_DELIVERY_LIMIT;
    this.queue = new MemoryBatchQueue({ deliveryLimit: this.deliveryLimit });
  }

  /** A publisher whose `publish` resolves when the batch is settled; rejects after {@link failAll}. */
  publisher(): BatchPublisher {
    const inner = this.queue.publisher();
    return {
      publish: async (batch, signal) => {
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
          await inner.publish(batch, signal);
          // A dead-lettered batch is lost with this process (the in-memory DLQ is not kept): its publish fails, so the
          // batcher's checkpoint stops before its block, the run fails, and a rerun resumes there.
          if ((await settled) === 'dead-lettered') {
            throw new CcpError('CCP_ERR_RUN_BATCH_FAILED', 'a batch could not be processed and was dead-lettered; the run stops before its block (a rerun resumes there)', {
              retryable: false, detail: { batchId: batch.id },
            });
          }
        } finally {
          if (onAbort) signal?.removeEventListener('abort', onAbort);
        }
      },
      close: () => inner.close(),
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

  private settle(body: Uint8Array, how: Settlement): void {
    if (how === 'done') this.counts.done++;
    else this.counts.deadLettered++;
    let id: string;
    try {
      id = decodeBatch(body).id;
    } catch {
      return; // not a batch: nobody published it through us
    }
    const list = this.waiting.get(id);
    this.waiting.delete(id);
    for (const w of list ?? []) w.resolve(how);
  }

  private tracked(d: Delivery): Delivery {
    return {
      body: d.body,
      deliveryCount: d.deliveryCount,
      redelivered: d.redelivered,
      ack: async () => {
        await d.ack();
        this.settle(d.body, 'done');
      },
      deadLetter: async (reason) => {
        await d.deadLetter(reason);
        this.settle(d.body, 'dead-lettered');
      },
      requeue: async () => {
        await d.requeue();
        // The queue dead-letters a message returned more often than its delivery limit.
        if (d.deliveryCount + 1 > this.deliveryLimit) this.settle(d.body, 'dead-lettered');
      },
    };
  }
}
