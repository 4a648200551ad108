import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, deflateRawSync, deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import { base32 } from '../cdx/digest';
import { HeaderList, decodeHttpBody, dechunk, iterateWarcFile, readWarcRecord, type WarcRecord } from './index';

const CORPUS = join(__dirname, '../../../..', '../shared/corpus');
const read = (p: string): Buffer => readFileSync(join(CORPUS, p));
const records = (p: string): WarcRecord[] => [...iterateWarcFile(read(p))].map((e) => e.record);
const b32 = base32;
const sha1 = (b: Uint8Array): string => `sha1:${b32(createHash('sha1').update(b).digest())}`;
const text = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

describe('real Transfer-Encoding: chunked bodies are dechunked', () => {
  test('wget stores chunked bodies raw (its payload digest covers the chunked bytes); we dechunk them', () => {
    const chunked = [...records('allenai-dolma-wget-warc/sample-0000.warc.gz'), ...records('allenai-dolma-wget-warc/sample-0001.warc.gz')].filter(
      (r) => r.http?.headers.get('transfer-encoding')?.toLowerCase() === 'chunked',
    );
    expect(chunked.length).toBeGreaterThanOrEqual(6);
    for (const r of chunked) {
      const stored = r.block.subarray(r.http!.headLength);
      expect(sha1(stored)).toBe(r.headers.get('warc-payload-digest'));
      expect(r.http!.decoding.applied).toEqual(['chunked']);
      expect(r.http!.decoding.failed).toBeUndefined();
      expect(r.http!.payload.length).toBeLessThan(stored.length);
      expect(text(r.http!.payload.subarray(0, 300)).trimStart().toLowerCase()).toMatch(/^<(!doctype|html)/);
      expect(text(r.http!.payload.subarray(-40))).toMatch(/<\/html>\s*$/i);
      // The first chunk's size line names exactly the bytes that start the payload.
      const firstSize = parseInt(/^([0-9a-f]+)/i.exec(text(stored.subarray(0, 20)))![1]!, 16);
      const afterLine = text(stored).indexOf('\n') + 1;
      expect(Buffer.from(r.http!.payload.subarray(0, firstSize)).equals(Buffer.from(stored.subarray(afterLine, afterLine + firstSize)))).toBe(true);
    }
  });

  test('warcio edge case: iana.org chunked body, bare-LF HTML inside chunks', () => {
    const [, resp] = records('webrecorder-warcio-edgecases/example-iana.org-chunked.warc');
    expect(resp!.http!.decoding).toMatchObject({ transferEncoding: ['chunked'], applied: ['chunked'] });
    expect(text(resp!.http!.payload)).toMatch(/^<!doctype html>\n<html>/);
    expect(text(resp!.http!.payload)).toMatch(/<\/html>\n$/);
    expect(text(resp!.http!.payload)).not.toMatch(/\r\n0\r\n/);
  });

  test('dechunk: bad framing is "invalid" (raw kept), a cut body is "truncated" with what was recovered', () => {
    expect(dechunk(Buffer.from('<html>not chunked'))).toEqual({ ok: false, reason: 'invalid' });
    const cut = dechunk(Buffer.from('5\r\nhello\r\n5\r\nwor'));
    expect(cut.ok).toBe(false);
    expect(!cut.ok && text(cut.partial!)).toBe('hellowor');
    const ext = dechunk(Buffer.from('5;name=v\nhello\n0\n\n'));
    expect(ext.ok && text(ext.data)).toBe('hello');
  });
});

describe('real Content-Encoding is undone once, renamed headers never', () => {
  test('warcio "bad-non-chunked": gzip Content-Encoding decoded; empty revisit untouched', () => {
    const recs = records('webrecorder-warcio-edgecases/example-bad-non-chunked.warc.gz');
    const resp = recs.find((r) => r.type === 'response')!;
    expect(resp.http!.decoding).toMatchObject({ contentEncoding: ['gzip'], applied: ['gzip'] });
    expect(text(resp.http!.payload)).toContain('<title>Example Domain</title>');
    const revisit = recs.find((r) => r.type === 'revisit')!;
    expect(revisit.http!.payload.length).toBe(0);
    expect(revisit.http!.decoding.applied).toEqual([]);
  });

  test('warcio "trunc": a cut gzip body is flagged truncated and the readable part recovered', () => {
    const resp = records('webrecorder-warcio-edgecases/example-trunc.warc').find((r) => r.type === 'response')!;
    expect(resp.http!.decoding.failed).toEqual({ encoding: 'gzip', reason: 'truncated' });
    expect(text(resp.http!.payload)).toContain('<title>Example Domain</title>');
  });

  test('ClueWeb09 says Content-Encoding: gzip over a body it stored decoded: kept raw, flagged', () => {
    const resp = records('chatnoir-resiliparse/clueweb-quirk.warc.gz').filter((r) => r.http);
    expect(resp).toHaveLength(29);
    for (const r of resp) {
      expect(r.http!.decoding.failed).toEqual({ encoding: 'gzip', reason: 'invalid' });
      expect(Buffer.from(r.http!.payload).equals(Buffer.from(r.block.subarray(r.http!.headLength)))).toBe(true);
    }
  });

  test('Common Crawl X-Crawler-Content-Encoding: gzip is not acted upon', () => {
    const rec = readWarcRecord(read('cocrawler-cdx_toolkit/decoded_ranges/CC-MAIN-20250802220907-20250803010907-00970.warc.gz.34323482-34324700'));
    expect(rec.http!.headers.get('X-Crawler-Content-Encoding')).toBe('gzip');
    expect(rec.http!.decoding).toEqual({ transferEncoding: [], contentEncoding: [], applied: [], storedDecoded: true });
    expect(text(rec.http!.payload)).toContain('Example Domain');
  });

  describe('each coding on a real page (jwarc cc.warc.gz payload)', () => {
    const page = Buffer.from(readWarcRecord(read('iipc-jwarc/cc.warc.gz')).http!.payload);
    const hdr = (ce: string, te?: string): HeaderList => new HeaderList([['Content-Type', 'text/html'], ['Content-Encoding', ce], ...(te ? [['Transfer-Encoding', te] as const] : [])]);
    const chunk = (b: Buffer): Buffer => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n0\r\n\r\n')]);
    test.each([
      ['gzip', gzipSync(page)],
      ['x-gzip', gzipSync(page)],
      ['deflate', deflateSync(page)],
      ['deflate', deflateRawSync(page)],
      ['br', brotliCompressSync(page)],
    ])('%s', (ce, body) => {
      const r = decodeHttpBody(body, hdr(ce), 1 << 26);
      expect(r.decoding.applied).toEqual([ce]);
      expect(Buffer.from(r.payload).equals(page)).toBe(true);
    });
    test('chunked then gzip, and gzip over several members', () => {
      const r = decodeHttpBody(chunk(gzipSync(page)), hdr('gzip', 'chunked'), 1 << 26);
      expect(r.decoding.applied).toEqual(['chunked', 'gzip']);
      expect(Buffer.from(r.payload).equals(page)).toBe(true);
      const two = Buffer.concat([gzipSync(page.subarray(0, 1000)), gzipSync(page.subarray(1000))]);
      expect(Buffer.from(decodeHttpBody(two, hdr('gzip'), 1 << 26).payload).equals(page)).toBe(true);
    });
    test('unsupported, corrupt and over-cap bodies keep the stored bytes and say why', () => {
      const z = gzipSync(page);
      expect(decodeHttpBody(z, hdr('zstd'), 1 << 26).decoding.failed).toEqual({ encoding: 'zstd', reason: 'unsupported' });
      const over = decodeHttpBody(z, hdr('gzip'), 1000);
      expect(over.decoding.failed).toEqual({ encoding: 'gzip', reason: 'too-large' });
      expect(Buffer.from(over.payload).equals(z)).toBe(true);
      const bad = Buffer.from(z);
      bad.fill(0x41, 20, 60);
      const corrupt = decodeHttpBody(bad, hdr('gzip'), 1 << 26);
      expect(corrupt.decoding.failed?.reason).toBe('invalid');
      expect(Buffer.from(corrupt.payload).equals(bad)).toBe(true);
      // Chunked header over a body that was never chunked: framing flagged, content coding still undone.
      const unchunked = decodeHttpBody(z, hdr('gzip', 'chunked'), 1 << 26);
      expect(unchunked.decoding).toMatchObject({ applied: ['gzip'], failed: { encoding: 'chunked', reason: 'invalid' } });
      expect(gunzipSync(z).equals(Buffer.from(unchunked.payload))).toBe(true);
    });
  });
});
