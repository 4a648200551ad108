/** The columns an import reads, by header name: `url` is required, the others optional. */
export interface ImportColumnNames {
  url: string;
  ts?: string | undefined;
  status?: string | undefined;
  title?: string | undefined;
  text?: string | undefined;
}

/** The optional roles of {@link ImportColumnNames}. */
export type OptionalImportColumn = 'ts' | 'status' | 'title' | 'text';

/** Where each role sits in a header (0-based), `null` when absent; every other column is an extra, in header order. */
export interface ImportColumns {
  url: number;
  ts: number | null;
  status: number | null;
  title: number | null;
  text: number | null;
  extras: { name: string; index: number }[];
}

/** Largest extras JSON kept per row, in UTF-8 bytes. */
export const MAX_EXTRAS_JSON_BYTES = 64 * 1024;

const OPTIONAL: readonly OptionalImportColumn[] = ['ts', 'status', 'title', 'text'];
const LISTED_COLUMNS = 20;

/** `a, b, c` for an error message, the first 20 names and how many more. */
function listColumns(names: readonly string[]): string {
  const shown = names.slice(0, LISTED_COLUMNS).map((n) => JSON.stringify(n)).join(', ');
  return names.length > LISTED_COLUMNS ? `${shown} (and ${names.length - LISTED_COLUMNS} more)` : shown;
}

/** Index of `want` in `names`: the exact name first, then a case-insensitive match; an error when that is ambiguous. */
function find(names: readonly string[], want: string): number | { error: string } {
  const exact = names.indexOf(want);
  if (exact >= 0) return exact;
  const lower = want.toLowerCase();
  const hits: number[] = [];
  names.forEach((n, i) => {
    if (n.toLowerCase() === lower) hits.push(i);
  });
  if (hits.length > 1) {
    return { error: `column ${JSON.stringify(want)} matches several header columns regardless of case: ${listColumns(hits.map((i) => names[i]!))}` };
  }
  return hits.length === 1 ? hits[0]! : -1;
}

/**
 * Finds the named columns in a CSV/TSV header. Names are compared trimmed, exactly first, then regardless of case.
 * Every column not taken by a role becomes an extra; an empty header name is called `column_N` (N 1-based).
 * Pure and idempotent.
 * @param explicit the optional roles the user named (by flag): such a column must exist; a defaulted one may be absent.
 * @returns the positions, or `{ error }` naming the problem when the url column, or an explicitly named one, is not
 *   in the header (listing the header's first 20 columns), a name matches several columns only regardless of case,
 *   or the header repeats a name (the extras JSON could not hold both).
 */
export function resolveColumns(
  header: readonly string[],
  want: ImportColumnNames,
  explicit: ReadonlySet<OptionalImportColumn> = new Set(),
): ImportColumns | { error: string } {
  const names = header.map((h, i) => {
    const n = h.trim();
    return n.length === 0 ? `column_${i + 1}` : n;
  });
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const n of names) (seen.has(n) ? dups : seen).add(n);
  if (dups.size > 0) return { error: `the header repeats column names: ${listColumns([...dups])}` };

  const url = find(names, want.url.trim());
  if (typeof url !== 'number') return url;
  if (url < 0) return { error: `no url column ${JSON.stringify(want.url.trim())} in the header; its columns are ${listColumns(names)}` };
  const out: ImportColumns = { url, ts: null, status: null, title: null, text: null, extras: [] };
  for (const role of OPTIONAL) {
    const name = want[role]?.trim();
    if (name === undefined || name.length === 0) {
      if (explicit.has(role)) return { error: `the ${role} column is named but empty` };
      continue;
    }
    const at = find(names, name);
    if (typeof at !== 'number') return at;
    if (at >= 0) out[role] = at;
    else if (explicit.has(role)) return { error: `no ${role} column ${JSON.stringify(name)} in the header; its columns are ${listColumns(names)}` };
  }
  const taken = new Set([out.url, out.ts, out.status, out.title, out.text]);
  names.forEach((name, index) => {
    if (!taken.has(index)) out.extras.push({ name, index });
  });
  return out;
}

/** What {@link parseStatus} makes of a value. */
export type ImportStatus = { status: number } | { missing: true } | { error: string };

/**
 * Reads an HTTP status: an integer 100–599 as a number, bigint or digit string (spaces around it ignored).
 * `undefined`, `null`, `''`, whitespace and `-` (CDX's "no status", e.g. for revisits) → `{ missing: true }`.
 * Pure; never throws.
 */
export function parseStatus(v: unknown): ImportStatus {
  if (v === undefined || v === null) return { missing: true };
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'bigint') n = v >= 100n && v <= 599n ? Number(v) : -1;
  else if (typeof v === 'string') {
    const s = v.trim();
    if (s.length === 0 || s === '-') return { missing: true };
    if (!/^\d{1,9}$/.test(s)) return { error: 'status is not an integer' };
    n = Number(s);
  } else return { error: 'status is not an integer' };
  if (!Number.isInteger(n)) return { error: 'status is not an integer' };
  return n >= 100 && n <= 599 ? { status: n } : { error: 'status out of range 100..599' };
}

/** UTF-8 length of a string that holds no lone surrogate (JSON.stringify escapes those). */
function utf8Length(s: string): number {
  let bytes = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) bytes += c < 0x800 ? 1 : c >= 0xd800 && c <= 0xdfff ? 1 : 2; // a surrogate pair: 4 bytes for 2 units
  }
  return bytes;
}

/** A JSON.stringify replacer for bigints, which JSON lacks: a safe one becomes a number, a larger one its decimal string (no precision lost either way). */
export const bigintReplacer = (_k: string, v: unknown): unknown =>
  typeof v === 'bigint' ? (v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString()) : v;

/**
 * Serializes a row's extra columns as one JSON object, keys in the given order. Pass entries to keep a header's
 * order exactly: a JS object lists integer-like keys (`"2024"`) first. Values are stored as JSON.stringify writes them
 * (a Date as its ISO string, NaN as null), bigints as numbers or, beyond 2^53, decimal strings; an `undefined` or
 * function value leaves its key out. Pure; never throws on plain data.
 * @returns `{ json: null }` when nothing is left to store (so the column stays NULL), `{ json }` otherwise, or
 *   `{ error: 'extras over 64 KiB' }` when the JSON is over {@link MAX_EXTRAS_JSON_BYTES} UTF-8 bytes.
 */
export function extrasJson(extras: Record<string, unknown> | ReadonlyArray<readonly [string, unknown]>): { json: string | null } | { error: string } {
  const entries = Array.isArray(extras) ? (extras as ReadonlyArray<readonly [string, unknown]>) : Object.entries(extras);
  const parts: string[] = [];
  for (const [k, v] of entries) {
    // a string (every CSV value) or null needs no replacer: calling one per value was most of the cost
    const value = typeof v === 'string' || v === null ? JSON.stringify(v) : (JSON.stringify(v, bigintReplacer) as string | undefined);
    if (value !== undefined) parts.push(`${JSON.stringify(k)}:${value}`);
  }
  if (parts.length === 0) return { json: null };
  const json = `{${parts.join(',')}}`;
  if (json.length > MAX_EXTRAS_JSON_BYTES || (json.length * 3 > MAX_EXTRAS_JSON_BYTES && utf8Length(json) > MAX_EXTRAS_JSON_BYTES)) {
    return { error: 'extras over 64 KiB' };
  }
  return { json };
}
