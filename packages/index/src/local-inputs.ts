import { crc32 } from 'node:zlib';
import { mkdir, open, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CcpError, runLanes, type ObjectStore } from '@ccpipe/core';
import { IndexFormatError } from './format';
import { keyPath, type CachedObject, type MergeCache } from './merge-cache';

/** A store that can name the local file behind a key (a local directory store); the merger then reads it in place. */
export interface LocalPathStore extends ObjectStore {
  localPath(key: string): string;
}

/** True when `store` exposes {@link LocalPathStore.localPath}. */
export function hasLocalPath(store: ObjectStore): store is LocalPathStore {
  return typeof (store as Partial<LocalPathStore>).localPath === 'function';
}

/** Local files for store objects, as DuckDB needs them (it reads paths, not an ObjectStore). */
export interface LocalInputs {
  /** True when objects are read in place (nothing is copied). */
  readonly inPlace: boolean;
  /** Makes `keys` readable locally and returns their paths, in order. Idempotent per key. */
  fetch(keys: readonly string[]): Promise<string[]>;
  /** Deletes the local copies of `keys` (no-op in place). Idempotent. */
  release(keys: readonly string[]): Promise<void>;
}

/** The store's objects read in place — `dataDir` (the directory behind the store) or the store's `localPath` — or null when it has no local files. */
export function inPlaceInputs(store: ObjectStore, dataDir: string | undefined): LocalInputs | null {
  if (dataDir !== undefined) return { inPlace: true, fetch: async (keys) => keys.map((k) => join(dataDir, k)), release: async () => undefined };
  if (hasLocalPath(store)) return { inPlace: true, fetch: async (keys) => keys.map((k) => store.localPath(k)), release: async () => undefined };
  return null;
}

/** Bytes per ranged read when staging an object (bounds memory for big lake files). */
const CHUNK = 8 * 2 ** 20;

/**
 * Copies store object `key` to the local file `path` by ranged reads of 8 MiB written in order (memory stays at one
 * chunk, whatever the object's size); returns its size and CRC32. `check` runs before each chunk (it throws to stop).
 * @throws IndexFormatError CCP_ERR_INDEX_MISSING when the object is not in the store; what the store or the disk throws
 */
export async function copyObjectToFile(store: ObjectStore, key: string, path: string, check?: () => void): Promise<{ size: number; crc32: number }> {
  check?.();
  const info = await store.head(key);
  if (info === null) throw new IndexFormatError('CCP_ERR_INDEX_MISSING', 'an object to copy locally is missing from the store', { key });
  await mkdir(dirname(path), { recursive: true });
  // positional writes through a handle: an error (ENOSPC) rejects here instead of surfacing as a stream's
  // unhandled 'error' event, which would end the process
  const out = await open(path, 'w');
  let crc = 0;
  try {
    for (let at = 0; at < info.size; at += CHUNK) {
      check?.();
      const bytes = await store.getRange(key, at, Math.min(CHUNK, info.size - at));
      crc = crc32(bytes, crc);
      for (let done = 0; done < bytes.length;) done += (await out.write(bytes, done, bytes.length - done, at + done)).bytesWritten;
    }
  } finally {
    await out.close();
  }
  return { size: info.size, crc32: crc >>> 0 };
}

/** Options of {@link openLocalInputs}. */
export interface LocalInputsOptions {
  /** Aborts copies in progress (checked between chunks). */
  signal?: AbortSignal;
  /**
   * Keeps copies across merges: a key that `expect` describes (size and CRC32, as its version lists it) is served
   * from `cache` when there, else downloaded into it, checked, and kept (release does not delete it). Other keys
   * (batch parts) are staged and released as without a cache.
   */
  cache?: { cache: MergeCache; expect: (key: string) => CachedObject | undefined };
}

/**
 * Local paths for store objects. With `dataDir` (the directory behind the store) or a store that has a
 * `localPath(key)`, objects are read in place. Otherwise each object is staged into `stageDir` by ranged `getRange`
 * reads of 8 MiB written to a file in order (memory stays at one chunk, whatever the object's size), and deleted
 * again by `release` — or, for keys `opts.cache` describes, kept in that cache. A write that fails (a full disk)
 * rejects the fetch; so does `opts.signal` once aborted (checked between chunks). @throws IndexFormatError
 * CCP_ERR_INDEX_MISSING when an object to stage is missing, CCP_ERR_INDEX_CRC when a cached key's download does not
 * match its size or CRC32; CcpError CCP_ERR_ABORTED when the signal aborted the copy
 */
export function openLocalInputs(store: ObjectStore, dataDir: string | undefined, stageDir: string, opts: LocalInputsOptions = {}): LocalInputs {
  const here = inPlaceInputs(store, dataDir);
  if (here !== null) return here;
  const { signal, cache } = opts;
  /** Keys copied into stageDir (deleted on release). */
  const staged = new Set<string>();
  /** Keys served from the cache, and where. */
  const cached = new Map<string, string>();
  const pathOf = (key: string): string => cached.get(key) ?? keyPath(stageDir, key);
  /** Throws once `signal` has aborted (a function: the flag changes across the awaits of a copy). */
  const check = (key: string): void => {
    if (signal?.aborted === true) throw new CcpError('CCP_ERR_ABORTED', 'copying a store object was aborted', { detail: { key } });
  };
  const copy = (key: string, path: string): Promise<{ size: number; crc32: number }> => copyObjectToFile(store, key, path, () => check(key));
  const stage = async (key: string): Promise<void> => {
    const want = cache?.expect(key);
    if (cache === undefined || want === undefined) {
      await copy(key, keyPath(stageDir, key));
      staged.add(key);
      return;
    }
    const hit = await cache.cache.find(want);
    if (hit !== null) {
      cached.set(key, hit);
      return;
    }
    const partial = await cache.cache.partialPath(want);
    try {
      const got = await copy(key, partial);
      if (got.size !== want.bytes || got.crc32 !== want.crc32) {
        throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'a store object does not match the size and CRC32 its version lists', { key, size: got.size, expectedSize: want.bytes });
      }
      cached.set(key, await cache.cache.commit(want, partial));
    } finally {
      await rm(partial, { force: true });
    }
  };
  return {
    inPlace: false,
    async fetch(keys) {
      // settles only when no copy is still running: the merge deletes the stage dir right after a failure
      await runLanes(keys.length, 4, async (i) => {
        const k = keys[i]!;
        if (!staged.has(k) && !cached.has(k)) await stage(k);
      });
      return keys.map(pathOf);
    },
    async release(keys) {
      for (const k of keys) {
        if (!staged.delete(k)) continue;
        await rm(keyPath(stageDir, k), { force: true });
      }
    },
  };
}
