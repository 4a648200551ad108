import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { MAX_IMPORT_RECORD_CHARS } from './delimited';
import { JsonlReader, type JsonlRecord } from './jsonl';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');
const MiB = MAX_IMPORT_RECORD_CHARS;

function read(chunks: readonly string[]): JsonlRecord[] {
  const r = new JsonlReader();
  const out: JsonlRecord[] = [];
  for (const c of chunks) out.push(...r.push(c));
  out.push(...r.end());
  return out;
}

/** `text` cut into pieces of 0..maxLen characters by a seeded PRNG (mulberry32). */
function randomSplit(text: string, seed: number, maxLen: number): string[] {
  let a = seed >>> 0;
  const rnd = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out: string[] = [];
  for (let p = 0; p < text.length; ) {
    const n = Math.floor(rnd() * (maxLen + 1));
    out.push(text.slice(p, p + n));
    p += n;
  }
  return out;
}

describe('JsonlReader', () => {
  test('one object per line; blank and whitespace-only lines skipped but counted; CRLF; BOM; no final line end', () => {
    const text = '\ufeff{"url":"https://a.example/","n":1}\n\n  \t\r\n{"url":"b"}\r\n\r\n{"nested":{"x":[1,2]}}';
    expect(read([text])).toEqual([
      { line: 1, value: { url: 'https://a.example/', n: 1 } },
      { line: 4, value: { url: 'b' } },
      { line: 6, value: { nested: { x: [1, 2] } } },
    ]);
  });

  test('a line that is not JSON, or JSON that is not an object, is reported and reading goes on', () => {
    const recs = read(['{"a":1}\n{"a":}\n[1]\n42\n"s"\nnull\n{"ok":true}\n']);
    expect(recs[0]).toEqual({ line: 1, value: { a: 1 } });
    expect(recs[1]).toMatchObject({ line: 2, raw: '{"a":}' });
    expect((recs[1] as { error: string }).error).toMatch(/^not JSON: \S/);
    expect(recs.slice(2)).toEqual([
      { line: 3, error: 'not a JSON object', raw: '[1]' },
      { line: 4, error: 'not a JSON object', raw: '42' },
      { line: 5, error: 'not a JSON object', raw: '"s"' },
      { line: 6, error: 'not a JSON object', raw: 'null' },
      { line: 7, value: { ok: true } },
    ]);
  });

  test('a lone CR is JSON whitespace, not a line end', () => {
    expect(read(['{"a":\r1}\r{"b":2}\n'])).toEqual([{ line: 1, error: expect.stringMatching(/^not JSON: /), raw: '{"a":\r1}\r{"b":2}' }]);
    expect(read(['{"a":\r1}\r\n'])).toEqual([{ line: 1, value: { a: 1 } }]);
  });

  test.each([
    ['one chunk', (t: string) => [t]],
    ['64 KiB chunks', (t: string) => randomSplit(t, 1, 65536).filter((c) => c.length > 0)],
    ['random chunks', (t: string) => randomSplit(t, 9, 300_000)],
  ])('lines over 1 MiB are refused, exactly 1 MiB (CR not counted) is taken (%s)', (_name, split) => {
    const exact = `{"k":"${'a'.repeat(MiB - 8)}"}`;
    const over = `{"k":"${'b'.repeat(3 * MiB)}"}`;
    const text = `${exact}\r\n${over}\n${exact}\r\n{"last":1}`;
    expect(exact.length).toBe(MiB);
    const recs = read(split(text));
    expect(recs.map((r) => ('error' in r ? r.error : 'ok'))).toEqual(['ok', 'line over 1 MiB', 'ok', 'ok']);
    expect(recs[1]).toEqual({ line: 2, error: 'line over 1 MiB', raw: over.slice(0, 1000) });
    expect(recs[3]).toEqual({ line: 4, value: { last: 1 } });
  });

  test('a line of exactly 1 MiB whose CR ends one chunk and LF starts the next is taken', () => {
    const exact = `{"k":"${'a'.repeat(MiB - 8)}"}`;
    const want = [{ line: 1, value: { k: 'a'.repeat(MiB - 8) } }, { line: 2, value: { x: 1 } }];
    expect(read([exact + '\r', '\n{"x":1}\n'])).toEqual(want);
    expect(read(['{', exact.slice(1) + '\r', '\n{"x":1}'])).toEqual(want);
    expect(read(['{', exact.slice(1) + 'a\r', '\n{"x":1}'])[0]).toMatchObject({ line: 1, error: 'line over 1 MiB' });
  });

  test('an over-long line spread over chunks is not kept whole while it is read', () => {
    const r = new JsonlReader();
    for (let k = 0; k < 40; k++) expect(r.push('z'.repeat(65536))).toEqual([]);
    const held = r as unknown as { partial: string; head: string };
    expect(held.partial).toBe('');
    expect(held.head.length).toBe(1000);
    expect(r.push('\n{}\n')).toEqual([{ line: 1, error: 'line over 1 MiB', raw: 'z'.repeat(1000) }, { line: 2, value: {} }]);
  });

  test('any chunking gives the same records', () => {
    const text = '\ufeff{"a":"x\\ny"}\r\n\r\n{"b":[1,\r2]}\nnope\r\n \n[0]\r\n{"c":"\u00e9\ud83d\ude00"}\r';
    const whole = read([text]);
    expect(whole).toHaveLength(5);
    for (let p = 0; p <= text.length; p++) expect(read([text.slice(0, p), text.slice(p)])).toEqual(whole);
    expect(read([...text])).toEqual(whole);
    for (let seed = 1; seed < 50; seed++) expect(read(randomSplit(text, seed, 6))).toEqual(whole);
  });

  test('real JSON Lines (cdx_toolkit mock responses) read as JSON.parse of each line', () => {
    const dir = join(CORPUS, 'cocrawler-cdx_toolkit/mock_responses/test_cli');
    const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
    expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8');
      const want = text.split('\n').flatMap((l, i) => (l.trim() === '' ? [] : [{ line: i + 1, value: JSON.parse(l) as unknown }]));
      expect(read([text])).toEqual(want);
      expect(read(randomSplit(text, f.length, 4096))).toEqual(want);
    }
  });

  test('end() is idempotent; push after end() is a programming error', () => {
    const r = new JsonlReader();
    expect(r.push('{"a":1}')).toEqual([]);
    expect(r.end()).toEqual([{ line: 1, value: { a: 1 } }]);
    expect(r.end()).toEqual([]);
    expect(() => r.push('{}')).toThrow('after end()');
  });
});
