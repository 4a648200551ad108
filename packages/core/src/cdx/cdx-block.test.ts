import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { rng } from '../../../../tests/support/rng';
import { parseCdxBytes, parseCdxText, type CdxBlockResult } from './cdx-block';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');
const readLines = (p: string): string[] => readFileSync(join(CORPUS, p), 'utf8').split('\n').filter((l) => l.length > 0);
const REAL = [
  ...readLines('cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'),
  ...readLines('preciz-common_crawl/index_snippet'),
  ...readLines('preciz-common_crawl/api_response'),
];

/** What a block result says, comparable with toStrictEqual (errors by line number and reason). */
const view = (r: CdxBlockResult) => ({ records: r.records, errors: r.errors.map((e) => [e.lineNo, e.reason]), lines: r.lines });

/**
 * The fast path over bytes must answer exactly as the general path over the UTF-8 text (parseCdxLineAt on every
 * line): same records, property for property, same errors on the same lines.
 */
function expectSameAsGeneral(text: string): CdxBlockResult {
  const got = parseCdxBytes(Buffer.from(text, 'utf8'));
  expect(view(got)).toStrictEqual(view(parseCdxText(text)));
  return got;
}

describe('parseCdxBytes (the block fast path) answers as the general line parser', () => {
  test('every real corpus line, as one block, with and without a final newline and with CRLF', () => {
    const r = expectSameAsGeneral(`${REAL.join('\n')}\n`);
    expect([r.records.length, r.errors.length]).toEqual([REAL.length, 0]);
    expectSameAsGeneral(REAL.join('\n'));
    expectSameAsGeneral(`${REAL.slice(0, 50).join('\r\n')}\r\n\r\n\n`);
  });

  test('a 2 MB block: lines across the 64 KB decode pieces keep their numbers; one non-ASCII piece goes the UTF-8 way', () => {
    const lines = Array.from({ length: 4000 }, (_, i) => REAL[i % REAL.length]!);
    lines[1777] = lines[1777]!.replace('"url": "', '"url": "é');
    lines[3001] = lines[3001]!.replace('"length": "', '"length": "x');
    const r = expectSameAsGeneral(`${lines.join('\n')}\n`);
    expect(r.errors.map((e) => [e.lineNo, e.reason])).toEqual([[3002, 'number']]);
    expect(r.records[1777]!.url.startsWith('é')).toBe(true);
  });

  const base = REAL[5]!;
  const odd: Array<[string, string]> = [
    ['escaped quote, backslash, \\u and \\/ in the url', base.replace('"url": "', '"url": "a\\"b\\\\c\\u00e9\\/')],
    ['raw tab in a value (a json error)', base.replace('"url": "', '"url": "a\tb')],
    ['raw tab between the timestamp and the JSON', base.replace(' {', '\t{')],
    ['raw tab in the SURT (kept)', `a\t${base}`],
    ['compact separators', base.replace(/", "/g, '","').replace(/": "/g, '":"')],
    ['space before the closing brace', base.replace(/"\}$/, '" }')],
    ['trailing space after the line', `${base} `],
    ['keys out of order', base.replace(/, "charset": "[^"]*"/, '').replace(/\}$/, ', "charset": "UTF-8"}')],
    ['unknown key at the end', base.replace(/\}$/, ', "x-new": "1"}')],
    ['unknown key that extends a known one', base.replace('"status": "200"', '"status": "200", "statusx": "7"')],
    ['a duplicated key', base.replace('"status": "200"', '"status": "200", "status": "404"')],
    ['no url', base.replace(/"url": "[^"]*", /, '')],
    ['empty url', base.replace(/"url": "[^"]*"/, '"url": ""')],
    ['no filename', base.replace(/, "filename": "[^"]*"/, '')],
    ['no length', base.replace(/, "length": "[^"]*"/, '')],
    ['empty length', base.replace(/"length": "[^"]*"/, '"length": ""')],
    ['length with a sign', base.replace(/"length": "/, '"length": "+')],
    ['length of 16 digits', base.replace(/"length": "[^"]*"/, '"length": "1234567890123456"')],
    ['length of 15 digits with leading zeros', base.replace(/"length": "[^"]*"/, '"length": "000000000000042"')],
    ['a letter instead of the quote closing the length', base.replace(/("length": "\d+)"/, '$1x')],
    ['a comma instead of the quote closing the offset', base.replace(/("offset": "\d+)"/, '$1,')],
    ['a letter instead of the quote closing the url', base.replace(/("url": "[^"]*)"/, '$1x')],
    ['offset with a space', base.replace(/"offset": "/, '"offset": " ')],
    ['status that is not three digits', base.replace('"status": "200"', '"status": "-"')],
    ['status of four digits', base.replace('"status": "200"', '"status": "2000"')],
    ['status of three non-digits', base.replace('"status": "200"', '"status": "2x0"')],
    ['empty languages', base.replace(/"languages": "[^"]*"/, '"languages": ""')],
    ['no languages', base.replace(/, "languages": "[^"]*"/, '')],
    ['only url, length, offset, filename', base.replace(/, "(mime|mime-detected|status|digest|charset|languages)": "[^"]*"/g, '')],
    ['every optional key', base.replace(/, "charset"/, ', "redirect": "https://x/", "charset"').replace(/\}$/, ', "encoding": "gzip", "truncated": "length"}')],
    ['timestamp of 13 digits', base.replace(/ (\d{13})\d /, ' $1 ')],
    ['timestamp of 15 digits', base.replace(/ (\d{14}) /, ' $10 ')],
    ['timestamp with a letter', base.replace(/ (\d{13})\d /, ' $1x ')],
    ['no JSON', base.slice(0, base.indexOf(' {'))],
    ['JSON cut short', base.slice(0, base.indexOf('"filename"'))],
    ['JSON cut inside a value', base.slice(0, base.indexOf('"filename"') + 20)],
    ['JSON cut after a key pattern', base.slice(0, base.indexOf('"filename"') + 14)],
    ['empty object', base.slice(0, base.indexOf(' {') + 2).concat('}')],
    ['a quote missing before the brace', base.replace(/"\}$/, '}')],
    ['an array', base.slice(0, base.indexOf(' {') + 1).concat('["a"]')],
    ['empty SURT', base.slice(base.indexOf(' '))],
    ['a number value', base.replace(/"length": "(\d+)"/, '"length": $1')],
    ['DEL and a brace inside the url', base.replace('"url": "', '"url": "\x7f}{')],
  ];

  test.each(odd)('%s: same record or same error as the general path, alone and amid plain lines', (_name, line) => {
    expectSameAsGeneral(`${line}\n`);
    expectSameAsGeneral(`${REAL.slice(0, 3).join('\n')}\n${line}\n${REAL.slice(3, 6).join('\n')}\n`);
    expectSameAsGeneral(line);
  });

  test('every ASCII byte in every place of the timestamp and of the length (digits are read 4 bytes at a time)', () => {
    const ts = / (\d{14}) /.exec(base)!;
    const len = /"length": "(\d+)"/.exec(base)!;
    const lines: string[] = [];
    for (let c = 0; c < 128; c++) {
      if (c === 10) continue;
      for (let i = 0; i < 14; i++) lines.push(base.slice(0, ts.index + 1 + i) + String.fromCharCode(c) + base.slice(ts.index + 2 + i));
      const at = len.index + 11;
      for (let i = 0; i < len[1]!.length; i++) lines.push(base.slice(0, at + i) + String.fromCharCode(c) + base.slice(at + i + 1));
    }
    const r = expectSameAsGeneral(`${lines.join('\n')}\n`);
    expect(r.records.length).toBe(10 * (14 + len[1]!.length)); // a digit for a digit
  });

  test.each([['anywhere', 2025], ['on the JSON punctuation', 2026]])('random byte edits of real lines %s (seeded) parse the same as on the general path', (where, seed) => {
    const r = rng(seed as number);
    const alphabet = ['"', '\\', ' ', ',', ':', '{', '}', '0', '7', 'a', 'é', '\t', '\r', '\n', '\u0000', '", "', '": "'];
    const lines: string[] = [];
    for (let i = 0; i < 6000; i++) {
      let line = r.pick(REAL);
      for (let edits = 1 + r.next(3); edits > 0; edits--) {
        const punctuation = [...line.matchAll(/["{}:, ]/g)].map((m) => m.index);
        const at = where === 'anywhere' ? r.next(line.length + 1) : r.pick(punctuation);
        const what = r.next(3);
        if (what === 0) line = line.slice(0, at) + line.slice(at + 1 + r.next(4));
        else if (what === 1) line = line.slice(0, at) + r.pick(alphabet) + line.slice(at);
        else line = line.slice(0, at) + r.pick(alphabet) + line.slice(at + 1);
      }
      lines.push(line);
    }
    const got = expectSameAsGeneral(`${lines.join('\n')}\n`);
    // the edits hit every path: records, errors of several kinds
    expect(got.records.length).toBeGreaterThan(200);
    expect(new Set(got.errors.map((e) => e.reason)).size).toBeGreaterThan(3);
  });
});
