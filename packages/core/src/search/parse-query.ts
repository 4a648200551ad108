import { SearchError, type SearchQueryProblem } from './search-error';

/** Longest accepted query, in characters (code points): the limit; longer → `CCP_ERR_SEARCH_QUERY` `too_long`. */
export const MAX_QUERY_CHARS = 1000;
/** Deepest hit a search pages to: `offset + limit` beyond it is refused (each shard ranks that many hits). */
export const MAX_SEARCH_WINDOW = 1000;
/** Most hits one page of a search returns. */
export const MAX_SEARCH_LIMIT = 100;
/** Most words a query may hold, phrases' words included: bounds the engine's work per query. */
export const MAX_QUERY_WORDS = 64;

/** A user's query as the search engine takes it. */
export interface ParsedQuery {
  /** Required phrases in the user's order, duplicates dropped; a one-word phrase is a plain term. Never empty. */
  readonly must: readonly (readonly string[])[];
  /** Excluded phrases (`-word`, `-"a phrase"`): a document holding any of them does not match. */
  readonly not: readonly (readonly string[])[];
  /**
   * The SQLite FTS5 MATCH expression: every word is an FTS5 string literal (`"…"`, a `"` doubled), joined by AND and
   * NOT only, so nothing the user typed is ever FTS5 syntax (`AND`, `OR`, `NEAR`, `*`, `^`, `col:`, parentheses).
   */
  readonly fts5: string;
  /** The query as understood, for echoing to the user: `"a phrase" word -other`. */
  readonly normalized: string;
}

// A word is searchable when it holds a character SQLite's unicode61 tokenizer keeps (its default categories L* N* Co);
// a word of punctuation only would become an empty FTS5 string, which matches nothing and confuses users.
const SEARCHABLE = /[\p{L}\p{N}\p{Co}]/u;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/gu;
const SPACE = /\s/u;
const QUOTES = new Set(['"', '\u201c', '\u201d', '\u201e', '\u00ab', '\u00bb']); // " “ ” „ « »
const MINUS = new Set(['-', '\u2212']); // - −

function refuse(reason: SearchQueryProblem, message: string, q: string): never {
  throw new SearchError('CCP_ERR_SEARCH_QUERY', message, { detail: { reason, query: q.slice(0, 200) } });
}

const literal = (words: readonly string[]): string => `"${words.join(' ').replaceAll('"', '""')}"`;
const display = (words: readonly string[]): string => (words.length === 1 ? words[0]! : `"${words.join(' ')}"`);

/**
 * Parses a user's search query: bare words are ANDed, `"quoted phrases"` must appear as written (typographic quotes
 * count; an unclosed quote runs to the end), `-word` and `-"a phrase"` exclude. Anything else is text: FTS5 operators
 * and punctuation are quoted, so the engine never sees syntax from the user (`foo-bar` and `col:x` search the words
 * `foo bar` and `col x` next to each other, as the tokenizer splits them). Control characters count as spaces. Pure.
 * @throws SearchError `CCP_ERR_SEARCH_QUERY` with `detail.reason`: `empty` (nothing but spaces), `too_long` (over
 *   {@link MAX_QUERY_CHARS} characters), `no_words` (no letter or digit anywhere), `only_exclusions` (nothing required),
 *   `too_many_words` (over {@link MAX_QUERY_WORDS}).
 */
export function parseSearchQuery(q: string): ParsedQuery {
  if (typeof q !== 'string' || q.trim() === '') refuse('empty', 'the query is empty', '');
  // code points, not UTF-16 units; a string far past the limit is refused before it is split
  if (q.length > MAX_QUERY_CHARS * 2 || [...q].length > MAX_QUERY_CHARS) {
    refuse('too_long', `the query is longer than ${MAX_QUERY_CHARS} characters`, q);
  }
  const s = q.replace(CONTROL, ' ');
  const must: string[][] = [];
  const not: string[][] = [];
  const seen = new Set<string>();
  let words = 0;
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (SPACE.test(c)) {
      i++;
      continue;
    }
    let negate = false;
    if (MINUS.has(c) && i + 1 < s.length && !SPACE.test(s[i + 1]!)) {
      negate = true;
      i++;
    }
    let phrase: string[];
    if (QUOTES.has(s[i]!)) {
      let end = i + 1;
      while (end < s.length && !QUOTES.has(s[end]!)) end++;
      phrase = s.slice(i + 1, end).split(/\s+/u).filter((w) => SEARCHABLE.test(w));
      i = end + 1;
    } else {
      let end = i;
      while (end < s.length && !SPACE.test(s[end]!) && !QUOTES.has(s[end]!)) end++;
      const w = s.slice(i, end);
      phrase = SEARCHABLE.test(w) ? [w] : [];
      i = end;
    }
    if (phrase.length === 0) continue;
    const key = `${negate ? '-' : '+'}${phrase.join(' ').toLowerCase()}`;
    if (seen.has(key)) continue;
    seen.add(key);
    words += phrase.length;
    if (words > MAX_QUERY_WORDS) refuse('too_many_words', `the query has more than ${MAX_QUERY_WORDS} words`, q);
    (negate ? not : must).push(phrase);
  }
  if (must.length === 0) {
    if (not.length > 0) refuse('only_exclusions', 'the query only excludes words: give at least one word to search for', q);
    refuse('no_words', 'the query has no letters or digits to search for', q);
  }
  const positive = must.map(literal).join(' AND ');
  const fts5 = not.length === 0 ? positive : `(${positive}) NOT (${not.map(literal).join(' OR ')})`;
  const normalized = [...must.map(display), ...not.map((p) => `-${display(p)}`)].join(' ');
  return { must, not, fts5, normalized };
}
