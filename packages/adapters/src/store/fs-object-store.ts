import { constants } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { CcpError, type ObjectInfo, type ObjectStore } from '@ccpipe/core';
import { checkRange } from './memory-object-store';
import { isKeySegment, StoreKeyError, StoreReadError, validateKey, validatePrefix } from './store-key';

const READ_STEP = 1 << 30;
const MAX_BUFFER = constants.MAX_LENGTH;

/** Options of {@link FsObjectStore}. */
export interface FsObjectStoreOptions {
  /** Directory holding the objects; created on first put. Key `a/b` is the file `<root>/a/b`. */
  root: string;
}

/**
 * An ObjectStore in a local directory. `put` writes a temp file beside the target (its name holds `~`, which no
 * key can), fsyncs it, renames it over the key and fsyncs the directory: a reader sees the old bytes or the new
 * ones, and after `put` resolves the object survives a power cut. A crash mid-put leaves at most a temp file,
 * which `list`/`get`/`head` never show.
 *
 * Unlike S3, a key cannot also be a "directory" of other keys (`a` and `a/b`): such a put throws
 * `CCP_ERR_STORE_KEY`. I/O failures throw `CCP_ERR_STORE_IO` (retryable).
 */
export class FsObjectStore implements ObjectStore {
  private readonly root: string;
  private seq = 0;

  constructor(opts: FsObjectStoreOptions) {
    this.root = resolve(opts.root);
  }

  /** Atomic, durable replace. Idempotent for the same bytes. @throws StoreKeyError, CcpError CCP_ERR_STORE_IO */
  async put(key: string, data: Uint8Array): Promise<void> {
    const path = this.pathOf(key);
    const dir = dirname(path);
    const tmp = `${path}~${process.pid}-${++this.seq}-${randomBytes(4).toString('hex')}~tmp`;
    try {
      await this.writeTemp(dir, tmp, data);
      await rename(tmp, path);
      await fsyncPath(dir);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw wrapWriteError(err, key);
    }
  }

  /** The whole object or null (also null when the key names a directory of other keys). @throws StoreKeyError, CCP_ERR_STORE_IO */
  async get(key: string): Promise<Uint8Array | null> {
    const path = this.pathOf(key);
    try {
      const buf = await readFile(path);
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (err) {
      if (isMissing(err)) return null;
      // readFile stops at 2 GiB; a Buffer holds up to buffer.constants.MAX_LENGTH (4 GiB on Node 20): index files of
      // a big version sit between the two
      if (code(err) === 'ERR_FS_FILE_TOO_LARGE') return this.getLarge(key);
      throw ioError(err, 'get', key);
    }
  }

  /** An object over readFile's 2 GiB read in 1 GiB steps into one buffer. @throws CCP_ERR_STORE_IO beyond Buffer's limit */
  private async getLarge(key: string): Promise<Uint8Array | null> {
    let size: number;
    try {
      size = (await stat(this.pathOf(key))).size;
    } catch (err) {
      if (isMissing(err)) return null;
      throw ioError(err, 'get', key);
    }
    if (size > MAX_BUFFER) {
      throw new CcpError('CCP_ERR_STORE_IO', 'object store get failed (object larger than a Buffer can hold)', { detail: { key, op: 'get', size } });
    }
    return this.getRange(key, 0, size);
  }

  /** @throws StoreKeyError, StoreReadError (missing, short, bad range), CCP_ERR_STORE_IO */
  async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    const path = this.pathOf(key);
    checkRange(key, offset, length);
    let fh;
    try {
      fh = await open(path, 'r');
    } catch (err) {
      if (isMissing(err)) throw new StoreReadError('CCP_ERR_STORE_NOT_FOUND', 'object not found', { key });
      throw ioError(err, 'getRange', key);
    }
    try {
      const size = (await fh.stat()).size;
      if (offset + length > size) {
        throw new StoreReadError('CCP_ERR_STORE_RANGE', 'range past end of object', { key, offset, length, size });
      }
      const out = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        // one read moves at most 2 GiB - 1
        const { bytesRead } = await fh.read(out, done, Math.min(length - done, READ_STEP), offset + done);
        if (bytesRead === 0) throw new StoreReadError('CCP_ERR_STORE_RANGE', 'object shrank while reading', { key, offset, length });
        done += bytesRead;
      }
      return out;
    } catch (err) {
      if (err instanceof CcpError) throw err;
      throw ioError(err, 'getRange', key);
    } finally {
      await fh.close();
    }
  }

  /** @throws StoreKeyError, CCP_ERR_STORE_IO */
  async head(key: string): Promise<ObjectInfo | null> {
    const path = this.pathOf(key);
    try {
      const st = await stat(path);
      return st.isFile() ? { key, size: st.size } : null;
    } catch (err) {
      if (isMissing(err)) return null;
      throw ioError(err, 'head', key);
    }
  }

  /**
   * Objects whose key starts with `prefix`, in lexicographic (byte) key order, streamed by a depth-first walk:
   * sorting each directory's entries by `name` for files and `name + "/"` for directories gives the global
   * key order without holding every key. Temp files and names that are not key segments are skipped.
   * @throws StoreKeyError, CCP_ERR_STORE_IO
   */
  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    validatePrefix(prefix);
    const cut = prefix.lastIndexOf('/');
    const dirKey = cut < 0 ? '' : prefix.slice(0, cut + 1);
    const namePrefix = prefix.slice(cut + 1);
    yield* this.walk(dirKey, namePrefix);
  }

  /** Idempotent; also removes directories the delete left empty. @throws StoreKeyError, CCP_ERR_STORE_IO */
  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    try {
      await unlink(path);
    } catch (err) {
      if (isMissing(err) || code(err) === 'EISDIR' || code(err) === 'EPERM') return;
      throw ioError(err, 'delete', key);
    }
    let dir = dirname(path);
    while (dir !== this.root && dir.startsWith(this.root + sep)) {
      try {
        await rmdir(dir);
      } catch {
        break; // not empty (or gone): stop climbing
      }
      dir = dirname(dir);
    }
  }

  /**
   * The file that holds `key` (which may not exist), for readers that need a path, such as DuckDB in the merger.
   * Read it only; write through `put`. @throws StoreKeyError
   */
  localPath(key: string): string {
    return this.pathOf(key);
  }

  /** Nothing to release (so it can stand wherever an opened store is closed). Idempotent. */
  async close(): Promise<void> {}

  private pathOf(key: string): string {
    validateKey(key);
    return join(this.root, ...key.split('/'));
  }

  private async writeTemp(dir: string, tmp: string, data: Uint8Array): Promise<void> {
    // A concurrent delete may remove the directory between mkdir and open: try again a few times.
    for (let attempt = 0; ; attempt++) {
      await mkdir(dir, { recursive: true });
      let fh;
      try {
        fh = await open(tmp, 'wx');
      } catch (err) {
        if (code(err) === 'ENOENT' && attempt < 3) continue;
        throw err;
      }
      try {
        await fh.writeFile(data);
        await fh.sync();
      } finally {
        await fh.close();
      }
      return;
    }
  }

  private async *walk(dirKey: string, namePrefix: string): AsyncGenerator<ObjectInfo> {
    const dirPath = join(this.root, ...dirKey.split('/').filter((s) => s !== ''));
    let entries;
    try {
      entries = await readdir(dirPath, { withFileTypes: true });
    } catch (err) {
      if (isMissing(err)) return;
      throw ioError(err, 'list', dirKey);
    }
    const items = entries
      .filter((e) => isKeySegment(e.name) && e.name.startsWith(namePrefix) && (e.isFile() || e.isDirectory()))
      .map((e) => ({ name: e.name, dir: e.isDirectory(), sortKey: e.isDirectory() ? `${e.name}/` : e.name }))
      .sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
    for (const item of items) {
      const key = dirKey + item.name;
      if (item.dir) {
        yield* this.walk(`${key}/`, '');
        continue;
      }
      try {
        const st = await stat(join(dirPath, item.name));
        if (st.isFile()) yield { key, size: st.size };
      } catch (err) {
        if (!isMissing(err)) throw ioError(err, 'list', key);
      }
    }
  }
}

/** Flushes a file or directory to disk (fsync through a read-only handle, which Linux allows for both). */
export async function fsyncPath(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

function isMissing(err: unknown): boolean {
  const c = code(err);
  return c === 'ENOENT' || c === 'ENOTDIR' || c === 'EISDIR';
}

function wrapWriteError(err: unknown, key: string): Error {
  if (err instanceof CcpError) return err;
  const c = code(err);
  if (c === 'EISDIR' || c === 'ENOTDIR' || c === 'EEXIST') {
    return new StoreKeyError('conflicts with an existing key used as a directory', key);
  }
  return ioError(err, 'put', key);
}

function ioError(err: unknown, op: string, key: string): CcpError {
  return new CcpError('CCP_ERR_STORE_IO', `object store ${op} failed (${code(err) ?? 'unknown'})`, {
    retryable: true,
    cause: err,
    detail: { key, op },
  });
}
