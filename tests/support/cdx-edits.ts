import { rng } from './rng';

/** Bytes and tokens the edits put in a CDX line: JSON punctuation, escapes, controls, digits and values the filters read. */
export const CDX_EDIT_ALPHABET = ['"', '\\', ' ', ',', ':', '{', '}', '0', '2', '4', 'e', 'n', 'g', 'é', '\t', '\r', '\u0000', '", "', '": "', 'eng', ',eng', 'text/html', '\n'];

/**
 * `n` real CDX lines (picked from `real`) with seeded random edits — a third left alone, the rest 1–3 deletions,
 * insertions or replacements from `alphabet`, most at or just after the start of a value a line gate reads (status,
 * languages, mime, mime-detected).
 */
export function editedCdxLines(real: readonly string[], seed: number, n: number, alphabet: readonly string[] = CDX_EDIT_ALPHABET): string[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => {
    let line = r.pick(real);
    for (let edits = r.chance(0.33) ? 0 : 1 + r.next(3); edits > 0; edits--) {
      const values = [...line.matchAll(/"(status|languages|mime|mime-detected)": "/g)].map((m) => m.index + m[0].length);
      const at = r.chance(0.6) && values.length > 0 ? r.pick(values) + r.next(4) : r.next(line.length + 1);
      const what = r.next(3);
      if (what === 0) line = line.slice(0, at) + line.slice(at + 1 + r.next(4));
      else if (what === 1) line = line.slice(0, at) + r.pick(alphabet) + line.slice(at);
      else line = line.slice(0, at) + r.pick(alphabet) + line.slice(at + 1);
    }
    return line;
  });
}
