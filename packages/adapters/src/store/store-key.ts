import { CcpError } from '@ccpipe/core';

/** A key or prefix the ObjectStore refuses (`CCP_ERR_STORE_KEY`): never retryable. */
export class StoreKeyError extends CcpError {
  constructor(reason: string, key: string) {
    super('CCP_ERR_STORE_KEY', `invalid object key: ${reason}`, { retryable: false, detail: { key: key.slice(0, 300) } });
  }
}

/** An object a ranged read needed is missing or too short (`CCP_ERR_STORE_NOT_FOUND`, `CCP_ERR_STORE_RANGE`). */
export class StoreReadError extends CcpError {
  constructor(code: 'CCP_ERR_STORE_NOT_FOUND' | 'CCP_ERR_STORE_RANGE', message: string, detail: Record<string, unknown>) {
    super(code, message, { retryable: false, detail });
  }
}

const SEGMENT = /^[A-Za-z0-9._=-]+$/;

/**
 * Checks an object key: `/`-separated segments of `[A-Za-z0-9._=-]`, no empty, `.` or `..` segment, not absolute,
 * no backslash. Because `~` is not a key character, files whose name holds one (the stores' temp files) can never
 * be mistaken for objects.
 * @throws StoreKeyError when the key is not valid.
 */
export function validateKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new StoreKeyError('empty', String(key));
  if (key.length > 1024) throw new StoreKeyError('longer than 1024 characters', key);
  if (key.includes('\\')) throw new StoreKeyError('backslash', key);
  if (key.startsWith('/')) throw new StoreKeyError('absolute', key);
  for (const seg of key.split('/')) checkSegment(seg, key);
}

/**
 * Checks a list prefix: empty, or a key whose last segment may be partial or empty (`"lake/"`, `"lake/part-"`).
 * @throws StoreKeyError when the prefix could never match a valid key.
 */
export function validatePrefix(prefix: string): void {
  if (prefix === '') return;
  if (typeof prefix !== 'string') throw new StoreKeyError('not a string', String(prefix));
  if (prefix.includes('\\')) throw new StoreKeyError('backslash', prefix);
  if (prefix.startsWith('/')) throw new StoreKeyError('absolute', prefix);
  const segs = prefix.split('/');
  const last = segs.pop() ?? '';
  for (const seg of segs) checkSegment(seg, prefix);
  if (last !== '' && !SEGMENT.test(last)) throw new StoreKeyError('bad character', prefix);
}

function checkSegment(seg: string, key: string): void {
  if (seg === '') throw new StoreKeyError('empty segment', key);
  if (seg === '.' || seg === '..') throw new StoreKeyError('dot segment', key);
  if (!SEGMENT.test(seg)) throw new StoreKeyError('bad character', key);
}

/** True when `name` (one path segment) can be part of a valid key; temp files (`~`) are not. */
export function isKeySegment(name: string): boolean {
  return name !== '.' && name !== '..' && SEGMENT.test(name);
}
