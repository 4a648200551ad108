import { CcpError } from '@ccpipe/core';

/** Stable codes raised by the queue adapters. */
export type QueueErrorCode =
  /** The broker returned a mandatory publish as unroutable (missing queue or binding). Retryable. */
  | 'CCP_ERR_QUEUE_RETURNED'
  /** No publisher confirm arrived in time (disk/memory alarm, overloaded broker). Retryable. */
  | 'CCP_ERR_QUEUE_CONFIRM_TIMEOUT'
  /** The broker nacked a publish (internal error in the queue). Retryable. */
  | 'CCP_ERR_QUEUE_NACKED'
  /** The channel or connection went away before the operation completed. Retryable. */
  | 'CCP_ERR_QUEUE_CHANNEL_CLOSED'
  /** No connection to the broker within the time allowed, or reconnecting gave up. Retryable. */
  | 'CCP_ERR_QUEUE_UNAVAILABLE'
  /**
   * For longer than the caller allows, the broker refused the login or the virtual host, or nothing accepted a
   * connection at its address or its host name was not found: settings that retrying will not mend. Not retryable.
   */
  | 'CCP_ERR_QUEUE_REFUSED'
  /** Used after close(). Not retryable. */
  | 'CCP_ERR_QUEUE_CLOSED'
  /** ack / requeue / deadLetter called twice on one delivery. Not retryable (a bug in the caller). */
  | 'CCP_ERR_QUEUE_ALREADY_SETTLED';

const RETRYABLE: ReadonlySet<QueueErrorCode> = new Set<QueueErrorCode>([
  'CCP_ERR_QUEUE_RETURNED',
  'CCP_ERR_QUEUE_CONFIRM_TIMEOUT',
  'CCP_ERR_QUEUE_NACKED',
  'CCP_ERR_QUEUE_CHANNEL_CLOSED',
  'CCP_ERR_QUEUE_UNAVAILABLE',
]);

/** An error from the batch queue adapters; `retryable` follows from the code. */
export class QueueError extends CcpError {
  override readonly code: QueueErrorCode;

  constructor(code: QueueErrorCode, message: string, options: { cause?: unknown; detail?: Record<string, unknown> } = {}) {
    super(code, message, { ...options, retryable: RETRYABLE.has(code) });
    this.code = code;
  }
}
