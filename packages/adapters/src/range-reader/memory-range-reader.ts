import { validateWarcFilename, type RangeReader } from '@ccpipe/core';
import { FetchStatusError, ReaderClosedError, throwIfAborted } from './errors';
import { assertGzip, checkRangeArgs, DEFAULT_MAX_READ_BYTES, outOfRangeError } from './range-checks';

/** Options of {@link MemoryRangeReader}. */
export interface MemoryRangeReaderOptions {
  /** Require every `read` to start with the gzip magic `1f 8b`; default false. */
  expectGzip?: boolean;
  /** Chunk size of `stream`; default 64 KiB. */
  chunkSize?: number;
}

/**
 * {@link RangeReader} over files held in memory, keyed by their relative path (`crawl-data/…/x.warc.gz`), for
 * unit tests and embedded mode. Same contract and errors as the other readers: CCP_ERR_SSRF for unsafe paths,
 * CCP_ERR_FETCH_STATUS 404 for a missing key, 416 for a range not inside the file. Returned bytes are copies,
 * so callers may modify them. The map is read live (not copied). `close()` is idempotent.
 */
export class MemoryRangeReader implements RangeReader {
  private closed = false;
  private readonly expectGzip: boolean;
  private readonly chunkSize: number;

  constructor(
    private readonly files: ReadonlyMap<string, Uint8Array>,
    opts: MemoryRangeReaderOptions = {},
  ) {
    this.expectGzip = opts.expectGzip ?? false;
    this.chunkSize = Math.max(1, opts.chunkSize ?? 64 * 1024);
  }

  /** See {@link RangeReader.read}. */
  async read(path: string, offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    if (this.closed) throw new ReaderClosedError();
    checkRangeArgs(offset, length, DEFAULT_MAX_READ_BYTES);
    const file = this.lookup(path);
    throwIfAborted(signal);
    if (offset >= file.length) throw outOfRangeError(offset, length, file.length, false);
    if (offset + length > file.length) throw outOfRangeError(offset, length, file.length, true);
    const out = Buffer.from(file.subarray(offset, offset + length));
    if (this.expectGzip) assertGzip(out, offset);
    return out;
  }

  /** The whole file in `chunkSize` chunks (copies). */
  async *stream(path: string, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    const file = this.lookup(path);
    for (let i = 0; i < file.length; i += this.chunkSize) {
      throwIfAborted(signal);
      yield Buffer.from(file.subarray(i, i + this.chunkSize));
    }
  }

  /** See {@link RangeReader.streamRange}: `chunkSize` chunks (copies). */
  async *streamRange(path: string, offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    checkRangeArgs(offset, length, Number.MAX_SAFE_INTEGER);
    const file = this.lookup(path);
    if (offset >= file.length) throw outOfRangeError(offset, length, file.length, false);
    if (offset + length > file.length) throw outOfRangeError(offset, length, file.length, true);
    for (let i = offset; i < offset + length; i += this.chunkSize) {
      throwIfAborted(signal);
      yield Buffer.from(file.subarray(i, Math.min(offset + length, i + this.chunkSize)));
    }
  }

  /** Idempotent; later reads throw CCP_ERR_READER_CLOSED. */
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  private lookup(path: string): Uint8Array {
    if (this.closed) throw new ReaderClosedError();
    const rel = validateWarcFilename(path);
    const file = this.files.get(rel);
    if (file === undefined) throw new FetchStatusError(404, false, { path: rel });
    return file;
  }
}
