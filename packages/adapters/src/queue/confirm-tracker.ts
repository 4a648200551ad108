import type { ConfirmChannel, Message, Options } from 'amqplib';
import { QueueError } from './queue-error';

interface Pending {
  readonly messageId: string;
  returned: QueueError | null;
  settle: (err: QueueError | null) => void;
}

/**
 * Publishes on one confirm channel and turns each publish into a promise that settles on the broker's confirm.
 * Handles what a bare ConfirmChannel does not: a `return` (mandatory, unroutable) rejects its publish — RabbitMQ
 * still confirms unroutable messages, and sends the return before the confirm — and a confirm that never comes
 * (disk alarm) rejects at the caller's signal. Tracks `publish() === false` as {@link writable} until `drain`.
 * Every publish must carry a `messageId`; returns are matched to publishes by id, first unreturned first.
 */
export class ConfirmTracker {
  readonly channel: ConfirmChannel;
  private isOpen = true;
  private canWrite = true;
  private drainWaiters: Array<() => void> = [];
  private readonly byMessageId = new Map<string, Pending[]>();

  constructor(channel: ConfirmChannel) {
    this.channel = channel;
    channel.on('return', (msg: Message) => {
      const id = String(msg.properties.messageId ?? '');
      const pending = this.byMessageId.get(id)?.find((p) => p.returned === null);
      if (!pending) return;
      const fields = msg.fields as unknown as { replyCode?: number; replyText?: string; exchange: string };
      pending.returned = new QueueError('CCP_ERR_QUEUE_RETURNED', 'broker returned the message as unroutable', {
        detail: { replyCode: fields.replyCode, replyText: fields.replyText, exchange: fields.exchange },
      });
    });
    channel.on('drain', () => {
      this.canWrite = true;
      this.wakeAll();
    });
    channel.on('close', () => {
      // amqplib has already failed every unconfirmed callback; wake publishers parked on drain
      this.isOpen = false;
      this.canWrite = true;
      this.wakeAll();
    });
  }

  get open(): boolean {
    return this.isOpen;
  }

  /** False after a publish filled the channel's buffer, until `drain`. */
  get writable(): boolean {
    return this.canWrite;
  }

  /** Resolves at the next `drain` or `close`; rejects with the abort reason. */
  waitForDrain(signal: AbortSignal): Promise<void> {
    return raceAbort(new Promise<void>((resolve) => this.drainWaiters.push(resolve)), signal);
  }

  /**
   * Publishes and resolves on the broker's ack. Rejects with QueueError CCP_ERR_QUEUE_RETURNED, _NACKED or
   * _CHANNEL_CLOSED, or with `signal.reason` when `signal` aborts first (the message may still be confirmed later).
   */
  publish(exchange: string, routingKey: string, content: Buffer, options: Options.Publish & { messageId: string }, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const pending: Pending = {
        messageId: options.messageId,
        returned: null,
        settle: (err) => {
          this.remove(pending);
          signal.removeEventListener('abort', onAbort);
          if (err) reject(err);
          else resolve();
        },
      };
      const onAbort = (): void => pending.settle(signal.reason as QueueError);
      signal.addEventListener('abort', onAbort, { once: true });
      const list = this.byMessageId.get(pending.messageId);
      if (list) list.push(pending);
      else this.byMessageId.set(pending.messageId, [pending]);
      try {
        const ok = this.channel.publish(exchange, routingKey, content, options, (err: unknown) => {
          if (pending.returned) pending.settle(pending.returned);
          else if (err == null) pending.settle(null);
          else pending.settle(confirmError(err));
        });
        if (!ok) this.canWrite = false;
      } catch (cause) {
        // amqplib throws synchronously once the channel is closing or closed
        pending.settle(new QueueError('CCP_ERR_QUEUE_CHANNEL_CLOSED', 'channel closed before publish', { cause }));
      }
    });
  }

  private remove(pending: Pending): void {
    const list = this.byMessageId.get(pending.messageId);
    if (!list) return;
    const i = list.indexOf(pending);
    if (i >= 0) list.splice(i, 1);
    if (list.length === 0) this.byMessageId.delete(pending.messageId);
  }

  private wakeAll(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}

function confirmError(err: unknown): QueueError {
  const message = err instanceof Error ? err.message : String(err);
  if (message === 'message nacked') return new QueueError('CCP_ERR_QUEUE_NACKED', 'broker nacked the publish', { cause: err });
  return new QueueError('CCP_ERR_QUEUE_CHANNEL_CLOSED', 'channel closed before the confirm', { cause: err });
}

/** `p`, or a rejection with the abort reason if `signal` aborts first. */
export function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
