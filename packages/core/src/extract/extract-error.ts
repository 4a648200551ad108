import { CcpError } from '../errors';

/**
 * Stable codes an extraction can fail with.
 * - `CCP_ERR_EXTRACT_TOO_MANY_ELEMENTS`: the parsed page has more elements than `maxElements`.
 * - `CCP_ERR_EXTRACT_DEPTH`: the DOM is nested deeper than `maxDepth`, or Readability overflowed the stack.
 * - `CCP_ERR_EXTRACT_TIMEOUT`: a document ran past the pool's per-document time limit (adapters).
 * - `CCP_ERR_EXTRACT_WORKER`: the worker running the document died (out of memory, crash) (adapters).
 * - `CCP_ERR_EXTRACT_CLOSED`: the pool was closed before the document was extracted (adapters).
 * - `CCP_ERR_EXTRACT_ABORTED`: the caller's AbortSignal fired (adapters).
 * - `CCP_ERR_EXTRACT_FAILED`: the DOM library or Readability threw something else.
 */
export type ExtractErrorCode =
  | 'CCP_ERR_EXTRACT_TOO_MANY_ELEMENTS'
  | 'CCP_ERR_EXTRACT_DEPTH'
  | 'CCP_ERR_EXTRACT_TIMEOUT'
  | 'CCP_ERR_EXTRACT_WORKER'
  | 'CCP_ERR_EXTRACT_CLOSED'
  | 'CCP_ERR_EXTRACT_UNAVAILABLE'
  | 'CCP_ERR_EXTRACT_ABORTED'
  | 'CCP_ERR_EXTRACT_FAILED';

/** Codes that mean "this document is bad": count and skip it, never retry it. A worker that died
 * (usually out of memory) died on this document, so that is a document code too. */
const DOCUMENT_CODES: ReadonlySet<ExtractErrorCode> = new Set([
  'CCP_ERR_EXTRACT_TOO_MANY_ELEMENTS',
  'CCP_ERR_EXTRACT_DEPTH',
  'CCP_ERR_EXTRACT_TIMEOUT',
  'CCP_ERR_EXTRACT_WORKER',
  'CCP_ERR_EXTRACT_FAILED',
]);

/**
 * A document that could not be extracted, or an extraction the pool could not run. Document-level
 * codes (too many elements, depth, timeout, worker died, failed) are not retryable: the same page
 * fails the same way. `CLOSED` and `ABORTED` are retryable: the page itself was never judged.
 * Page text and URLs go only into `detail`, never into the message.
 */
export class ExtractError extends CcpError {
  declare readonly code: ExtractErrorCode;

  constructor(code: ExtractErrorCode, message: string, options: { cause?: unknown; detail?: Record<string, unknown> } = {}) {
    super(code, message, { ...options, retryable: !DOCUMENT_CODES.has(code) });
  }
}

/** True for a thrown value that is a JS stack overflow (`RangeError: Maximum call stack size exceeded`). */
export function isStackOverflow(err: unknown): boolean {
  return err instanceof RangeError && /call stack/i.test(err.message);
}

/**
 * An extraction thread's error as it crosses to the pool (a structured clone keeps no class): an ExtractError's code,
 * message and detail; anything else a generic failure, its message not passed on.
 */
export function wireErrorOf(err: unknown): { code: ExtractErrorCode; message: string; detail?: Record<string, unknown> } {
  if (err instanceof ExtractError) return { code: err.code, message: err.message, ...(err.detail && { detail: err.detail }) };
  return { code: 'CCP_ERR_EXTRACT_FAILED', message: 'extraction failed' };
}
