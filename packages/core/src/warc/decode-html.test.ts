import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { charsetFromContentType, decodeBytes, decodeHtml, iterateWarcFile, resolveCharset, sniffMetaCharset, type WarcRecord } from './index';

const CORPUS = join(__dirname, '../../../..', '../shared/corpus');
const responses = (p: string): WarcRecord[] =>
  [...iterateWarcFile(readFileSync(join(CORPUS, p)))].map((e) => e.record).filter((r) => r.http !== undefined);
const latin1 = (s: string): Buffer => Buffer.from(s, 'latin1');

describe('decodeHtml precedence: BOM, header, meta, fallback', () => {
  // "café" in windows-1252 is 63 61 66 E9; in UTF-8 63 61 66 C3 A9.
  const cafe1252 = latin1('<p>caf\xe9</p>');
  const cafeUtf8 = Buffer.from('<p>café</p>', 'utf8');

  test('a BOM beats the header and the meta tag', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<meta charset="windows-1252"><p>café</p>', 'utf8')]);
    expect(decodeHtml(bytes, { contentType: 'text/html; charset=iso-8859-1' })).toEqual({ text: '<meta charset="windows-1252"><p>café</p>', charset: 'utf-8', source: 'bom' });
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<p>hé</p>', 'utf16le')]);
    expect(decodeHtml(le, { contentType: 'text/html; charset=utf-8' })).toMatchObject({ text: '<p>hé</p>', charset: 'utf-16le', source: 'bom' });
  });

  test('the header charset beats the meta tag; WHATWG labels map (iso-8859-1 → windows-1252)', () => {
    const bytes = Buffer.concat([latin1('<meta charset="utf-8">'), cafe1252, latin1('\x93q\x94')]);
    const d = decodeHtml(bytes, { contentType: 'text/html; charset="ISO-8859-1"' });
    expect(d).toMatchObject({ charset: 'windows-1252', source: 'header' });
    // 0x93/0x94 are curly quotes in windows-1252, control characters in real ISO-8859-1.
    expect(d.text).toContain('café</p>“q”');
  });

  test('meta charset and meta http-equiv are honoured when the header has none', () => {
    expect(decodeHtml(Buffer.concat([latin1('<html><head><META CHARSET=windows-1252>'), cafe1252]), { contentType: 'text/html' })).toMatchObject({ charset: 'windows-1252', source: 'meta' });
    const eq = Buffer.concat([latin1(`<meta http-equiv='Content-Type' content='text/html; charset=koi8-r'>`), Buffer.from([0xc1, 0xc2])]);
    expect(decodeHtml(eq)).toMatchObject({ charset: 'koi8-r', source: 'meta' });
    expect(decodeHtml(eq).text.endsWith('аб')).toBe(true);
    // A charset inside a comment is not a declaration.
    expect(sniffMetaCharset(latin1('<!-- <meta charset="koi8-r"> --><p>x</p>'))).toBeUndefined();
    // Only the first 4 KB are searched.
    expect(sniffMetaCharset(Buffer.concat([Buffer.alloc(5000, 0x20), latin1('<meta charset="koi8-r">')]))).toBeUndefined();
  });

  test('meta utf-16 means utf-8 and x-user-defined means windows-1252 (HTML standard)', () => {
    expect(sniffMetaCharset(latin1('<meta charset="utf-16le">'))).toBe('utf-8');
    expect(sniffMetaCharset(latin1('<meta charset="x-user-defined">'))).toBe('windows-1252');
  });

  test('unknown or unsupported labels fall through to the next rule', () => {
    expect(resolveCharset('no-such-charset')).toBeUndefined();
    expect(resolveCharset('hz-gb-2312')).toBeUndefined();
    expect(resolveCharset('latin1')).toBe('windows-1252');
    expect(resolveCharset('GB2312')).toBe('gbk');
    expect(decodeHtml(Buffer.concat([latin1('<meta charset="windows-1252">'), cafe1252]), { contentType: 'text/html; charset=bogus' })).toMatchObject({ source: 'meta', charset: 'windows-1252' });
    expect(decodeHtml(cafeUtf8, { contentType: 'text/html; charset=bogus' })).toEqual({ text: '<p>café</p>', charset: 'utf-8', source: 'fallback' });
  });

  test('windows-1252 bytes 0x80-0x9F decode per the WHATWG table (Node 20.18.3+ TextDecoder gets them wrong)', () => {
    const all = Buffer.from(Array.from({ length: 32 }, (_, i) => 0x80 + i));
    const text = decodeBytes(all, 'windows-1252');
    expect(text).toHaveLength(32);
    expect(text.slice(0, 4)).toBe('\u20ac\u0081\u201a\u0192');
    expect(text.slice(0x13, 0x15)).toBe('\u201c\u201d');
    expect(text.charAt(31)).toBe('\u0178');
    expect(decodeBytes(latin1('caf\xe9'), 'windows-1252')).toBe('café');
    expect(decodeBytes(Buffer.from([0xc1, 0xc2]), 'koi8-r')).toBe('аб');
  });

  test('fallback: utf-8 when the bytes are valid utf-8, else windows-1252', () => {
    expect(decodeHtml(cafeUtf8)).toEqual({ text: '<p>café</p>', charset: 'utf-8', source: 'fallback' });
    expect(decodeHtml(cafe1252)).toEqual({ text: '<p>café</p>', charset: 'windows-1252', source: 'fallback' });
    expect(decodeHtml(new Uint8Array(0))).toEqual({ text: '', charset: 'utf-8', source: 'fallback' });
  });

  test('charsetFromContentType reads quoted and unquoted parameters', () => {
    expect(charsetFromContentType('text/html; charset=UTF-8')).toBe('UTF-8');
    expect(charsetFromContentType('text/html;charset="shift_jis"; q=1')).toBe('shift_jis');
    expect(charsetFromContentType('text/html')).toBeUndefined();
    expect(charsetFromContentType(undefined)).toBeUndefined();
  });
});

describe('decodeHtml on real non-UTF-8 pages', () => {
  const cc2020 = responses('chatnoir-resiliparse/warcfile.warc.gz');
  const byUri = (prefix: string): WarcRecord => cc2020.find((r) => r.targetUri!.startsWith(prefix))!;

  test('windows-1251 from the HTTP header (01spb.ru)', () => {
    const r = byUri('http://01spb.ru/');
    const d = decodeHtml(r.http!.payload, { contentType: r.http!.headers.get('content-type') });
    expect(d).toMatchObject({ charset: 'windows-1251', source: 'header' });
    expect(d.text).toMatch(/[а-яА-Я]{4,}/);
    expect(d.text).not.toContain('\ufffd');
  });

  test('gb2312 pages, declared in the header or only in a meta tag, decode as gbk', () => {
    const withMeta = cc2020.filter((r) => !/charset/i.test(r.http!.headers.get('content-type') ?? '') && /charset=["']?gb2312/i.test(Buffer.from(r.http!.payload.subarray(0, 4096)).toString('latin1')));
    const withHeader = cc2020.filter((r) => /charset=gb2312/i.test(r.http!.headers.get('content-type') ?? ''));
    expect(withMeta.length).toBeGreaterThan(0);
    expect(withHeader.length).toBeGreaterThan(0);
    for (const [rs, source] of [[withMeta, 'meta'], [withHeader, 'header']] as const) {
      for (const r of rs) {
        const d = decodeHtml(r.http!.payload, { contentType: r.http!.headers.get('content-type') });
        expect(d).toMatchObject({ charset: 'gbk', source });
        expect(d.text).toMatch(/[\u4e00-\u9fff]{4,}/);
        // Read as UTF-8 these bytes would be mostly replacement characters.
        expect(new TextDecoder('utf-8').decode(r.http!.payload)).toContain('\ufffd');
      }
    }
  });

  test('windows-1252 declared in a meta tag, with a 0x92 apostrophe (live-radsport.ch)', () => {
    const r = byUri('http://06.live-radsport.ch/fahrerstatistik_801/');
    expect(r.http!.headers.get('content-type')).not.toMatch(/charset/i);
    expect(r.http!.payload.some((b) => b === 0x92)).toBe(true);
    const d = decodeHtml(r.http!.payload, { contentType: r.http!.headers.get('content-type') });
    expect(d).toMatchObject({ charset: 'windows-1252', source: 'meta' });
    expect(d.text).toContain('Giro d\u2019Italia');
    expect(d.text).not.toMatch(/[\x80-\x9f]/);
  });

  test('ClueWeb09 EUC-JP pages decode to Japanese text', () => {
    const r = responses('chatnoir-resiliparse/clueweb-quirk.warc.gz')[0]!;
    const d = decodeHtml(r.http!.payload, { contentType: r.http!.headers.get('content-type') });
    expect(d).toMatchObject({ charset: 'euc-jp', source: 'header' });
    expect(d.text).toMatch(/[\u3040-\u30ff\u4e00-\u9fff]{4,}/);
  });

  test('a UTF-8 BOM page that also has a header charset (CC 2020) decodes with the BOM stripped', () => {
    const r = cc2020.find((x) => x.http!.payload[0] === 0xef && x.http!.payload[1] === 0xbb)!;
    const d = decodeHtml(r.http!.payload, { contentType: r.http!.headers.get('content-type') });
    expect(d.source).toBe('bom');
    expect(d.text.charCodeAt(0)).not.toBe(0xfeff);
  });
});
