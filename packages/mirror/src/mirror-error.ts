import { CcpError } from '@ccpipe/core';

/** Stable codes of the errors the mirror raises on purpose. */
export type MirrorErrorCode =
  /** An option is invalid (crawl or segment name, block size, shard count). */
  | 'CCP_ERR_MIRROR_OPTION'
  /** Two input WARCs would land on the same mirror path. */
  | 'CCP_ERR_MIRROR_PATH_CLASH'
  /** An existing collinfo.json cannot be read or parsed. */
  | 'CCP_ERR_MIRROR_COLLINFO'
  /** The directory to serve is not a directory. */
  | 'CCP_ERR_MIRROR_ROOT';

/** An error of `buildMirror`/`serveMirror`; never retryable (the same input fails the same way). */
export class MirrorError extends CcpError {
  declare readonly code: MirrorErrorCode;

  constructor(code: MirrorErrorCode, message: string, options: { cause?: unknown; detail?: Record<string, unknown> } = {}) {
    super(code, message, { ...options, retryable: false });
  }
}
