import { CcpError } from '../errors';

/** What a consumer does with a message after handling it. */
export type QueueAction = 'ack' | 'requeue' | 'dead-letter' | 'crash';

/** Local conditions where carrying on would only fail every batch: stop the process and let the broker redeliver. */
const FATAL_SYSTEM_CODES = new Set(['ENOSPC', 'EROFS', 'EACCES', 'EPERM', 'EMFILE', 'ENFILE', 'ERR_WORKER_OUT_OF_MEMORY']);

/**
 * The one place that maps the outcome of handling a batch to a queue action:
 * - success → `ack`;
 * - a non-retryable CcpError (bad message, unsafe input) → `dead-letter` with its code as reason;
 * - a retryable CcpError, or an unexpected error → `requeue`: the quorum queue's delivery limit turns a batch that
 *   keeps failing into a dead letter, so a poison batch cannot loop forever;
 * - a local system failure (disk full, read-only, permissions, descriptors) → `crash`.
 * Pure.
 */
export function queueActionFor(outcome: { ok: true } | { ok: false; error: unknown }): { action: QueueAction; reason?: string } {
  if (outcome.ok) return { action: 'ack' };
  const err = outcome.error;
  const sysCode = typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : '';
  if (FATAL_SYSTEM_CODES.has(sysCode)) return { action: 'crash', reason: sysCode };
  if (err instanceof CcpError) return { action: err.retryable ? 'requeue' : 'dead-letter', reason: err.code };
  return { action: 'requeue', reason: 'CCP_ERR_UNEXPECTED' };
}
