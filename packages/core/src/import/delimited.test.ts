import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DelimitedReader, MAX_IMPORT_RECORD_CHARS, type DelimitedRecord } from './delimited';
import { rng } from '../../../../tests/support/rng';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');
const MiB = MAX_IMPORT_RECORD_CHARS;

/** Reads `chunks` with a fresh reader. */
function read(chunks: readonly string[], delimiter: ',' | '\t' = ','): DelimitedRecord[] {
  const r = new DelimitedReader({ delimiter });
  const out: DelimitedRecord[] = [];
  for (const c of chunks) out.push(...r.push(c));
  out.push(...r.end());
  return out;
}

/** A seeded PRNG (tests/support/rng), so a failing split can be replayed. */
const prng = (seed: number): (() => number) => rng(seed).float;


/** `text` cut at random places into pieces of 0..maxLen characters (empty chunks included on purpose). */
function randomSplit(text: string, rnd: () => number, maxLen: number): string[] {
  const out: string[] = [];
  for (let p = 0; p < text.length; ) {
    const n = Math.floor(rnd() * (maxLen + 1));
    out.push(text.slice(p, p + n));
    p += n;
  }
  return out;
}

/**
 * The reader's contract written the slow, obvious way: one character at a time over the whole text. The oracle
 * for random inputs (its record-length rule is the same; it is only ever given short texts).
 */
function reference(text: string, delim: string): DelimitedRecord[] {
  const s = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const out: DelimitedRecord[] = [];
  let line = 1;
  let i = 0;
  const lineEnd = (): void => {
    i += s[i] === '\r' && s[i + 1] === '\n' ? 2 : 1;
    line++;
  };
  while (i < s.length) {
    if (s[i] === '\n' || s[i] === '\r') {
      lineEnd();
      continue;
    }
    const start = i;
    const recLine = line;
    const fields: string[] = [];
    let field = '';
    let state: 'start' | 'unquoted' | 'quoted' | 'quote' = 'start';
    let err: string | null = null;
    let openLine = 0;
    let end = -1;
    while (i < s.length) {
      const c = s[i]!;
      if (state === 'quoted') {
        if (c === '"') state = 'quote';
        else {
          field += c;
          if (c === '\r' || (c === '\n' && s[i - 1] !== '\r')) line++;
        }
        i++;
        continue;
      }
      if (state === 'quote') {
        if (c === '"') {
          field += '"';
          state = 'quoted';
          i++;
          continue;
        }
        if (c !== delim && c !== '\r' && c !== '\n') {
          err ??= 'unexpected character after a closing quote';
          state = 'unquoted';
        }
      }
      if (c === delim) {
        fields.push(field);
        field = '';
        state = 'start';
        i++;
      } else if (c === '\r' || c === '\n') {
        end = i;
        lineEnd();
        break;
      } else if (state === 'start' && c === '"') {
        state = 'quoted';
        openLine = line;
        i++;
      } else {
        state = 'unquoted';
        field += c;
        i++;
      }
    }
    if (end < 0) end = s.length;
    fields.push(field);
    const forced = end === s.length && state === 'quoted' ? `unterminated quoted field (opened on line ${openLine})` : null;
    const error = forced ?? (end - start > MiB ? 'record over 1 MiB' : err);
    out.push(error === null ? { line: recLine, fields } : { line: recLine, error, raw: s.slice(start, Math.min(end, start + 1000)) });
  }
  return out;
}

describe('DelimitedReader: RFC 4180', () => {
  test('plain rows, header on line 1, last line without a line end', () => {
    expect(read(['url,ts\nhttps://a.example/,2024\nhttps://b.example/,2025'])).toEqual([
      { line: 1, fields: ['url', 'ts'] },
      { line: 2, fields: ['https://a.example/', '2024'] },
      { line: 3, fields: ['https://b.example/', '2025'] },
    ]);
  });

  test('quoted fields: delimiter, "" and line ends inside quotes are data; the next record counts the lines', () => {
    const text = 'a,"b,c","say ""hi""",d\r\n"multi\nline\r\nfield",x\n"",\nnext,1\n';
    expect(read([text])).toEqual([
      { line: 1, fields: ['a', 'b,c', 'say "hi"', 'd'] },
      { line: 2, fields: ['multi\nline\r\nfield', 'x'] },
      { line: 5, fields: ['', ''] },
      { line: 6, fields: ['next', '1'] },
    ]);
  });

  test('LF, CRLF and lone CR end lines; empty lines are skipped but counted', () => {
    expect(read(['a\n\nb\r\n\r\nc\rd\r\re\n\n'])).toEqual([
      { line: 1, fields: ['a'] },
      { line: 3, fields: ['b'] },
      { line: 5, fields: ['c'] },
      { line: 6, fields: ['d'] },
      { line: 8, fields: ['e'] },
    ]);
  });

  test('a BOM is dropped at the very start only', () => {
    expect(read(['\ufeffurl,x\n\ufeffa,b\n'])).toEqual([
      { line: 1, fields: ['url', 'x'] },
      { line: 2, fields: ['\ufeffa', 'b'] },
    ]);
    expect(read(['', '\ufeff', '"q"\n'])).toEqual([{ line: 1, fields: ['q'] }]);
  });

  test('empty fields, a trailing delimiter, and a quote inside an unquoted field (kept as data)', () => {
    expect(read([',,\na,\nab"c,d"e""\n  "x" ,y'])).toEqual([
      { line: 1, fields: ['', '', ''] },
      { line: 2, fields: ['a', ''] },
      { line: 3, fields: ['ab"c', 'd"e""'] },
      { line: 4, fields: ['  "x" ', 'y'] },
    ]);
  });

  test('TSV: tabs delimit, commas are data, a field starting with a quote is quoted', () => {
    expect(read(['url\ttitle\nhttps://a.example/\t"Hello, ""world""\tand more"\nx\ty"z\n'], '\t')).toEqual([
      { line: 1, fields: ['url', 'title'] },
      { line: 2, fields: ['https://a.example/', 'Hello, "world"\tand more'] },
      { line: 3, fields: ['x', 'y"z'] },
    ]);
  });

  test('real TSV (trafilatura eval source_paths.tsv) reads as its lines split on tabs', () => {
    const text = readFileSync(join(CORPUS, 'adbar-trafilatura-eval/source_paths.tsv'), 'utf8');
    const want = text.split('\n').flatMap((l, i) => (l.length === 0 ? [] : [{ line: i + 1, fields: l.split('\t') }]));
    expect(want.length).toBeGreaterThan(900);
    expect(read([text], '\t')).toEqual(want);
    expect(read(randomSplit(text, prng(7), 300), '\t')).toEqual(want);
  });
});

describe('DelimitedReader: bad records', () => {
  test('a character after a closing quote spoils its record only; the rest of it is still read by the quoting rules', () => {
    const text = 'h1,h2\n"a"b,c\n"x"y,"two\nlines"\nok,1\n';
    expect(read([text])).toEqual([
      { line: 1, fields: ['h1', 'h2'] },
      { line: 2, error: 'unexpected character after a closing quote', raw: '"a"b,c' },
      { line: 3, error: 'unexpected character after a closing quote', raw: '"x"y,"two\nlines"' },
      { line: 5, fields: ['ok', '1'] },
    ]);
  });

  test('an unterminated quoted field at the end of input names the line it opened on', () => {
    expect(read(['a,b\nc,"open\nmore\n'])).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, error: 'unterminated quoted field (opened on line 2)', raw: 'c,"open\nmore\n' },
    ]);
  });

  test('raw holds the first 1,000 characters of a bad record', () => {
    const long = `"a"b${'x'.repeat(5000)}`;
    const [rec] = read([long + '\n']);
    expect(rec).toEqual({ line: 1, error: 'unexpected character after a closing quote', raw: long.slice(0, 1000) });
  });

  test.each([
    ['one chunk', (t: string) => [t]],
    ['64 KiB chunks', (t: string) => randomSplit(t, () => 1, 65536)],
    ['random chunks', (t: string) => randomSplit(t, prng(3), 200_000)],
  ])('records over 1 MiB are refused, exactly 1 MiB is taken, and reading goes on (%s)', (_name, split) => {
    const exact = 'a,' + 'b'.repeat(MiB - 2);
    const over = '"' + 'c'.repeat(MiB / 2) + '\n' + 'd'.repeat(MiB / 2) + '",e';
    const text = `${exact}\r\n${over}\r\n${'x'.repeat(3 * MiB)}\nlast,1\n`;
    const recs = read(split(text));
    expect(recs).toHaveLength(4);
    expect(recs[0]).toEqual({ line: 1, fields: ['a', 'b'.repeat(MiB - 2)] });
    expect(recs[1]).toEqual({ line: 2, error: 'record over 1 MiB', raw: over.slice(0, 1000) });
    expect(recs[2]).toEqual({ line: 4, error: 'record over 1 MiB', raw: 'x'.repeat(1000) });
    expect(recs[3]).toEqual({ line: 5, fields: ['last', '1'] });
  });

  test('an over-long record spread over chunks is not kept whole while it is read', () => {
    const r = new DelimitedReader({ delimiter: ',' });
    const chunk = 'y'.repeat(65536);
    for (let k = 0; k < 40; k++) expect(r.push(chunk)).toEqual([]);
    // What the reader holds of the record in progress: bounded, not the 2.5 MiB pushed so far.
    const held = r as unknown as { fields: string[]; partial: string; head: string };
    expect(held.partial.length + held.fields.join('').length).toBe(0);
    expect(held.head.length).toBe(1000);
    expect(r.push('\nz\n')).toEqual([{ line: 1, error: 'record over 1 MiB', raw: 'y'.repeat(1000) }, { line: 2, fields: ['z'] }]);
  });

  test('end() is idempotent; push after end() is a programming error', () => {
    const r = new DelimitedReader({ delimiter: ',' });
    expect(r.push('a,b')).toEqual([]);
    expect(r.end()).toEqual([{ line: 1, fields: ['a', 'b'] }]);
    expect(r.end()).toEqual([]);
    expect(() => r.push('c')).toThrow('after end()');
  });
});

describe('DelimitedReader: any chunking gives the same records', () => {
  const TRICKY = [
    '\ufeffurl,title\r\nhttps://a.example/,"quoted, with ""quotes"" and\r\nCRLF"\r\n\r\nb,c\r',
    'a\r\r\n\n"x\r""\r\ny"\r\n"z"\r"open"q\r\n"',
    '"",""\n"""",x\n",\n",\r\n',
    '"a"b,"c\rd"\n""x\n\r\n"unterminated\r\n',
    'h\tv\n"t\tab"\t"\n"\tx"y\n',
  ];

  test.each(TRICKY.map((t, i) => [i, t] as const))('input %i split at every position, and into single characters', (_i, text) => {
    const delimiter = text.includes('\t') ? '\t' : ',';
    const whole = read([text], delimiter);
    expect(whole).toEqual(reference(text, delimiter));
    for (let p = 0; p <= text.length; p++) expect(read([text.slice(0, p), text.slice(p)], delimiter)).toEqual(whole);
    expect(read([...text], delimiter)).toEqual(whole);
  });

  test('random texts of delimiters, quotes, CR, LF and letters match the character-by-character reference under random chunking', () => {
    const rnd = prng(42);
    const alphabet = ['a', 'b', ',', '\t', '"', '"', '\r', '\n', '\r\n', ' '];
    for (let k = 0; k < 3000; k++) {
      const len = Math.floor(rnd() * 40);
      let text = rnd() < 0.1 ? '\ufeff' : '';
      for (let j = 0; j < len; j++) text += alphabet[Math.floor(rnd() * alphabet.length)]!;
      const delimiter = rnd() < 0.5 ? ',' : '\t';
      const want = reference(text, delimiter);
      expect([text, read([text], delimiter)]).toEqual([text, want]);
      expect([text, read(randomSplit(text, rnd, 5), delimiter)]).toEqual([text, want]);
    }
  });
});
