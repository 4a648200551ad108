import type { QueueMessage } from '../ingest/warc-job';

/** Publishes batches (and bulk mode's WARC file jobs) durably. */
export interface BatchPublisher {
  /**
   * Publishes one batch or WARC file job and resolves once the broker has confirmed it (persisted and routed). Many calls may be in
   * flight at once. Rejects with a retryable CcpError on a confirm timeout, a returned (unroutable) message or a lost
   * connection; the caller publishes again (batch ids are deterministic, so a duplicate is harmless downstream).
   */
  publish(message: QueueMessage, signal?: AbortSignal): Promise<void>;
  /** Idempotent. Waits for outstanding confirms first. */
  close(): Promise<void>;
}

/** One delivered message. Exactly one of ack / requeue / deadLetter is called, once. */
export interface Delivery {
  /** Raw message body (decode with decodeMessage; an undecodable body is dead-lettered by the caller). */
  readonly body: Uint8Array;
  /** Times this message was delivered before (0 on first delivery), as far as the broker tells. */
  readonly deliveryCount: number;
  readonly redelivered: boolean;
  /**
   * Aborted once this delivery can no longer be settled (its channel or connection was lost: the broker redelivers
   * the message, maybe to another handler at once): its handler should stop rather than work on beside the
   * redelivery. Optional; never aborted by an in-memory queue.
   */
  readonly signal?: AbortSignal;
  ack(): Promise<void>;
  requeue(): Promise<void>;
  /** Rejects without requeue: the broker routes the message to the dead-letter queue. `reason` is a closed-set code. */
  deadLetter(reason: string): Promise<void>;
}

/** Consumes batches with manual acknowledgement and bounded prefetch. */
export interface BatchConsumer {
  /** Starts delivering to `handler`, at most `prefetch` unacknowledged at once. Resolves once consuming has begun. */
  start(handler: (delivery: Delivery) => Promise<void>): Promise<void>;
  /** Stops taking new deliveries; in-flight ones stay with their handlers. Idempotent. */
  stop(): Promise<void>;
  /** Stops, then releases the connection; unacknowledged deliveries return to the queue. Idempotent. */
  close(): Promise<void>;
}

/** Queue depth as an operator sees it. */
export interface QueueDepth {
  ready: number;
  unacked: number | null;
  deadLettered: number;
}
