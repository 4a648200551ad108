import { iso6393 } from 'iso-639-3';

/** What the language lookups need, built on first use (≈ 7,900 codes). */
let tables: { codes: Set<string>; alias: Map<string, string> } | null = null;

function load(): NonNullable<typeof tables> {
  if (tables !== null) return tables;
  const codes = new Set<string>();
  // ISO 639-1 (`en`) and 639-2/B (`ger`, `fre`) forms people type for the 639-3 code Common Crawl writes
  const alias = new Map<string, string>();
  for (const l of iso6393) {
    codes.add(l.iso6393);
    if (l.iso6391 !== undefined) alias.set(l.iso6391, l.iso6393);
    if (l.iso6392B !== undefined && l.iso6392B !== l.iso6393) alias.set(l.iso6392B, l.iso6393);
  }
  tables = { codes, alias };
  return tables;
}

/** True when `code` is an ISO 639-3 code (lower-case, as Common Crawl writes a record's languages). Pure. */
export function isLanguageCode(code: string): boolean {
  return load().codes.has(code);
}

/**
 * Why `code` cannot match any record's languages, in one sentence, or null when it is an ISO 639-3 code. Common Crawl
 * records detected languages as ISO 639-3 codes (`eng`, `deu`), so a two-letter or made-up code keeps nothing; the
 * sentence suggests the 639-3 code for a 639-1 or 639-2/B one. Pure.
 */
export function languageCodeProblem(code: string): string | null {
  const { codes, alias } = load();
  if (codes.has(code)) return null;
  const meant = alias.get(code.toLowerCase());
  if (meant !== undefined) return `"${code}" is not an ISO 639-3 code: Common Crawl writes "${meant}"`;
  if (codes.has(code.toLowerCase())) return `"${code}" must be written in lower case ("${code.toLowerCase()}")`;
  return `"${code}" is not an ISO 639-3 language code (three letters, as Common Crawl writes them: eng, deu, fra, …)`;
}
