/** Metadata of one stored object. */
export interface ObjectInfo {
  key: string;
  size: number;
}

/**
 * The data store (lake, markers, checkpoints, index versions) behind one small interface, so a local directory and
 * an S3-compatible bucket serve alike. Keys are `/`-separated relative paths of `[A-Za-z0-9._=-]` segments.
 */
export interface ObjectStore {
  /** Writes the whole object atomically: readers see the old object or the new one, never a part. */
  put(key: string, data: Uint8Array): Promise<void>;
  /** The whole object, or null when it does not exist. */
  get(key: string): Promise<Uint8Array | null>;
  /** Bytes [offset, offset + length) of an object; throws when it does not exist or is shorter. */
  getRange(key: string, offset: number, length: number): Promise<Uint8Array>;
  /** Size of an object, or null when it does not exist. */
  head(key: string): Promise<ObjectInfo | null>;
  /** Every object whose key starts with `prefix`, in lexicographic key order. */
  list(prefix: string): AsyncIterable<ObjectInfo>;
  /** Removes an object; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
}
