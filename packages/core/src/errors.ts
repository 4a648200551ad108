/**
 * One base class for every error ccpipe raises on purpose. `code` is stable (`CCP_ERR_…`) and safe to
 * use as a metric label or a DLQ reason; `retryable` says whether trying the same thing again can help.
 * Messages never carry raw URLs or page text: put untrusted data in `detail`, which loggers keep
 * under a named key at debug level.
 */
export class CcpError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly detail: Record<string, unknown> | undefined;

  constructor(
    code: string,
    message: string,
    options: { retryable?: boolean; cause?: unknown; detail?: Record<string, unknown> } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.detail = options.detail;
  }
}

/** A line of cluster.idx or CDX that does not have the expected shape. */
export class FormatError extends CcpError {
  constructor(code: `CCP_ERR_${string}`, message: string, options: { cause?: unknown; detail?: Record<string, unknown> } = {}) {
    super(code, message, { ...options, retryable: false });
  }
}

/** True when `err` is a CcpError with the given code. */
export function hasCode(err: unknown, code: string): boolean {
  return err instanceof CcpError && err.code === code;
}

/** The stable code of any thrown value: the CcpError code, else a generic one. Safe as a metric label. */
export function errorCode(err: unknown): string {
  return err instanceof CcpError ? err.code : 'CCP_ERR_UNEXPECTED';
}
