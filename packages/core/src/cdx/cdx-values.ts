// Values that repeat from line to line, shared by the line parser (cdx-line.ts) and the block fast path
// (cdx-block.ts). Internal: not exported from the package.

// Three-digit statuses as shared strings: no allocation for the status of most lines.
const STATUS_STRINGS: Array<string | undefined> = new Array<string | undefined>(1000);

/** The status of three characters at `p` of `t`; three digits give a shared string. */
export function statusAt(t: string, p: number): string {
  const a = t.charCodeAt(p) - 48;
  const b = t.charCodeAt(p + 1) - 48;
  const c = t.charCodeAt(p + 2) - 48;
  if (a < 0 || a > 9 || b < 0 || b > 9 || c < 0 || c > 9) return t.slice(p, p + 3);
  const code = a * 100 + b * 10 + c;
  return (STATUS_STRINGS[code] ??= t.slice(p, p + 3));
}

// `languages` values repeat ("eng", "fra,eng", …): each distinct value is split once (a bounded memo, so a
// crawl's long tail of combinations cannot grow it without end); every record gets its own copy of the list.
// The memo's lists are private and NOT frozen: slice() of a frozen array takes V8's slow path (measured
// ~0.8 µs per line, more than the rest of the scan).
const LANGUAGE_LISTS = new Map<string, string[]>();
const MAX_LANGUAGE_LISTS = 4096;

/** A `languages` value as a new list, primary first (`[]` for an empty value). */
export function languagesOf(v: string): string[] {
  if (v.length === 0) return [];
  const list = LANGUAGE_LISTS.get(v);
  if (list !== undefined) return list.slice();
  const split = v.split(',');
  if (LANGUAGE_LISTS.size < MAX_LANGUAGE_LISTS) LANGUAGE_LISTS.set(v, split.slice());
  return split;
}
