import { encodeMessage, type BatchPublisher } from '@ccpipe/core';
import { closeWithin, type AmqpConnection } from './amqp-connection';
import { ConfirmTracker, raceAbort } from './confirm-tracker';
import { QueueError } from './queue-error';
import type { QueueTopologyNames } from './topology';

export interface AmqpBatchPublisherOptions {
  connection: AmqpConnection;
  names: QueueTopologyNames;
  /**
   * Longest wait from publish() to the broker's confirm, waiting for a connection and for `drain` included.
   * Under a disk alarm RabbitMQ blocks publishers and confirms never come, so this must be finite. Default 30 s.
   */
  confirmTimeoutMs?: number;
}

/**
 * Publishes batches to the work queue on one confirm channel, many in flight at once.
 * Messages are persistent (deliveryMode 2), `application/json`, `messageId` = batch id, `mandatory` (an unroutable
 * message comes back as `return` and the publish rejects instead of vanishing). After a connection or channel loss
 * the next publish opens a new channel. Does not own the connection.
 */
export class AmqpBatchPublisher implements BatchPublisher {
  private readonly conn: AmqpConnection;
  private readonly names: QueueTopologyNames;
  private readonly confirmTimeoutMs: number;
  private tracker: ConfirmTracker | null = null;
  private opening: Promise<ConfirmTracker> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private closed = false;
  private closing: Promise<void> | null = null;

  constructor(options: AmqpBatchPublisherOptions) {
    this.conn = options.connection;
    this.names = options.names;
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 30_000;
  }

  /** Publishes not yet confirmed or failed. */
  get pendingCount(): number {
    return this.inFlight.size;
  }

  /**
   * Resolves once the broker confirmed the batch. Rejects with a retryable QueueError: CCP_ERR_QUEUE_RETURNED
   * (unroutable), CCP_ERR_QUEUE_CONFIRM_TIMEOUT (sent, no confirm in time), CCP_ERR_QUEUE_UNAVAILABLE (no channel
   * in time), CCP_ERR_QUEUE_CHANNEL_CLOSED (lost before the confirm), CCP_ERR_QUEUE_NACKED; with the abort reason
   * when `signal` aborts (the message may still arrive); with non-retryable CCP_ERR_QUEUE_CLOSED after close().
   */
  publish(batch: { readonly id: string }, signal?: AbortSignal): Promise<void> {
    if (this.closed) return Promise.reject(new QueueError('CCP_ERR_QUEUE_CLOSED', 'publisher closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    const p = this.publishOne(batch, signal);
    const tracked = p.then(
      () => {},
      () => {},
    );
    this.inFlight.add(tracked);
    void tracked.then(() => this.inFlight.delete(tracked));
    return p;
  }

  /** Waits for outstanding confirms (each bounded by the confirm timeout), then closes the channel. Idempotent. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= (async () => {
      await Promise.all([...this.inFlight]);
      const tracker = this.tracker;
      this.tracker = null;
      if (tracker?.open) await closeWithin(tracker.channel.close());
    })();
    return this.closing;
  }

  private async publishOne(batch: { readonly id: string }, signal: AbortSignal | undefined): Promise<void> {
    const content = encodeMessage(batch);
    const ctl = new AbortController();
    let sent = false;
    const timer = setTimeout(() => {
      const detail = { timeoutMs: this.confirmTimeoutMs, blocked: this.conn.isBlocked };
      ctl.abort(
        sent
          ? new QueueError('CCP_ERR_QUEUE_CONFIRM_TIMEOUT', 'no publisher confirm in time', { detail })
          : new QueueError('CCP_ERR_QUEUE_UNAVAILABLE', 'could not publish in time', { detail }),
      );
    }, this.confirmTimeoutMs);
    const onAbort = (): void => ctl.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let tracker = await this.channel(ctl.signal);
      while (!tracker.writable) {
        await tracker.waitForDrain(ctl.signal);
        tracker = await this.channel(ctl.signal);
      }
      sent = true;
      await tracker.publish(
        '',
        this.names.queue,
        content,
        { persistent: true, deliveryMode: 2, contentType: 'application/json', messageId: batch.id, mandatory: true },
        ctl.signal,
      );
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private async channel(signal: AbortSignal): Promise<ConfirmTracker> {
    if (this.tracker?.open) return this.tracker;
    // Shared by every caller, so it must not die with the first caller's signal; each caller races its own.
    this.opening ??= this.openChannel().finally(() => {
      this.opening = null;
    });
    return await raceAbort(this.opening, signal);
  }

  private async openChannel(): Promise<ConfirmTracker> {
    let tracker: ConfirmTracker;
    try {
      tracker = new ConfirmTracker(await this.conn.createConfirmChannel());
    } catch (cause) {
      if (cause instanceof QueueError) throw cause;
      throw new QueueError('CCP_ERR_QUEUE_UNAVAILABLE', 'could not open a channel', { cause });
    }
    if (this.closed && this.inFlight.size === 0) {
      await closeWithin(tracker.channel.close());
      throw new QueueError('CCP_ERR_QUEUE_CLOSED', 'publisher closed');
    }
    this.tracker = tracker;
    return tracker;
  }
}
