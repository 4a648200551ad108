import { encodeMessage, type BatchConsumer, type BatchPublisher, type Delivery, type QueueDepth, type QueueMessage } from '@ccpipe/core';
import { DELIVERY_LIMIT_REASON } from './dead-letter';
import { QueueError } from './queue-error';
import { DEFAULT_DELIVERY_LIMIT } from './topology';

export interface MemoryBatchQueueOptions {
  /** As the quorum queue's `x-delivery-limit`: a message returned when already delivered limit+1 times is dead-lettered. */
  deliveryLimit?: number;
}

/** A message in the in-memory dead-letter queue. */
export interface MemoryDeadLetter {
  readonly messageId: string;
  readonly body: Uint8Array;
  /** The `deadLetter(reason)` argument, or `delivery_limit` (the broker's word) when the limit sent it here. */
  readonly reason: string;
  /** Deliveries before it was dead-lettered. */
  readonly deliveryCount: number;
}

interface Message {
  readonly messageId: string;
  readonly body: Buffer;
  deliveryCount: number;
  redelivered: boolean;
}

/**
 * A work queue and its DLQ in one process, for unit tests and the embedded `ccpipe run` mode. It keeps the
 * semantics of the RabbitMQ quorum queue the services rely on: per-consumer prefetch, manual settlement, a requeue
 * or a closed consumer's unacked delivery counts toward the delivery limit (as RabbitMQ 3.10 counts them),
 * the limit dead-letters with reason `delivery_limit`. Nothing is persisted. Requeued messages go to the front.
 */
export class MemoryBatchQueue {
  private readonly deliveryLimit: number;
  private readonly ready: Message[] = [];
  private readonly dlq: MemoryDeadLetter[] = [];
  private readonly consumers: MemoryConsumer[] = [];
  private next = 0;
  private scheduled = false;

  constructor(options: MemoryBatchQueueOptions = {}) {
    this.deliveryLimit = options.deliveryLimit ?? DEFAULT_DELIVERY_LIMIT;
  }

  /** A publisher; publish resolves once the message is queued. close() is idempotent. */
  publisher(): BatchPublisher {
    let closed = false;
    return {
      publish: async (batch: QueueMessage, signal?: AbortSignal) => {
        if (closed) throw new QueueError('CCP_ERR_QUEUE_CLOSED', 'publisher closed');
        if (signal?.aborted) throw signal.reason;
        this.ready.push({ messageId: batch.id, body: encodeMessage(batch), deliveryCount: 0, redelivered: false });
        this.schedule();
      },
      close: async () => {
        closed = true;
      },
    };
  }

  /** A consumer taking at most `prefetch` unsettled deliveries. */
  consumer(options: { prefetch: number }): BatchConsumer {
    if (!Number.isInteger(options.prefetch) || options.prefetch < 1) throw new RangeError('prefetch must be an integer ≥ 1');
    const c = new MemoryConsumer(this, options.prefetch);
    this.consumers.push(c);
    return c;
  }

  /** Ready, unacked (across consumers) and dead-lettered counts. */
  async queueDepth(): Promise<QueueDepth> {
    const unacked = this.consumers.reduce((n, c) => n + c.unacked.size, 0);
    return { ready: this.ready.length, unacked, deadLettered: this.dlq.length };
  }

  /** The DLQ, oldest first. */
  deadLetters(): readonly MemoryDeadLetter[] {
    return [...this.dlq];
  }

  /** Removes and returns the DLQ's messages, oldest first (what a DLQ consumer would do). */
  takeDeadLetters(): MemoryDeadLetter[] {
    return this.dlq.splice(0, this.dlq.length);
  }

  /** @internal */
  settle(msg: Message, action: 'ack' | 'requeue' | { deadLetter: string }): void {
    if (action === 'ack') return;
    if (action === 'requeue') {
      msg.deliveryCount += 1;
      msg.redelivered = true;
      if (msg.deliveryCount > this.deliveryLimit) this.deadLetter(msg, DELIVERY_LIMIT_REASON);
      else this.ready.unshift(msg);
      this.schedule();
      return;
    }
    this.deadLetter(msg, action.deadLetter);
  }

  /** @internal */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // Deliver asynchronously, as a broker would: never inside publish() or a settle call.
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private deadLetter(msg: Message, reason: string): void {
    this.dlq.push({ messageId: msg.messageId, body: msg.body, reason, deliveryCount: msg.deliveryCount });
  }

  private dispatch(): void {
    while (this.ready.length > 0) {
      const n = this.consumers.length;
      let target: MemoryConsumer | undefined;
      for (let i = 0; i < n; i++) {
        const c = this.consumers[(this.next + i) % n];
        if (c?.hasCapacity()) {
          target = c;
          this.next = (this.next + i + 1) % n;
          break;
        }
      }
      if (!target) return;
      const msg = this.ready.shift();
      if (msg) target.deliver(msg);
    }
  }
}

class MemoryConsumer implements BatchConsumer {
  readonly unacked = new Set<Message>();
  private handler: ((delivery: Delivery) => Promise<void>) | null = null;
  private active = false;
  private closed = false;

  constructor(
    private readonly queue: MemoryBatchQueue,
    private readonly prefetch: number,
  ) {}

  hasCapacity(): boolean {
    return this.active && this.unacked.size < this.prefetch;
  }

  async start(handler: (delivery: Delivery) => Promise<void>): Promise<void> {
    if (this.closed) throw new QueueError('CCP_ERR_QUEUE_CLOSED', 'consumer closed');
    if (this.handler) throw new Error('consumer already started');
    this.handler = handler;
    this.active = true;
    this.queue.schedule();
  }

  async stop(): Promise<void> {
    this.active = false;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.active = false;
    this.closed = true;
    // Like a closed channel: everything unacked goes back, and the return counts as a delivery attempt.
    const returned = [...this.unacked];
    this.unacked.clear();
    for (const msg of returned.reverse()) this.queue.settle(msg, 'requeue');
  }

  deliver(msg: Message): void {
    this.unacked.add(msg);
    const handler = this.handler;
    const delivery = new MemoryDelivery(msg, (action) => {
      if (this.closed || !this.unacked.has(msg)) {
        throw new QueueError('CCP_ERR_QUEUE_CHANNEL_CLOSED', 'consumer closed; the message was returned to the queue');
      }
      this.unacked.delete(msg);
      this.queue.settle(msg, action);
      this.queue.schedule();
    });
    if (!handler) return;
    void (async () => handler(delivery))().catch(() => {
      if (!delivery.settled) delivery.requeue().catch(() => {});
    });
  }
}

class MemoryDelivery implements Delivery {
  readonly body: Uint8Array;
  readonly deliveryCount: number;
  readonly redelivered: boolean;
  settled = false;

  constructor(
    msg: Message,
    private readonly onSettle: (action: 'ack' | 'requeue' | { deadLetter: string }) => void,
  ) {
    this.body = msg.body;
    this.deliveryCount = msg.deliveryCount;
    this.redelivered = msg.redelivered;
  }

  async ack(): Promise<void> {
    this.settle('ack');
  }

  async requeue(): Promise<void> {
    this.settle('requeue');
  }

  async deadLetter(reason: string): Promise<void> {
    this.settle({ deadLetter: reason });
  }

  private settle(action: 'ack' | 'requeue' | { deadLetter: string }): void {
    if (this.settled) throw new QueueError('CCP_ERR_QUEUE_ALREADY_SETTLED', 'delivery already settled');
    this.settled = true;
    this.onSettle(action);
  }
}
