/**
 * Reads byte ranges of files under one base location (data.commoncrawl.org, a local mirror, a directory).
 * Paths are relative (`crawl-data/…/x.warc.gz`, `cc-index/collections/…/cdx-00000.gz`); an adapter validates them
 * and never leaves its base.
 */
export interface RangeReader {
  /**
   * Exactly the bytes [offset, offset + length) of `path`. Retries transient failures per its retry policy;
   * throws a CcpError when the range cannot be had (code says why: CCP_ERR_FETCH_STATUS, CCP_ERR_FETCH_SHORT_BODY,
   * CCP_ERR_SSRF, CCP_ERR_ABORTED, …). Never returns fewer or more bytes than asked.
   */
  read(path: string, offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array>;
  /** The whole file as a stream of chunks (for cluster.idx, paths files). */
  stream(path: string, signal?: AbortSignal): AsyncIterable<Uint8Array>;
  /**
   * Bytes [offset, offset + length) of `path` as a stream of chunks, in one request (bulk mode reads a whole WARC file
   * or CDX file so). Errors as `read`'s; a failure before the first chunk is retried, one after it ends the iteration
   * with CCP_ERR_FETCH_SHORT_BODY (retryable: the caller starts again where it needs). No size cap.
   */
  streamRange(path: string, offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array>;
  /** Releases connections; idempotent. */
  close(): Promise<void>;
}
