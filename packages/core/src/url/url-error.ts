import { CcpError } from '../errors';

/** Stable codes a URL can be rejected with. */
export type UrlErrorCode = 'CCP_ERR_URL_INVALID' | 'CCP_ERR_URL_SCHEME';

/**
 * A URL the index cannot take: it does not parse as a WHATWG URL (`CCP_ERR_URL_INVALID`) or its
 * scheme is not http/https (`CCP_ERR_URL_SCHEME`). Never retryable. The offending input is kept in
 * `detail.input` (cut to 2,048 chars), never in the message.
 */
export class UrlError extends CcpError {
  declare readonly code: UrlErrorCode;

  constructor(code: UrlErrorCode, message: string, input: string, cause?: unknown) {
    super(code, message, { retryable: false, cause, detail: { input: input.length > 2048 ? input.slice(0, 2048) : input } });
  }
}
