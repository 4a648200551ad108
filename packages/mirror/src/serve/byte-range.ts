/** What to send for a `Range` request header against a file of a known size. */
export type RangeDecision =
  /** No usable Range (absent, other unit, bad syntax, or several ranges): send the whole file with 200. */
  | { kind: 'full'; reason: 'absent' | 'invalid' | 'multiple' }
  /** One satisfiable range, inclusive bounds already clamped to the file: send 206. */
  | { kind: 'partial'; start: number; end: number }
  /** A well-formed single range that selects no byte of the file: send 416 with `bytes *\/size`. */
  | { kind: 'unsatisfiable' };

const SPEC = /^(\d*)-(\d*)$/;

/**
 * Decides how to answer a `Range` header, the way S3 (data.commoncrawl.org) does for the forms the
 * pipeline sends: `bytes=a-b`, `bytes=a-`, `bytes=-n`. Following RFC 9110 §14.2, a header we cannot
 * parse is ignored (200 full) rather than rejected; several ranges are also answered with the full
 * body, as S3 does, instead of a multipart/byteranges reply.
 *
 * Pure and total: never throws. `size` must be a non-negative integer.
 */
export function decideRange(header: string | undefined, size: number): RangeDecision {
  if (header === undefined || header.trim() === '') return { kind: 'full', reason: 'absent' };
  const eq = header.indexOf('=');
  if (eq < 0 || header.slice(0, eq).trim().toLowerCase() !== 'bytes') return { kind: 'full', reason: 'invalid' };
  const specs = header.slice(eq + 1).split(',').map((s) => s.trim());
  if (specs.length !== 1) return { kind: 'full', reason: 'multiple' };
  const m = SPEC.exec(specs[0] ?? '');
  if (!m) return { kind: 'full', reason: 'invalid' };
  const first = m[1] ?? '';
  const last = m[2] ?? '';
  if (first === '' && last === '') return { kind: 'full', reason: 'invalid' };
  if (first === '') {
    // Suffix range: the last n bytes.
    const n = Number(last);
    if (!Number.isSafeInteger(n)) return { kind: 'full', reason: 'invalid' };
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? Number.MAX_SAFE_INTEGER : Number(last);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) return { kind: 'full', reason: 'invalid' };
  if (end < start) return { kind: 'full', reason: 'invalid' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(end, size - 1) };
}
