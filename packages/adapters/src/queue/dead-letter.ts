/** Header carrying our dead-letter reason (a closed-set code such as `CCP_ERR_BATCH_FORMAT`) on a DLQ copy. */
export const DEAD_LETTER_REASON_HEADER = 'ccpipe-dead-letter-reason';
/** Header carrying the delivery count the message had when it was dead-lettered. */
export const DEAD_LETTER_DELIVERY_COUNT_HEADER = 'ccpipe-delivery-count';
/** Header naming the queue the message was dead-lettered from. */
export const DEAD_LETTER_SOURCE_QUEUE_HEADER = 'ccpipe-source-queue';

/**
 * The reason the broker gives when the quorum queue's `x-delivery-limit` dead-letters a message. The in-memory
 * queue uses the same word, so DLQ readers see one vocabulary.
 */
export const DELIVERY_LIMIT_REASON = 'delivery_limit';

/** What a DLQ reader learns about one dead letter. */
export interface DeadLetterInfo {
  /** Our reason header, else the broker's (`delivery_limit`, `rejected`, `expired`, …), else `unknown`. */
  reason: string;
  /** Deliveries before it was dead-lettered, when known. */
  deliveryCount: number | null;
  sourceQueue: string | null;
}

/**
 * Reads the reason from a dead-lettered message's headers: ours (set by `deadLetter(reason)`) or the broker's
 * `x-first-death-reason` / `x-death[0].reason` (set when the delivery limit or a plain reject dead-lettered it).
 * Pure; never throws.
 */
export function deadLetterInfo(headers: Record<string, unknown> | undefined): DeadLetterInfo {
  const h = headers ?? {};
  const ours = h[DEAD_LETTER_REASON_HEADER];
  const xDeath = Array.isArray(h['x-death']) ? (h['x-death'][0] as Record<string, unknown> | undefined) : undefined;
  const brokerReason = h['x-first-death-reason'] ?? xDeath?.['reason'];
  const count = h[DEAD_LETTER_DELIVERY_COUNT_HEADER];
  const source = h[DEAD_LETTER_SOURCE_QUEUE_HEADER] ?? h['x-first-death-queue'] ?? xDeath?.['queue'];
  return {
    reason: typeof ours === 'string' ? ours : typeof brokerReason === 'string' ? brokerReason : 'unknown',
    deliveryCount: typeof count === 'number' ? count : null,
    sourceQueue: typeof source === 'string' ? source : null,
  };
}

/**
 * The headers of a DLQ copy: the original's own headers (broker `x-` headers dropped: the copy is a new message)
 * plus reason, delivery count and source queue. Pure.
 */
export function deadLetterHeaders(
  original: Record<string, unknown> | undefined,
  reason: string,
  deliveryCount: number,
  sourceQueue: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(original ?? {})) if (!k.startsWith('x-')) out[k] = v;
  out[DEAD_LETTER_REASON_HEADER] = reason;
  out[DEAD_LETTER_DELIVERY_COUNT_HEADER] = deliveryCount;
  out[DEAD_LETTER_SOURCE_QUEUE_HEADER] = sourceQueue;
  return out;
}
