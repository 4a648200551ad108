import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, open, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fsyncPath } from '@ccpipe/adapters';
import { IndexFormatError, crcOf } from './format';

/** A store object as a version lists it: its key, size and CRC32 (a lake file's registry entry, an index file's toc entry). */
export interface CachedObject {
  key: string;
  bytes: number;
  crc32: number;
}

/** The subdirectory of the configured directory that the cache owns: nothing outside it is ever deleted. */
const ROOT = 'ccpipe-merge-cache';
/** Suffix of an entry's file name: `~<crc32 as 8 hex digits>-<size>`. */
const ENTRY = /~[0-9a-f]{8}-\d+$/;
/** Infix of a file being written (renamed to its entry name once complete). */
const PARTIAL = '.partial-';

/**
 * `key` as a path under `root`: its `/`-separated segments, none of them empty, `.` or `..` (a key from a damaged or
 * crafted files.json must not reach outside the directory). @throws IndexFormatError CCP_ERR_INDEX_FORMAT
 */
export function keyPath(root: string, key: string): string {
  const parts = key.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\') || p.includes('\0'))) {
    throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'a store key cannot be a local path (empty, . or .. segment)', { key: key.slice(0, 300) });
  }
  return join(root, ...parts);
}

/**
 * Local copies of the immutable store objects a merge reads — lake files and index shard files — kept across merges
 * in a directory of the merger's own (`MergeOptions.cacheDir`), so that a merge over a store without local files (S3)
 * downloads only what it has not seen: in steady state the new batch parts, since the lake files and shards of the
 * previous version are the ones the previous merge wrote and kept here.
 *
 * An entry is named by its key, size and CRC32 (`<key>~<crc32>-<size>`), and enters the cache only once its bytes
 * are known to match them: a download is checked against the CRC32 its version lists; a file the merge wrote is
 * entered with the CRC32 of the bytes it uploaded. A key rewritten with other bytes (a crashed merge's leftover
 * rebuilt by its rerun) is therefore another entry and never served for it. At use only the size is checked (a
 * file truncated on local disk is fetched again); index shards are also CRC-checked whenever they are read. Entries
 * are flushed to disk before they are renamed into place. A merge starts by deleting every entry its previous
 * version does not list (what a failed merge left), drops the entries of the files it rewrites as it goes, and
 * after publishing keeps only the new version's ({@link retain}). One merger per directory.
 */
export class MergeCache {
  readonly root: string;

  constructor(dir: string) {
    this.root = join(dir, ROOT);
  }

  /** Where the entry for `o` lives (whether or not it is there). */
  pathOf(o: CachedObject): string {
    return `${keyPath(this.root, o.key)}~${(o.crc32 >>> 0).toString(16).padStart(8, '0')}-${o.bytes}`;
  }

  /** The entry's path when it is cached with the right size, else null. */
  async find(o: CachedObject): Promise<string | null> {
    const path = this.pathOf(o);
    try {
      return (await stat(path)).size === o.bytes ? path : null;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  /** A fresh path beside the entry for `o` to write it to before {@link commit} (its directory made). */
  async partialPath(o: CachedObject): Promise<string> {
    const path = this.pathOf(o);
    await mkdir(dirname(path), { recursive: true });
    return `${path}${PARTIAL}${randomBytes(6).toString('hex')}`;
  }

  /** Makes the complete file at `partial` (from {@link partialPath}) the entry for `o`: flushed to disk, then renamed. */
  async commit(o: CachedObject, partial: string): Promise<string> {
    const path = this.pathOf(o);
    await fsyncPath(partial); // whole on disk before its name says it is an entry
    await rename(partial, path);
    return path;
  }

  /** Enters bytes the merge wrote under `key` (their CRC32 is computed here); returns the entry's description. */
  async putBytes(key: string, b: Uint8Array): Promise<CachedObject> {
    const o = { key, bytes: b.length, crc32: crcOf(b) };
    const partial = await this.partialPath(o);
    try {
      const h = await open(partial, 'w');
      try {
        for (let done = 0; done < b.length;) done += (await h.write(b, done, b.length - done)).bytesWritten;
      } finally {
        await h.close();
      }
      await this.commit(o, partial);
    } finally {
      await rm(partial, { force: true }); // gone already once committed; a failed write (a full disk) leaves nothing
    }
    return o;
  }

  /**
   * Enters the file at `path` as the entry for `o` (moved: a rename, or a copy when the cache is on another file
   * system). The caller vouches that its bytes are those `o` describes.
   */
  async adoptFile(o: CachedObject, path: string): Promise<void> {
    const partial = await this.partialPath(o);
    try {
      try {
        await rename(path, partial);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        await copyFile(path, partial);
      }
      await this.commit(o, partial);
    } finally {
      await rm(partial, { force: true });
    }
  }

  /** Deletes the entry for `o`, if any (a file the merge has rewritten, which the next merge will not read). */
  async drop(o: CachedObject): Promise<void> {
    await rm(this.pathOf(o), { force: true });
  }

  /**
   * Deletes every entry but those of `keep`, partial files left by a killed merge, and directories left empty;
   * returns how many files went. Only files under the cache's own subdirectory that are named like entries or
   * partial files are touched.
   */
  async retain(keep: Iterable<CachedObject>): Promise<number> {
    const wanted = new Set([...keep].map((o) => this.pathOf(o)));
    let names: string[];
    try {
      names = await readdir(this.root, { recursive: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let removed = 0;
    const dirs = new Set<string>();
    for (const name of names) {
      const path = join(this.root, name);
      if (ENTRY.test(name) ? wanted.has(path) : !name.includes(PARTIAL)) continue;
      await rm(path, { force: true });
      removed++;
      for (let d = dirname(path); d !== this.root && relative(this.root, d).split(sep)[0] !== '..'; d = dirname(d)) dirs.add(d);
    }
    // deepest first; a directory that still holds something stays (rmdir refuses)
    for (const d of [...dirs].sort((a, b) => b.length - a.length)) await rmdir(d).catch(() => undefined);
    return removed;
  }
}
