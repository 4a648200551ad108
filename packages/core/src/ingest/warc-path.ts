import { CcpError } from '../errors';

/** A WARC `filename` from a CDX record that would make the fetch leave the configured base URL. */
export class UnsafeWarcPathError extends CcpError {
  constructor(reason: string, detail?: Record<string, unknown>) {
    super('CCP_ERR_SSRF', `unsafe WARC filename: ${reason}`, { retryable: false, detail });
  }
}

const SAFE_SEGMENT = /^[A-Za-z0-9._-]+$/;

/**
 * Validates the `filename` field of a CDX record as a relative path under the crawl base URL and returns it
 * unchanged. CDX lines come from the network, so a hostile or corrupt index could name `http://169.254.169.254/`,
 * `//evil/x`, `../../secret` or an encoded escape: every such name throws {@link UnsafeWarcPathError}
 * (code CCP_ERR_SSRF) and no request is made. Only `[A-Za-z0-9._-]` segments separated by `/` pass; no segment
 * may be `.` or `..`. Pure and idempotent.
 */
export function validateWarcFilename(filename: string): string {
  if (typeof filename !== 'string' || filename.length === 0) throw new UnsafeWarcPathError('empty');
  if (filename.length > 1024) throw new UnsafeWarcPathError('too long');
  if (filename.startsWith('/')) throw new UnsafeWarcPathError('absolute or protocol-relative');
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(filename)) throw new UnsafeWarcPathError('has a scheme');
  if (filename.includes('%')) throw new UnsafeWarcPathError('percent-encoded');
  const segments = filename.split('/');
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..') throw new UnsafeWarcPathError('empty or dot segment');
    if (!SAFE_SEGMENT.test(s)) throw new UnsafeWarcPathError('character outside [A-Za-z0-9._-]');
  }
  return filename;
}

/**
 * The absolute URL of a WARC file under `baseUrl` (e.g. https://data.commoncrawl.org). Validates the filename
 * first (throws {@link UnsafeWarcPathError}) and checks the result stays on the base URL's origin and path.
 */
export function warcFileUrl(baseUrl: string, filename: string): string {
  const rel = validateWarcFilename(filename);
  const base = new URL(baseUrl.endsWith('/') ? baseUrl : baseUrl + '/');
  const url = new URL(rel, base);
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) {
    throw new UnsafeWarcPathError('escapes the base URL');
  }
  return url.href;
}
