import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { hasCode } from '../errors';
import { formatCdxLine } from './cdx-format';
import { parseCdxText } from './zipnum';
import { CDX_FIELD_ORDER, cdxLineReason, parseCdxLine, parseCdxLineAt, type CdxRecord } from './cdx-line';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');
const lines = (t: string): string[] => t.split('\n').filter((l) => l.length > 0);
const readLines = (p: string): string[] => lines(readFileSync(join(CORPUS, p), 'utf8'));

function mirrorLines(crawl: string): string[] {
  const dir = join(CORPUS, 'cc-mirror-dev/cc-index/collections', crawl, 'indexes');
  return readdirSync(dir).filter((f) => /^cdx-\d+\.gz$/.test(f)).sort()
    .flatMap((f) => lines(gunzipSync(readFileSync(join(dir, f))).toString('utf8')));
}

const REAL: Array<[string, () => string[]]> = [
  ['preciz index_snippet (CC-MAIN-2021-43)', () => readLines('preciz-common_crawl/index_snippet')],
  ['preciz api_response (truncated, redirect)', () => readLines('preciz-common_crawl/api_response')],
  ['cdx_toolkit cdx-00187 (CC-MAIN-2024-30)', () => readLines('cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187')],
  ['cc-mirror-dev CC-MAIN-2030-40', () => mirrorLines('CC-MAIN-2030-40')],
  ['cc-mirror-dev CC-MAIN-2030-44', () => mirrorLines('CC-MAIN-2030-44')],
];

/** What a record must hold, computed independently with JSON.parse. */
function expected(line: string): Record<string, unknown> {
  const [surt, timestamp] = line.split(' ', 2) as [string, string];
  const j = JSON.parse(line.slice(surt.length + timestamp.length + 2)) as Record<string, string>;
  return {
    surt, timestamp, url: j.url, mime: j.mime, mimeDetected: j['mime-detected'], status: j.status, digest: j.digest,
    length: Number(j.length), offset: Number(j.offset), filename: j.filename, charset: j.charset,
    languages: j.languages ? j.languages.split(',') : [], redirect: j.redirect, encoding: j.encoding, truncated: j.truncated,
  };
}

describe('parseCdxLine / formatCdxLine on real lines', () => {
  test.each(REAL)('%s: fields match JSON.parse and formatting gives the line back byte for byte', (_n, load) => {
    const all = load();
    expect(all.length).toBeGreaterThan(90);
    for (const line of all) {
      const rec = parseCdxLine(line);
      expect(rec).toEqual(expected(line));
      expect(rec.keyOrder).toBeUndefined();
      expect(formatCdxLine(rec)).toBe(line);
    }
  });

  test('Common Crawl API output (CC-MAIN-2025-33, with encoding) follows the same key order', () => {
    const dir = join(CORPUS, 'cocrawler-cdx_toolkit/mock_responses');
    const apiLines: string[] = [];
    for (const sub of readdirSync(dir)) {
      for (const f of readdirSync(join(dir, sub))) {
        for (const ex of lines(readFileSync(join(dir, sub, f), 'utf8'))) {
          const x = JSON.parse(ex) as { url: string; response_status_code: number; response_text?: string };
          if (!x.url.includes('index.commoncrawl.org/CC-MAIN') || x.response_status_code !== 200) continue;
          apiLines.push(...lines(x.response_text ?? '').filter((l) => l.includes('"urlkey"')));
        }
      }
    }
    expect(apiLines.length).toBeGreaterThan(50);
    let withEncoding = 0;
    for (const api of apiLines) {
      // The API writes {"urlkey", "timestamp", then the file's fields}: rebuild the file line from it.
      const m = /^\{"urlkey": "([^"]*)", "timestamp": "(\d{14})", (.*)$/.exec(api);
      expect(m).not.toBeNull();
      const line = `${m![1]} ${m![2]} {${m![3]}`;
      const rec = parseCdxLine(line);
      if (rec.encoding !== undefined) withEncoding++;
      expect(rec.keyOrder).toBeUndefined();
      expect(formatCdxLine(rec)).toBe(line);
    }
    expect(withEncoding).toBeGreaterThan(0);
  });
});

test('every record owns its languages list (equal values are memoised, never shared)', () => {
  const [a, b] = readLines('preciz-common_crawl/index_snippet').map((l) => parseCdxLine(l));
  expect(a!.languages).toEqual(b!.languages);
  a!.languages.push('xxx');
  expect(b!.languages).toEqual(['eng', 'spa']);
  expect(parseCdxLine(readLines('preciz-common_crawl/index_snippet')[1]!).languages).toEqual(['eng', 'spa']);
  const none = parseCdxLine(readLines('preciz-common_crawl/api_response')[0]!);
  none.languages.push('deu');
  expect(parseCdxLine(readLines('preciz-common_crawl/api_response')[1]!).languages).toEqual([]);
});

describe('lines off the usual layout', () => {
  const base = readLines('preciz-common_crawl/index_snippet')[0]!;

  test('escaped quotes, backslashes and \\u escapes go through JSON.parse and keep their value', () => {
    const line = base.replace('billy-goats-gruff-story-masks.html"', 'billy-goats-gruff-story-masks.html?q=\\"a\\\\b\\u00e9\\n"');
    const rec = parseCdxLine(line);
    expect(rec.url.endsWith('masks.html?q="a\\bé\n')).toBe(true);
    expect(rec.length).toBe(16898);
    expect(formatCdxLine(rec, { ensureAscii: true })).toBe(line);
    expect(formatCdxLine(rec)).toBe(line.replace('\\u00e9', 'é'));
  });

  test('raw UTF-8 is kept as is (cc-mirror-dev writes IDN hosts unescaped)', () => {
    const line = mirrorLines('CC-MAIN-2030-40').find((l) => /[^\x00-\x7f]/.test(l))!;
    const rec = parseCdxLine(line);
    expect(rec.url).toMatch(/[^\x00-\x7f]/);
    expect(formatCdxLine(rec)).toBe(line);
    expect(formatCdxLine(rec, { ensureAscii: true })).toMatch(/^[^{]*\{[\x00-\x7f]*\}$/);
  });

  test('other spacing parses the same and a CR before the newline is ignored', () => {
    const compact = base.replace(/", "/g, '","').replace(/": "/g, '":"');
    expect(parseCdxLine(compact)).toEqual(parseCdxLine(base));
    expect(parseCdxLine(`${base}\r`)).toEqual(parseCdxLine(base));
  });

  test('keys out of the usual order or unknown keys still round-trip byte for byte', () => {
    const moved = base.replace(/, "charset": "UTF-8"/, '').replace(/\}$/, ', "charset": "UTF-8", "x-new": "1"}');
    const rec = parseCdxLine(moved);
    expect(rec.charset).toBe('UTF-8');
    expect(rec.extra).toEqual({ 'x-new': '1' });
    expect(rec.keyOrder).toEqual([...CDX_FIELD_ORDER.filter((k) => !['redirect', 'encoding', 'truncated', 'charset'].includes(k)), 'charset', 'x-new']);
    expect(formatCdxLine(rec)).toBe(moved);
    // A key that extends a known one is not taken for it.
    const lookalike = base.replace('"status": "200"', '"status": "200", "statusx": "7", "mime-detectedx": "8"');
    const rec2 = parseCdxLine(lookalike);
    expect([rec2.status, rec2.mimeDetected, rec2.extra]).toEqual(['200', 'application/xhtml+xml', { statusx: '7', 'mime-detectedx': '8' }]);
    expect(formatCdxLine(rec2)).toBe(lookalike);
    // Same through the JSON.parse path.
    const escaped = moved.replace('"x-new": "1"', '"x-new": "\\u0031"');
    expect(formatCdxLine(parseCdxLine(escaped))).toBe(moved);
  });
});

describe('bad lines give typed errors', () => {
  const base = readLines('cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187')[5]!;
  const cases: Array<[string, string, string]> = [
    ['no JSON part', base.slice(0, base.indexOf(' {')), 'shape'],
    ['truncated JSON', base.slice(0, base.length - 40), 'json'],
    ['JSON not an object', base.replace(/\{.*$/, '["a"]'), 'json'],
    ['short timestamp', base.replace(/ (\d{14}) /, ' 2024 '), 'timestamp'],
    ['length not a number', base.replace(/"length": "\d+"/, '"length": "12a"'), 'number'],
    ['negative offset', base.replace(/"offset": "\d+"/, '"offset": "-5"'), 'number'],
    ['number value', base.replace(/"status": "(\d+)"/, '"status": $1'), 'value_type'],
    ['no filename', base.replace(/, "filename": "[^"]*"/, ''), 'missing_field'],
    ['no url', base.replace(/"url": "[^"]*", /, ''), 'missing_field'],
    ['no offset (escaped path)', base.replace(/, "offset": "\d+"/, '').replace('"fra"', '"fr\\u0061"'), 'missing_field'],
    ['empty line', '', 'shape'],
  ];
  test.each(cases)('%s', (_name, line, reason) => {
    let caught: unknown;
    try {
      parseCdxLine(line, 42);
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'CCP_ERR_CDX_LINE')).toBe(true);
    expect(cdxLineReason(caught)).toBe(reason);
    expect((caught as { detail: { lineNo: number } }).detail.lineNo).toBe(42);
    // Messages never carry the line itself (it holds a URL).
    expect((caught as Error).message).not.toContain('missiondefrance');
  });

  // Found by the fuzz suite (#24): the any-order scan let a raw control character through to a bare SyntaxError
  // from JSON.parse, and the usual-order scan took it into the URL. Every path and key order now refuses it alike.
  describe('a raw control character in the JSON part is a json error whatever the path', () => {
    const usual = 'com,example)/ 20320611223029 {"url": "https://example.com/\u0001", "length": "10", "offset": "0", "filename": "a.warc.gz"}';
    const variants: Array<[string, string]> = [
      ['usual key order (canonical scan)', usual],
      ['unusual key order (any-order scan)', 'com,example)/ 20320611223029 {"length": "10", "url": "https://example.com/\u0001", "offset": "0", "filename": "a.warc.gz"}'],
      ['with a backslash (JSON.parse)', usual.replace('"a.warc.gz"', '"a\\u002ewarc.gz"')],
      ['other spacing (JSON.parse)', usual.replace(/": "/g, '":"')],
      ['in a key', usual.replace('"offset"', '"off\u0000set"')],
      ['a tab between tokens', usual.replace(', "length"', ',\t"length"')],
      ['a CR inside the block', usual.replace('.com/\u0001', '.com/\r')],
      ['a newline inside a lone line (the fuzz suite found it passing)', usual.replace('.com/\u0001', '.com/\n')],
      ['U+001F in the last value', usual.replace('a.warc.gz', 'a.warc.gz\u001f')],
    ];
    test.each(variants)('%s', (_name, line) => {
      expect(line).toMatch(/[\u0000-\u001f]/);
      let caught: unknown;
      try {
        parseCdxLine(line, 7);
      } catch (err) {
        caught = err;
      }
      expect(hasCode(caught, 'CCP_ERR_CDX_LINE')).toBe(true);
      expect(cdxLineReason(caught)).toBe('json');
    });

    test('in a block, the newline ending a line and a CR before it are not part of the JSON', () => {
      const ok = usual.replace('\u0001', '');
      const text = `${ok}\r\n${ok}\n`;
      const nl = text.indexOf('\n');
      expect(parseCdxLineAt(text, 0, nl, 1, false).url).toBe('https://example.com/');
      expect(parseCdxLineAt(text, nl + 1, text.length - 1, 2, false).url).toBe('https://example.com/');
      // A block: the bad line is an error of its own; escaped, CRLF and later clean lines around it still parse.
      const escaped = ok.replace('"a.warc.gz"', '"a\\u002ewarc.gz"');
      const block = parseCdxText([ok, usual, `${escaped}\r`, ok.replace('"0"', '"\u0002"'), ok, ''].join('\n'));
      expect(block.records.map((r) => r.filename)).toEqual(['a.warc.gz', 'a.warc.gz', 'a.warc.gz']);
      expect(block.errors.map((e) => [e.lineNo, e.reason])).toEqual([[2, 'json'], [4, 'json']]);
      // DEL (U+007F) and characters above are not control characters to JSON: kept.
      expect(parseCdxLine(ok.replace('.com/', '.com/\u007f\u0085')).url).toBe('https://example.com/\u007f\u0085');
    });
  });

  test('the real line itself parses (the cases above differ from it only by the breakage)', () => {
    const rec: CdxRecord = parseCdxLine(base);
    expect(rec.languages.length).toBeGreaterThan(0);
  });
});
