import { CcpError } from '../errors';

/** What a consumer does with a message after handling it. */
export type QueueAction = 'ack' | 'requeue' | 'dead-letter' | 'crash';

/** Local conditions where carrying on would only fail every batch: stop the process and let the broker redeliver. */
const FATAL_SYSTEM_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EMFILE', 'ENFILE', 'ERR_WORKER_OUT_OF_MEMORY']);
/**
 * Failures no retry on this process can fix: store access refused (wrong credentials, missing bucket), the machine
 * unable to write a part (temp disk full, out of memory), the extraction pool unable to run: every batch would fail
 * the same way.
 */
const FATAL_CCP_CODES = new Set(['CCP_ERR_STORE_ACCESS', 'CCP_ERR_PARQUET_LOCAL', 'CCP_ERR_EXTRACT_UNAVAILABLE']);

/** The system error code of `err` or of the error it wraps (a store wraps ENOSPC in CCP_ERR_STORE_IO), else ''. */
function systemCodeOf(err: unknown): string {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = 'code' in e ? String((e as { code: unknown }).code) : '';
    if (FATAL_SYSTEM_CODES.has(code)) return code;
  }
  return '';
}

/**
 * The one place that maps the outcome of handling a batch to a queue action:
 * - success → `ack`;
 * - a non-retryable CcpError (bad message, unsafe input) → `dead-letter` with its code as reason;
 * - a retryable CcpError, or an unexpected error → `requeue`: the quorum queue's delivery limit turns a batch that
 *   keeps failing into a dead letter, so a poison batch cannot loop forever;
 * - a local system failure (disk full, read-only, permissions, descriptors), also wrapped in a store error, or a store
 *   that refuses access (credentials, missing bucket) → `crash`: carrying on would dead-letter every batch.
 * Pure.
 */
export function queueActionFor(outcome: { ok: true } | { ok: false; error: unknown }): { action: QueueAction; reason?: string } {
  if (outcome.ok) return { action: 'ack' };
  const err = outcome.error;
  const sysCode = systemCodeOf(err);
  if (sysCode !== '') return { action: 'crash', reason: sysCode };
  if (err instanceof CcpError && FATAL_CCP_CODES.has(err.code)) return { action: 'crash', reason: err.code };
  if (err instanceof CcpError) return { action: err.retryable ? 'requeue' : 'dead-letter', reason: err.code };
  return { action: 'requeue', reason: 'CCP_ERR_UNEXPECTED' };
}
