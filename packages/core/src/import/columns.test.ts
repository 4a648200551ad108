import { extrasJson, MAX_EXTRAS_JSON_BYTES, parseStatus, resolveColumns, type ImportColumnNames } from './columns';

const DEFAULTS: ImportColumnNames = { url: 'url', ts: 'timestamp', status: 'status', title: 'title', text: 'text' };

describe('resolveColumns', () => {
  test('finds the roles; defaulted ones that are absent are null; the rest are extras in header order', () => {
    expect(resolveColumns(['url', 'lang', 'timestamp', 'title', 'score'], DEFAULTS)).toEqual({
      url: 0, ts: 2, status: null, title: 3, text: null,
      extras: [{ name: 'lang', index: 1 }, { name: 'score', index: 4 }],
    });
  });

  test('names are trimmed; an exact match wins over a case-insensitive one', () => {
    expect(resolveColumns([' URL ', 'Title', 'title '], { url: 'url', title: 'title' })).toMatchObject({
      url: 0, title: 2, extras: [{ name: 'Title', index: 1 }],
    });
    expect(resolveColumns(['Url', 'TS'], { url: ' url', ts: 'ts' }, new Set(['ts']))).toMatchObject({ url: 0, ts: 1, extras: [] });
  });

  test('empty header names become column_N (1-based)', () => {
    expect(resolveColumns(['url', '', ' '], { url: 'url' })).toMatchObject({
      extras: [{ name: 'column_2', index: 1 }, { name: 'column_3', index: 2 }],
    });
  });

  test('a missing url column is an error naming it and listing the first 20 columns', () => {
    expect(resolveColumns(['link', 'when'], DEFAULTS)).toEqual({ error: 'no url column "url" in the header; its columns are "link", "when"' });
    const wide = Array.from({ length: 25 }, (_, i) => `c${i}`);
    const r = resolveColumns(wide, { url: 'address' });
    expect(r).toEqual({ error: `no url column "address" in the header; its columns are ${wide.slice(0, 20).map((c) => `"${c}"`).join(', ')} (and 5 more)` });
  });

  test('an optional column the user named is required; one left to its default may be absent', () => {
    expect(resolveColumns(['url'], { url: 'url', ts: 'fetched' }, new Set(['ts']))).toEqual({
      error: 'no ts column "fetched" in the header; its columns are "url"',
    });
    expect(resolveColumns(['url'], { url: 'url', ts: 'fetched' })).toMatchObject({ ts: null });
    expect(resolveColumns(['url'], { url: 'url', text: ' ' }, new Set(['text']))).toEqual({ error: 'the text column is named but empty' });
  });

  test('a header that repeats a name is an error naming it, whether or not the column is wanted', () => {
    expect(resolveColumns(['url', 'a', 'b', 'a ', 'b'], { url: 'url' })).toEqual({ error: 'the header repeats column names: "a", "b"' });
    expect(resolveColumns(['url', '', 'column_2'], { url: 'url' })).toEqual({ error: 'the header repeats column names: "column_2"' });
  });

  test('a name that matches several columns only regardless of case is ambiguous', () => {
    expect(resolveColumns(['URL', 'Url'], { url: 'url' })).toEqual({ error: 'column "url" matches several header columns regardless of case: "URL", "Url"' });
  });

  test('two roles may name the same column; it is not an extra', () => {
    expect(resolveColumns(['url', 'body'], { url: 'url', title: 'body', text: 'body' })).toMatchObject({ title: 1, text: 1, extras: [] });
  });
});

describe('parseStatus', () => {
  test.each<[unknown, ReturnType<typeof parseStatus>]>([
    [200, { status: 200 }],
    ['404', { status: 404 }],
    [' 301 ', { status: 301 }],
    [100, { status: 100 }],
    ['599', { status: 599 }],
    [304n, { status: 304 }],
    ['0200', { status: 200 }],
    [undefined, { missing: true }],
    [null, { missing: true }],
    ['', { missing: true }],
    ['  ', { missing: true }],
    ['-', { missing: true }],
    [99, { error: 'status out of range 100..599' }],
    ['600', { error: 'status out of range 100..599' }],
    [0, { error: 'status out of range 100..599' }],
    [1000n, { error: 'status out of range 100..599' }],
    ['99999999999', { error: 'status is not an integer' }],
    [200.5, { error: 'status is not an integer' }],
    ['200.0', { error: 'status is not an integer' }],
    ['-200', { error: 'status is not an integer' }],
    ['2xx', { error: 'status is not an integer' }],
    ['OK', { error: 'status is not an integer' }],
    [NaN, { error: 'status is not an integer' }],
    [true, { error: 'status is not an integer' }],
  ])('%p → %p', (v, want) => {
    expect(parseStatus(v)).toEqual(want);
  });
});

describe('extrasJson', () => {
  test('a JSON object with the keys in the given order', () => {
    expect(extrasJson({ lang: 'en', score: 0.5, tags: ['a'], n: null })).toEqual({ json: '{"lang":"en","score":0.5,"tags":["a"],"n":null}' });
    // Entries keep a header's order even for integer-like names, which a JS object would list first.
    expect(extrasJson([['b', '1'], ['2024', 'x'], ['a', '']])).toEqual({ json: '{"b":"1","2024":"x","a":""}' });
  });

  test('nothing to store → json null', () => {
    expect(extrasJson({})).toEqual({ json: null });
    expect(extrasJson([])).toEqual({ json: null });
    expect(extrasJson({ gone: undefined })).toEqual({ json: null });
  });

  test('bigints, Dates and escapes do not throw', () => {
    expect(extrasJson({ big: 2n ** 60n, small: 5n, nested: { n: -3n }, d: new Date(0), q: 'say "hi"\n' })).toEqual({
      json: '{"big":"1152921504606846976","small":5,"nested":{"n":-3},"d":"1970-01-01T00:00:00.000Z","q":"say \\"hi\\"\\n"}',
    });
  });

  test('over 64 KiB of UTF-8 is an error; exactly 64 KiB is kept', () => {
    const wrap = 8; // {"k":"…"}
    expect(extrasJson({ k: 'a'.repeat(MAX_EXTRAS_JSON_BYTES - wrap) })).toEqual({ json: `{"k":"${'a'.repeat(MAX_EXTRAS_JSON_BYTES - wrap)}"}` });
    expect(extrasJson({ k: 'a'.repeat(MAX_EXTRAS_JSON_BYTES - wrap + 1) })).toEqual({ error: 'extras over 64 KiB' });
    // Counted in UTF-8 bytes, not characters: é is 2 bytes, 😀 (a surrogate pair) is 4.
    const e = (MAX_EXTRAS_JSON_BYTES - wrap) / 2;
    expect(extrasJson({ k: '\u00e9'.repeat(e) })).toHaveProperty('json');
    expect(extrasJson({ k: '\u00e9'.repeat(e) + 'a' })).toEqual({ error: 'extras over 64 KiB' });
    expect(extrasJson({ k: '\u{1f600}'.repeat(e / 2) })).toHaveProperty('json');
    expect(extrasJson({ k: '\u{1f600}'.repeat(e / 2) + 'a' })).toEqual({ error: 'extras over 64 KiB' });
    expect(extrasJson({ k: '\u4e2d'.repeat(30000) })).toEqual({ error: 'extras over 64 KiB' });
  });
});
