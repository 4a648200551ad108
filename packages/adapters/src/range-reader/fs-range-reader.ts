import { createReadStream, promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { validateWarcFilename, type RangeReader } from '@ccpipe/core';
import { AbortedError, FetchStatusError, ReaderClosedError, throwIfAborted } from './errors';
import { assertGzip, checkRangeArgs, DEFAULT_MAX_READ_BYTES, outOfRangeError } from './range-checks';

/** Options of {@link FsRangeReader}. */
export interface FsRangeReaderOptions {
  /** Directory laid out like data.commoncrawl.org (e.g. a mirror built by `buildMirror`). */
  root: string;
  /** Require every `read` to start with the gzip magic `1f 8b`; default false. */
  expectGzip?: boolean;
  /** Largest `length` a read may ask for; default 64 MiB. */
  maxReadBytes?: number;
}

/**
 * {@link RangeReader} over a local directory, with the same contract as the HTTP reader: the same path
 * validation (CCP_ERR_SSRF) and the same errors in HTTP terms — a missing file (or one whose real path leaves
 * `root` through a symlink, or a directory) is CCP_ERR_FETCH_STATUS 404, a range not inside the file is
 * CCP_ERR_FETCH_STATUS 416. No retries (a local read has nothing transient to wait out). `close()` is idempotent.
 */
export class FsRangeReader implements RangeReader {
  private readonly root: string;
  private rootReal: Promise<string> | undefined;
  private readonly expectGzip: boolean;
  private readonly maxReadBytes: number;
  private closed = false;

  constructor(opts: FsRangeReaderOptions) {
    this.root = nodePath.resolve(opts.root);
    this.expectGzip = opts.expectGzip ?? false;
    this.maxReadBytes = opts.maxReadBytes ?? DEFAULT_MAX_READ_BYTES;
  }

  /** See {@link RangeReader.read}; errors as in the class comment, plus CCP_ERR_FETCH_BAD_RANGE, CCP_ERR_ABORTED. */
  async read(path: string, offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    this.assertOpen();
    checkRangeArgs(offset, length, this.maxReadBytes);
    const file = await this.resolve(path);
    throwIfAborted(signal);
    const fh = await fsp.open(file, 'r');
    try {
      const size = (await fh.stat()).size;
      if (offset >= size) throw outOfRangeError(offset, length, size, false);
      if (offset + length > size) throw outOfRangeError(offset, length, size, true);
      const out = Buffer.allocUnsafe(length);
      let n = 0;
      while (n < length) {
        throwIfAborted(signal);
        const { bytesRead } = await fh.read(out, n, length - n, offset + n);
        if (bytesRead === 0) throw outOfRangeError(offset, length, offset + n, true); // file shrank under us
        n += bytesRead;
      }
      if (this.expectGzip) assertGzip(out, offset);
      return out;
    } finally {
      await fh.close();
    }
  }

  /** The whole file in chunks; a missing file throws CCP_ERR_FETCH_STATUS 404 before the first chunk. */
  async *stream(path: string, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    this.assertOpen();
    const file = await this.resolve(path);
    throwIfAborted(signal);
    yield* chunksOf(createReadStream(file, signal ? { signal } : {}), signal);
  }

  /** See {@link RangeReader.streamRange}; a range not inside the file throws CCP_ERR_FETCH_STATUS 416 before the first chunk. */
  async *streamRange(path: string, offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    this.assertOpen();
    checkRangeArgs(offset, length, Number.MAX_SAFE_INTEGER);
    const file = await this.resolve(path);
    throwIfAborted(signal);
    const size = (await fsp.stat(file)).size;
    if (offset >= size) throw outOfRangeError(offset, length, size, false);
    if (offset + length > size) throw outOfRangeError(offset, length, size, true);
    yield* chunksOf(createReadStream(file, { start: offset, end: offset + length - 1, highWaterMark: 1024 * 1024, ...(signal ? { signal } : {}) }), signal);
  }

  /** Idempotent; later reads throw CCP_ERR_READER_CLOSED. */
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  private assertOpen(): void {
    if (this.closed) throw new ReaderClosedError();
  }

  /** Real path of a regular file inside the root, or CCP_ERR_FETCH_STATUS 404. Throws CCP_ERR_SSRF first. */
  private async resolve(path: string): Promise<string> {
    const rel = validateWarcFilename(path);
    this.rootReal ??= fsp.realpath(this.root).catch((err: unknown) => {
      this.rootReal = undefined; // a root that appears later is picked up by the next read
      throw err;
    });
    const rootReal = await this.rootReal;
    const notFound = (): FetchStatusError => new FetchStatusError(404, false, { path: rel });
    let real: string;
    try {
      real = await fsp.realpath(nodePath.join(rootReal, ...rel.split('/')));
    } catch {
      throw notFound();
    }
    const inside = nodePath.relative(rootReal, real);
    if (inside === '' || inside.startsWith('..') || nodePath.isAbsolute(inside)) throw notFound();
    const st = await fsp.stat(real).catch(() => null);
    if (!st?.isFile()) throw notFound();
    return real;
  }
}

/** A file stream's chunks; an abort is CCP_ERR_ABORTED; the stream is destroyed when the caller stops. */
async function* chunksOf(rs: ReturnType<typeof createReadStream>, signal: AbortSignal | undefined): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of rs) yield chunk as Buffer;
  } catch (err) {
    if (signal?.aborted) throw new AbortedError(signal.reason);
    throw err;
  } finally {
    rs.destroy();
  }
}
