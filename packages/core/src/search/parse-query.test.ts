import { hasCode } from '../errors';
import { MAX_QUERY_CHARS, MAX_QUERY_WORDS, parseSearchQuery } from './parse-query';
import { SearchError } from './search-error';

function reasonOf(q: string): string | undefined {
  try {
    parseSearchQuery(q);
    return undefined;
  } catch (err) {
    expect(hasCode(err, 'CCP_ERR_SEARCH_QUERY')).toBe(true);
    return (err as SearchError).detail?.reason as string;
  }
}

describe('parseSearchQuery', () => {
  it('ANDs bare words and keeps quoted phrases whole', () => {
    const p = parseSearchQuery('climate  "sea level rise" Café');
    expect(p.must).toEqual([['climate'], ['sea', 'level', 'rise'], ['Café']]);
    expect(p.fts5).toBe('"climate" AND "sea level rise" AND "Café"');
    expect(p.normalized).toBe('climate "sea level rise" Café');
  });

  it('excludes -word and -"phrase" with one NOT group', () => {
    const p = parseSearchQuery('jaguar -car -"football club"');
    expect(p.not).toEqual([['car'], ['football', 'club']]);
    expect(p.fts5).toBe('("jaguar") NOT ("car" OR "football club")');
    // a minus inside a word or alone is text, not an exclusion
    expect(parseSearchQuery('e-mail - spam').must).toEqual([['e-mail'], ['spam']]);
  });

  it('quotes every FTS5 operator and special character the user types', () => {
    const p = parseSearchQuery('AND OR NOT NEAR(a b) title:x foo* ^bar (x');
    expect(p.must.map((w) => w[0])).toEqual(['AND', 'OR', 'NOT', 'NEAR(a', 'b)', 'title:x', 'foo*', '^bar', '(x']);
    // every word is one FTS5 string literal: nothing outside quotes but the AND joining them
    expect(p.fts5.replace(/"[^"]*"/g, '').replace(/ AND /g, '')).toBe('');
  });

  it('treats an unclosed quote as a phrase to the end and typographic quotes as quotes', () => {
    expect(parseSearchQuery('"open ended').must).toEqual([['open', 'ended']]);
    expect(parseSearchQuery('“smart quotes” „low”').must).toEqual([['smart', 'quotes'], ['low']]);
    expect(parseSearchQuery('a " b').must).toEqual([['a'], ['b']]);
  });

  it('drops duplicates (case-insensitively) and words without letters or digits', () => {
    expect(parseSearchQuery('Rust rust ... -- rust* "" !!').must).toEqual([['Rust'], ['rust*']]);
  });

  it('refuses what cannot be searched with a reason', () => {
    expect(reasonOf('')).toBe('empty');
    expect(reasonOf('   \t\n')).toBe('empty');
    expect(reasonOf('"" * : -- ()')).toBe('no_words');
    expect(reasonOf('-spam -"junk mail"')).toBe('only_exclusions');
    expect(reasonOf('x'.repeat(MAX_QUERY_CHARS + 1))).toBe('too_long');
    expect(reasonOf('é'.repeat(MAX_QUERY_CHARS))).toBeUndefined(); // code points, not bytes
    expect(reasonOf(Array.from({ length: MAX_QUERY_WORDS + 1 }, (_, i) => `w${i}`).join(' '))).toBe('too_many_words');
    expect(reasonOf(null as unknown as string)).toBe('empty');
  });

  it('puts no query text in the error message', () => {
    try {
      parseSearchQuery('-secretword');
      throw new Error('not refused');
    } catch (err) {
      expect(err).toBeInstanceOf(SearchError);
      expect((err as Error).message).not.toContain('secretword');
      expect((err as SearchError).retryable).toBe(false);
    }
  });

  it('treats control characters as spaces', () => {
    expect(parseSearchQuery('a\u0000b\u0002c').must).toEqual([['a'], ['b'], ['c']]);
  });
});
