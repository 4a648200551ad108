import type { ObjectInfo, ObjectStore } from '@ccpipe/core';
import { StoreReadError, validateKey, validatePrefix } from './store-key';

/**
 * An ObjectStore held in a Map, for tests and `ccpipe run`. It copies bytes in and out, so callers that reuse
 * or mutate their buffers never change a stored object. Same key rules and errors as FsObjectStore.
 */
export class MemoryObjectStore implements ObjectStore {
  private readonly objects = new Map<string, Uint8Array>();

  /** Stores a copy of `data` under `key`, replacing any object there. @throws StoreKeyError */
  async put(key: string, data: Uint8Array): Promise<void> {
    validateKey(key);
    this.objects.set(key, Uint8Array.from(data));
  }

  /** A copy of the object, or null. @throws StoreKeyError */
  async get(key: string): Promise<Uint8Array | null> {
    validateKey(key);
    const v = this.objects.get(key);
    return v === undefined ? null : Uint8Array.from(v);
  }

  /** @throws StoreKeyError, StoreReadError (missing object, range past its end, negative or fractional range) */
  async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    validateKey(key);
    checkRange(key, offset, length);
    const v = this.objects.get(key);
    if (v === undefined) throw new StoreReadError('CCP_ERR_STORE_NOT_FOUND', 'object not found', { key });
    if (offset + length > v.length) {
      throw new StoreReadError('CCP_ERR_STORE_RANGE', 'range past end of object', { key, offset, length, size: v.length });
    }
    return v.slice(offset, offset + length);
  }

  /** @throws StoreKeyError */
  async head(key: string): Promise<ObjectInfo | null> {
    validateKey(key);
    const v = this.objects.get(key);
    return v === undefined ? null : { key, size: v.length };
  }

  /** Keys starting with `prefix`, sorted by UTF-16 code unit (= byte order for key characters). @throws StoreKeyError */
  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    validatePrefix(prefix);
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
    for (const key of keys) {
      const v = this.objects.get(key);
      if (v !== undefined) yield { key, size: v.length };
    }
  }

  /** Idempotent. @throws StoreKeyError */
  async delete(key: string): Promise<void> {
    validateKey(key);
    this.objects.delete(key);
  }
}

/** @throws StoreReadError when offset/length are not non-negative safe integers. */
export function checkRange(key: string, offset: number, length: number): void {
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) {
    throw new StoreReadError('CCP_ERR_STORE_RANGE', 'offset and length must be non-negative integers', { key, offset, length });
  }
}
