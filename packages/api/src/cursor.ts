import { createHash } from 'node:crypto';
import { ApiError } from './api-error';

/**
 * The opaque paging cursor of the web-table routes: the index version the page came from, a digest of the query it
 * belongs to, and the key of the page's last row (as a web table pages by its last row key). The next page is read
 * from that version while it is kept, starting after that key, so a manifest flip never skips or repeats a row; a
 * cursor presented with another query is refused instead of answering a wrong page. Each route gives its key's shape.
 */
export interface PageCursor {
  version: string;
  /** {@link queryDigest} of the query the cursor continues. */
  query: string;
  /** The last row's key: strings, finite numbers and nulls, as the route wrote it. */
  key: (string | number | null)[];
}

const V = 1;

/** A short digest of a query's normalized terms (everything but the cursor and the page size). */
export function queryDigest(terms: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(terms)).digest('base64url').slice(0, 16);
}

/** The cursor as the `next_cursor` string (base64url JSON). */
export function encodeCursor(c: PageCursor): string {
  return Buffer.from(JSON.stringify([V, c.version, c.query, ...c.key]), 'utf8').toString('base64url');
}

/** The 400 of a cursor this API did not give out (or gave out for another route). */
export const badCursor = (): ApiError => new ApiError('CCP_ERR_API_BAD_REQUEST', 'cursor is not one this API gave out', { param: 'cursor' });

/** @throws ApiError CCP_ERR_API_BAD_REQUEST (param `cursor`) for anything {@link encodeCursor} did not make. */
export function decodeCursor(raw: string): PageCursor {
  if (raw.length === 0 || raw.length > 16_384 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw badCursor();
  let a: unknown;
  try {
    a = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw badCursor();
  }
  if (!Array.isArray(a) || a.length < 4 || a.length > 16 || a[0] !== V) throw badCursor();
  const [, version, query, ...key] = a as unknown[];
  if (typeof version !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(version) || typeof query !== 'string') throw badCursor();
  if (!key.every((k) => k === null || typeof k === 'string' || (typeof k === 'number' && Number.isFinite(k)))) throw badCursor();
  return { version, query, key: key as (string | number | null)[] };
}

/** The version a request's `cursor` parameter pins, or undefined without one. @throws ApiError for a malformed cursor */
export function cursorVersion(query: URLSearchParams): string | undefined {
  const raw = query.get('cursor');
  return raw === null || raw === '' ? undefined : decodeCursor(raw).version;
}
