import { mkdir, open, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CcpError, runLanes, type ObjectStore } from '@ccpipe/core';
import { IndexFormatError } from './format';

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
 * Local paths for store objects. With `dataDir` (the directory behind the store) or a store that has a
 * `localPath(key)`, objects are read in place. Otherwise each object is staged into `stageDir` by ranged `getRange`
 * reads of 8 MiB written to a file in order (memory stays at one chunk, whatever the object's size), and deleted
 * again by `release`. A write that fails (a full disk) rejects the fetch; so does `signal` once aborted (checked
 * between chunks). @throws IndexFormatError CCP_ERR_INDEX_MISSING when an object to stage is missing,
 * CcpError CCP_ERR_ABORTED when `signal` aborted the copy
 */
export function openLocalInputs(store: ObjectStore, dataDir: string | undefined, stageDir: string, signal?: AbortSignal): LocalInputs {
  const here = inPlaceInputs(store, dataDir);
  if (here !== null) return here;
  const staged = new Set<string>();
  const pathOf = (key: string): string => join(stageDir, ...key.split('/'));
  /** Throws once `signal` has aborted (a function: the flag changes across the awaits of a copy). */
  const check = (key: string): void => {
    if (signal?.aborted === true) throw new CcpError('CCP_ERR_ABORTED', 'copying a store object was aborted', { detail: { key } });
  };
  const stage = async (key: string): Promise<void> => {
    check(key);
    const info = await store.head(key);
    if (info === null) throw new IndexFormatError('CCP_ERR_INDEX_MISSING', 'an object to copy locally is missing from the store', { key });
    const path = pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    // positional writes through a handle: an error (ENOSPC) rejects here instead of surfacing as a stream's
    // unhandled 'error' event, which would end the process
    const out = await open(path, 'w');
    try {
      for (let at = 0; at < info.size; at += CHUNK) {
        check(key);
        const bytes = await store.getRange(key, at, Math.min(CHUNK, info.size - at));
        for (let done = 0; done < bytes.length;) done += (await out.write(bytes, done, bytes.length - done, at + done)).bytesWritten;
      }
    } finally {
      await out.close();
    }
    staged.add(key);
  };
  return {
    inPlace: false,
    async fetch(keys) {
      // settles only when no copy is still running: the merge deletes the stage dir right after a failure
      await runLanes(keys.length, 4, async (i) => {
        const k = keys[i]!;
        if (!staged.has(k)) await stage(k);
      });
      return keys.map(pathOf);
    },
    async release(keys) {
      for (const k of keys) {
        if (!staged.delete(k)) continue;
        await rm(pathOf(k), { force: true });
      }
    },
  };
}
