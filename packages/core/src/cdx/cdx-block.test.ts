import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { CDX_EDIT_ALPHABET, editedCdxLines } from '../../../../tests/support/cdx-edits';
import { rng } from '../../../../tests/support/rng';
import { compileFilter } from '../filter/compile-filter';
import type { FilterSpecInput } from '../filter/filter-spec';
import { registeredDomainOf } from '../url';
import { parseCdxBytes, parseCdxText, type CdxBlockResult } from './cdx-block';
import { parseCdxLine } from './cdx-line';

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

  test('a 2 MB block: lines keep their numbers; a non-ASCII line goes the UTF-8 way', () => {
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

/** Filters to hold the gate to: the default, other statuses, no language rule, primary languages, mimes, domains, regexes. */
const SPECS: Array<[string, FilterSpecInput]> = [
  ['the default (status 200, contains eng)', {}],
  ['several statuses, no language rule', { status: ['200', '301', '302', '404'], languages: null }],
  ['no status rule, primary language of three', { status: null, languages: { mode: 'primary', codes: ['eng', 'fra', 'deu'] } }],
  ['contains one of two languages, a mime', { languages: { mode: 'contains', codes: ['spa', 'eng'] }, mimes: ['text/html'] }],
  ['primary English, a mime', { status: null, languages: { mode: 'primary', codes: ['eng'] }, mimes: ['text/html'] }],
  ['mime and mime-detected lists, no language rule', { status: ['200'], languages: null, mimes: ['text/html', 'application/pdf'], mimeDetected: ['text/html', 'application/xhtml+xml'] }],
  ['empty status list (drops all)', { status: [] }],
  ['empty mime list after a language rule', { status: null, mimes: [] }],
  ['odd codes: a comma, non-ASCII, a padded status', { status: ['200 ', '２００', '200'], languages: { mode: 'contains', codes: ['eng,fra', 'é', 'eng'] } }],
  ['url regexes and domain lists after the gate\'s rules', { urlRegex: '^https?://', urlRegexExclude: '\\.pdf$', domainsDeny: ['wikipedia.org'], domainsAllow: ['wikipedia.org', 'bbc.co.uk', 'github.com', 'example.com'] }],
  ['no rule the gate can decide', { status: null, languages: null, urlRegex: 'a' }],
];

/**
 * With the filter's gate, a block must give what the filter gives on every record of the line parser: the records it
 * returns are those records minus the ones the gate dropped, in order; every one it dropped is one the filter drops,
 * for the reason it counted; errors and line counts are the same.
 */
function expectGateAgreesWithFilter(text: string, spec: FilterSpecInput): { gated: number; records: number } {
  const filter = compileFilter(spec, { registeredDomainOf });
  const ref = parseCdxText(text);
  const got = parseCdxBytes(Buffer.from(text, 'utf8'), filter.lineGate);
  expect([got.lines, got.errors.map((e) => [e.lineNo, e.reason])]).toEqual([ref.lines, ref.errors.map((e) => [e.lineNo, e.reason])]);
  const missing: Record<string, number> = {};
  let j = 0;
  for (const rec of ref.records) {
    if (j < got.records.length && isDeepStrictEqual(got.records[j], rec)) {
      j++;
      continue;
    }
    const d = filter(rec);
    // a record the gate dropped: the filter drops it too, for a reason the gate decides
    if (d.keep || !(filter.lineGate?.reasons ?? []).includes(d.reason)) expect({ dropped: rec, decision: d }).toBeUndefined();
    if (!d.keep) missing[d.reason] = (missing[d.reason] ?? 0) + 1;
  }
  expect(j).toBe(got.records.length);
  expect(got.dropped ?? {}).toEqual(missing);
  return { gated: Object.values(missing).reduce((a, b) => a + b, 0), records: ref.records.length };
}

describe('parseCdxBytes with a filter\'s line gate drops exactly what the filter drops', () => {
  test.each(SPECS)('%s: every real corpus line; the gate drops every one its rules drop (all are in the fast path)', (_name, spec) => {
    const { gated } = expectGateAgreesWithFilter(`${REAL.join('\n')}\n`, spec);
    const filter = compileFilter(spec, { registeredDomainOf });
    const reasons = filter.lineGate?.reasons ?? [];
    const byRules = REAL.map((l) => filter(parseCdxLine(l))).filter((d) => !d.keep && reasons.includes(d.reason)).length;
    expect(gated).toBe(byRules);
    if (reasons.length > 0) expect(gated).toBeGreaterThan(0);
  });

  test('the default filter\'s gate drops the lines the filter drops on cc-mirror-dev, no record made for them', () => {
    const filter = compileFilter({}, { registeredDomainOf });
    for (const crawl of ['CC-MAIN-2030-40', 'CC-MAIN-2030-44']) {
      const dir = join(CORPUS, 'cc-mirror-dev/cc-index/collections', crawl, 'indexes');
      for (const shard of readdirSync(dir).filter((f) => /^cdx-\d+\.gz$/.test(f))) {
        const text = gunzipSync(readFileSync(join(dir, shard))).toString('utf8');
        const { gated, records } = expectGateAgreesWithFilter(text, {});
        expect(gated).toBeGreaterThan(0);
        const got = parseCdxBytes(Buffer.from(text, 'utf8'), filter.lineGate);
        expect(got.records.length).toBe(records - gated);
      }
    }
  });

  test.each(SPECS.map(([name, spec], i) => [name, spec, 2500 + i] as const))('%s: 3,000 randomly edited real lines (seeded)', (_name, spec, seed) => {
    // the alphabet without a newline: each edited line stays one line
    const lines = editedCdxLines(REAL, seed, 3000, CDX_EDIT_ALPHABET.filter((c) => c !== '\n'));
    expectGateAgreesWithFilter(`${lines.join('\n')}\n`, spec);
  });

  test('kept lines decoded together: runs past the 32 KB a string, cut by dropped lines, refused lines and empty lines, to the block\'s end', () => {
    const kept = REAL.filter((l) => l.includes('"status": "200"') && /"languages": "[^"]*eng/.test(l));
    const dropped = REAL.find((l) => l.includes('"status": "404"'))!;
    const refused = kept[3]!.replace('"url": "', '"url": "a\\"b'); // an escaped quote: the line parser's
    const run = (n: number, from: number): string[] => Array.from({ length: n }, (_, i) => kept[(from + i) % kept.length]!);
    const lines = [...run(250, 0), dropped, kept[0]!, refused, kept[1]!, '', kept[2]!, dropped, dropped, ...run(80, 7)];
    expect(lines.slice(0, 250).join('\n').length).toBeGreaterThan(3 << 15);
    for (const spec of [{}, { status: null, languages: null }]) {
      expectGateAgreesWithFilter(`${lines.join('\n')}\n`, spec);
      expectGateAgreesWithFilter(lines.join('\n'), spec);
      expectGateAgreesWithFilter(`${[refused, ...lines, refused].join('\n')}\n`, spec);
    }
    expect(parseCdxBytes(Buffer.from(lines.join('\n'), 'utf8'), compileFilter({}).lineGate).records.length).toBe(250 + 3 + 80 + 1);
  });

  test('status, languages, mime and mime-detected in every odd form: absent, empty, padded, commas, other lengths', () => {
    const base = REAL.find((l) => l.includes('"status": "200"') && l.includes('"languages": "eng"') && l.includes('"mime-detected"'))!;
    const variants: string[] = [];
    for (const status of [null, '', '200', '20', '2000', ' 200', '200 ', '404', '2x0', '２００']) {
      for (const languages of [null, '', 'eng', 'eng,', ',eng', 'fra,eng', 'eng,fra', 'engl', 'en', 'ENG', 'eng,fra,deu', 'é', 'eng,fra']) {
        let line = status === null ? base.replace(/"status": "200", /, '') : base.replace('"status": "200"', `"status": "${status}"`);
        line = languages === null ? line.replace(/, "languages": "eng"/, '') : line.replace('"languages": "eng"', `"languages": "${languages}"`);
        variants.push(line, line.replace(/"mime": "[^"]*"/, '"mime": "text/html"'), line.replace(/"mime": "[^"]*", /, ''), line.replace(/"mime-detected": "[^"]*"/, '"mime-detected": ""'));
      }
    }
    for (const [, spec] of SPECS) expectGateAgreesWithFilter(`${variants.join('\n')}\n`, spec);
  });
});
