import type { ConsumeMessage } from 'amqplib';
import type { BatchConsumer, Delivery, QueueDepth } from '@ccpipe/core';
import { closeWithin, reconnectDelayMs, type AmqpConnection, type ReconnectOptions } from './amqp-connection';
import { ConfirmTracker } from './confirm-tracker';
import { deadLetterHeaders } from './dead-letter';
import { QueueError } from './queue-error';
import type { QueueTopologyNames } from './topology';

/** Things an owner may want to log or count; never carries message bodies. */
export type AmqpConsumerEvent =
  | { type: 'subscribed'; consumerTag: string }
  | { type: 'subscription-lost'; cause: 'channel-closed' | 'cancelled-by-broker' }
  | { type: 'resubscribe-failed'; attempt: number; delayMs: number; error: unknown }
  | { type: 'gave-up'; error: unknown }
  | { type: 'handler-failed'; error: unknown }
  | { type: 'dead-letter-fallback'; reason: string; error: unknown };

export interface AmqpBatchConsumerOptions {
  connection: AmqpConnection;
  names: QueueTopologyNames;
  /** Per-consumer prefetch (never global: a global prefetch on a quorum queue closes the connection). */
  prefetch: number;
  /** Longest wait for the confirm of a dead-letter copy. Default 30 s. */
  confirmTimeoutMs?: number;
  /** Backoff between resubscribe attempts after the channel (not the connection) failed. */
  resubscribe?: Partial<ReconnectOptions>;
  onEvent?: (event: AmqpConsumerEvent) => void;
}

interface Session {
  readonly tracker: ConfirmTracker;
  consumerTag: string | null;
  /** Aborted when the channel closes: its deliveries can no longer be settled (Delivery.signal). */
  readonly lost: AbortController;
}

/**
 * Consumes the work queue with manual acks on one confirm channel. After a channel or connection loss it resubscribes
 * on a new channel (the broker redelivers what was unacked); deliveries from the old channel can no longer be settled:
 * their `signal` is aborted (so their handlers stop instead of running beside the redelivery and past the prefetch)
 * and their settle calls reject with retryable CCP_ERR_QUEUE_CHANNEL_CLOSED. Does not own the connection.
 *
 * `deadLetter(reason)` publishes a copy carrying the reason to the dead-letter exchange, waits for its confirm, then
 * acks the original. A crash between the two leaves the original unacked: it is redelivered and dead-lettered again,
 * so the DLQ may hold a duplicate (same messageId) but never loses one. If the copy cannot be confirmed, it falls
 * back to a plain reject, which the broker dead-letters with reason `rejected`.
 */
export class AmqpBatchConsumer implements BatchConsumer {
  private readonly conn: AmqpConnection;
  private readonly names: QueueTopologyNames;
  private readonly prefetch: number;
  private readonly confirmTimeoutMs: number;
  private readonly resubscribeOpts: ReconnectOptions;
  private readonly onEvent: (event: AmqpConsumerEvent) => void;
  private handler: ((delivery: Delivery) => Promise<void>) | null = null;
  private session: Session | null = null;
  private wanted = false;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private stopping: Promise<void> | null = null;
  private closing: Promise<void> | null = null;

  constructor(options: AmqpBatchConsumerOptions) {
    if (!Number.isInteger(options.prefetch) || options.prefetch < 1) throw new RangeError('prefetch must be an integer ≥ 1');
    this.conn = options.connection;
    this.names = options.names;
    this.prefetch = options.prefetch;
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 30_000;
    this.resubscribeOpts = { initialDelayMs: 250, maxDelayMs: 10_000, factor: 2, jitter: 0.2, maxAttempts: Infinity, ...options.resubscribe };
    this.onEvent = options.onEvent ?? (() => {});
  }

  /**
   * Subscribes and resolves once consuming has begun. Rejects (QueueError) if the first subscription fails, e.g.
   * the queue does not exist; throws if called twice or after close(). A handler that rejects without settling its
   * delivery has it requeued.
   */
  async start(handler: (delivery: Delivery) => Promise<void>): Promise<void> {
    if (this.closed) throw new QueueError('CCP_ERR_QUEUE_CLOSED', 'consumer closed');
    if (this.handler) throw new Error('consumer already started');
    this.handler = handler;
    this.wanted = true;
    try {
      await this.subscribe();
    } catch (err) {
      this.wanted = false;
      this.handler = null;
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      const s = this.session;
      this.session = null;
      if (s?.tracker.open) await closeWithin(s.tracker.channel.close());
      throw err;
    }
  }

  /** Cancels the subscription; in-flight deliveries can still be settled on the same channel. Idempotent. */
  stop(): Promise<void> {
    this.wanted = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.stopping ??= (async () => {
      const s = this.session;
      if (s?.consumerTag && s.tracker.open) await closeWithin(s.tracker.channel.cancel(s.consumerTag));
    })();
    return this.stopping;
  }

  /** Stops, then closes the channel: unacked deliveries return to the queue. Idempotent. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      await this.stop();
      const s = this.session;
      this.session = null;
      if (s?.tracker.open) await closeWithin(s.tracker.channel.close());
    })();
    return this.closing;
  }

  /** Depth of the work queue and the DLQ (see {@link amqpQueueDepth}). */
  queueDepth(): Promise<QueueDepth> {
    return amqpQueueDepth(this.conn, this.names);
  }

  private async subscribe(): Promise<void> {
    const tracker = new ConfirmTracker(await this.conn.createConfirmChannel());
    const session: Session = { tracker, consumerTag: null, lost: new AbortController() };
    this.session = session;
    tracker.channel.on('close', () => {
      session.lost.abort(new QueueError('CCP_ERR_QUEUE_CHANNEL_CLOSED', 'channel closed; the broker will redeliver'));
      this.onSessionLost(session, 'channel-closed');
    });
    if (!this.wanted) {
      await closeWithin(tracker.channel.close());
      return;
    }
    await tracker.channel.prefetch(this.prefetch, false);
    const { consumerTag } = await tracker.channel.consume(this.names.queue, (msg) => this.onMessage(session, msg), { noAck: false });
    session.consumerTag = consumerTag;
    this.attempt = 0;
    this.onEvent({ type: 'subscribed', consumerTag });
    // stop() may have run while we were subscribing and found no consumer tag to cancel
    if (!this.wanted) await tracker.channel.cancel(consumerTag).catch(() => {});
  }

  private onMessage(session: Session, msg: ConsumeMessage | null): void {
    if (msg === null) {
      // The broker cancelled us (queue deleted or a quorum leader change): a new channel resubscribes.
      this.onEvent({ type: 'subscription-lost', cause: 'cancelled-by-broker' });
      session.tracker.channel.close().catch(() => {});
      return;
    }
    const delivery = new AmqpDelivery(session.tracker, msg, this.names, this.confirmTimeoutMs, this.onEvent, session.lost.signal);
    const handler = this.handler;
    if (!handler) return;
    // async wrapper: a handler that throws synchronously must not throw into amqplib's frame loop
    void (async () => handler(delivery))().catch((error: unknown) => {
      this.onEvent({ type: 'handler-failed', error });
      if (!delivery.settled) delivery.requeue().catch(() => {});
    });
  }

  private onSessionLost(session: Session, cause: 'channel-closed'): void {
    if (this.session !== session) return;
    this.session = null;
    // A channel that dies while subscribing is retried by scheduleResubscribe's catch, with backoff.
    if (!this.wanted || this.closed || session.consumerTag === null) return;
    this.onEvent({ type: 'subscription-lost', cause });
    this.scheduleResubscribe(0);
  }

  private scheduleResubscribe(delayMs: number): void {
    if (this.timer || !this.wanted) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.wanted) return;
      this.subscribe().catch((error: unknown) => {
        if (error instanceof QueueError && (error.code === 'CCP_ERR_QUEUE_CLOSED' || error.code === 'CCP_ERR_QUEUE_UNAVAILABLE' || error.code === 'CCP_ERR_QUEUE_REFUSED')) {
          this.onEvent({ type: 'gave-up', error });
          return;
        }
        this.attempt += 1;
        if (this.attempt > this.resubscribeOpts.maxAttempts) {
          this.onEvent({ type: 'gave-up', error });
          return;
        }
        const next = reconnectDelayMs(this.resubscribeOpts, this.attempt);
        this.onEvent({ type: 'resubscribe-failed', attempt: this.attempt, delayMs: next, error });
        const s = this.session;
        this.session = null;
        if (s?.tracker.open) s.tracker.channel.close().catch(() => {});
        this.scheduleResubscribe(next);
      });
    }, delayMs);
  }
}

/** One delivery from AmqpBatchConsumer. */
class AmqpDelivery implements Delivery {
  readonly body: Uint8Array;
  readonly deliveryCount: number;
  readonly redelivered: boolean;
  settled = false;

  constructor(
    private readonly tracker: ConfirmTracker,
    private readonly msg: ConsumeMessage,
    private readonly names: QueueTopologyNames,
    private readonly confirmTimeoutMs: number,
    private readonly onEvent: (event: AmqpConsumerEvent) => void,
    readonly signal: AbortSignal,
  ) {
    this.body = msg.content;
    const count: unknown = msg.properties.headers?.['x-delivery-count'];
    this.deliveryCount = typeof count === 'number' && Number.isFinite(count) ? count : 0;
    this.redelivered = msg.fields.redelivered;
  }

  async ack(): Promise<void> {
    this.settle(() => this.tracker.channel.ack(this.msg));
  }

  async requeue(): Promise<void> {
    this.settle(() => this.tracker.channel.nack(this.msg, false, true));
  }

  async deadLetter(reason: string): Promise<void> {
    this.claim();
    if (!this.tracker.open) throw new QueueError('CCP_ERR_QUEUE_CHANNEL_CLOSED', 'channel closed; the broker will redeliver');
    const props = this.msg.properties;
    const messageId = typeof props.messageId === 'string' && props.messageId !== '' ? props.messageId : `dlq-${this.msg.fields.deliveryTag}`;
    try {
      await this.tracker.publish(
        this.names.deadLetterExchange,
        '',
        this.msg.content,
        {
          persistent: true,
          deliveryMode: 2,
          mandatory: true,
          messageId,
          contentType: props.contentType as string | undefined,
          headers: deadLetterHeaders(props.headers, reason, this.deliveryCount, this.names.queue),
        },
        AbortSignal.timeout(this.confirmTimeoutMs),
      );
    } catch (error) {
      this.onEvent({ type: 'dead-letter-fallback', reason, error });
      this.send(() => this.tracker.channel.nack(this.msg, false, false));
      return;
    }
    this.send(() => this.tracker.channel.ack(this.msg));
  }

  private settle(op: () => void): void {
    this.claim();
    this.send(op);
  }

  private claim(): void {
    if (this.settled) throw new QueueError('CCP_ERR_QUEUE_ALREADY_SETTLED', 'delivery already settled');
    this.settled = true;
  }

  private send(op: () => void): void {
    if (!this.tracker.open) throw new QueueError('CCP_ERR_QUEUE_CHANNEL_CLOSED', 'channel closed; the broker will redeliver');
    try {
      op();
    } catch (cause) {
      throw new QueueError('CCP_ERR_QUEUE_CHANNEL_CLOSED', 'channel closed; the broker will redeliver', { cause });
    }
  }
}

/**
 * Depth of the work queue and its DLQ via passive declares on a throwaway channel. `ready` is the broker's
 * message count (quorum queues report ready messages; unacked ones are not included and are unknown here, so
 * `unacked` is null — the management API would have it). Rejects with the broker's error if a queue is missing.
 */
export async function amqpQueueDepth(conn: AmqpConnection, names: QueueTopologyNames): Promise<QueueDepth> {
  const ch = await conn.createChannel();
  try {
    const q = await ch.checkQueue(names.queue);
    const dlq = await ch.checkQueue(names.deadLetterQueue);
    return { ready: q.messageCount, unacked: null, deadLettered: dlq.messageCount };
  } finally {
    await closeWithin(ch.close());
  }
}
