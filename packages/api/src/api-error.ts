import { CcpError } from '@ccpipe/core';

/** Stable error codes of the HTTP API and the status each one is answered with. */
export const API_ERRORS = {
  CCP_ERR_API_BAD_REQUEST: 400,
  CCP_ERR_API_BAD_DOMAIN: 400,
  CCP_ERR_API_BAD_URL: 400,
  CCP_ERR_API_BAD_SEARCH: 400,
  CCP_ERR_API_UNAUTHORIZED: 401,
  CCP_ERR_API_NOT_FOUND: 404,
  CCP_ERR_API_DOMAIN_NOT_FOUND: 404,
  CCP_ERR_API_DATASET_NOT_FOUND: 404,
  CCP_ERR_API_URL_NOT_FOUND: 404,
  CCP_ERR_API_NO_LINKS: 404,
  CCP_ERR_API_NO_SEARCH: 404,
  CCP_ERR_API_METHOD: 405,
  CCP_ERR_API_VERSION_GONE: 410,
  CCP_ERR_API_TOO_LARGE: 431,
  CCP_ERR_API_INTERNAL: 500,
  CCP_ERR_API_DATA_DAMAGED: 500,
  CCP_ERR_API_NO_INDEX: 503,
  CCP_ERR_API_SEARCH_TIMEOUT: 503,
} as const;
export type ApiErrorCode = keyof typeof API_ERRORS;

/**
 * An error the API answers with `{error: {code, message}}` and the status of its code. Messages are constant
 * text: never the raw path, query or URL the client sent (those may go in `detail`, logged at debug only).
 */
export class ApiError extends CcpError {
  override readonly code: ApiErrorCode;
  readonly status: number;
  /** The query or path parameter at fault, answered as `error.detail.param` (a name the route defines, or the unknown one sent). */
  readonly param: string | undefined;
  /** Seconds the client should wait before asking again (a `Retry-After` header), when the error says so. */
  readonly retryAfterS: number | undefined;
  constructor(code: ApiErrorCode, message: string, options: { cause?: unknown; detail?: Record<string, unknown>; param?: string; retryAfterS?: number } = {}) {
    super(code, message, { ...options, retryable: code === 'CCP_ERR_API_NO_INDEX' || code === 'CCP_ERR_API_INTERNAL' || code === 'CCP_ERR_API_SEARCH_TIMEOUT' });
    this.code = code;
    this.status = API_ERRORS[code];
    this.param = options.param;
    this.retryAfterS = options.retryAfterS;
  }

  /** The error as the API answers it. */
  body(): { error: { code: string; message: string; detail?: { param: string } } } {
    return { error: { code: this.code, message: this.message, ...(this.param !== undefined && { detail: { param: this.param.slice(0, 100) } }) } };
  }
}
