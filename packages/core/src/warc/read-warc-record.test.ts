import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { CcpError } from '../errors';
import { sha1Base32 } from '../cdx/digest';
import { readWarcRecord, WarcError, type WarcRecord } from './index';

const CORPUS = join(__dirname, '../../../..', '../shared/corpus');
const read = (p: string): Buffer => readFileSync(join(CORPUS, p));

const sha1b32 = sha1Base32;

function expectWarcError(fn: () => unknown, code: string): WarcError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(WarcError);
  expect(caught).toBeInstanceOf(CcpError);
  expect((caught as WarcError).code).toBe(code);
  return caught as WarcError;
}

/** CDX-API JSON lines recorded from index.commoncrawl.org, keyed by `filename offset length`. */
function recordedCdxLines(): Map<string, Record<string, string>> {
  const out = new Map<string, Record<string, string>>();
  const root = join(CORPUS, 'cocrawler-cdx_toolkit/mock_responses');
  for (const dir of readdirSync(root)) {
    for (const f of readdirSync(join(root, dir))) {
      for (const line of readFileSync(join(root, dir, f), 'utf8').split('\n')) {
        if (!line.trim()) continue;
        const ex = JSON.parse(line) as { url: string; response_status_code: number; response_text: string };
        if (!ex.url.includes('index.commoncrawl.org') || ex.response_status_code !== 200) continue;
        for (const cdx of ex.response_text.split('\n')) {
          if (!cdx.startsWith('{')) continue;
          const o = JSON.parse(cdx) as Record<string, string>;
          if (o.filename && o.offset && o.length) out.set(`${o.filename} ${o.offset} ${o.length}`, o);
        }
      }
    }
  }
  return out;
}

describe('readWarcRecord on real Common Crawl range reads', () => {
  const manifest = readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/decoded_ranges/MANIFEST.tsv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'));
  const cdx = recordedCdxLines();

  test.each(manifest.map((m) => [m[0]!, m[1]!, m[2]!, m[3]!]))('%s re-reads as the record its CDX line names', (file, path, offset, length) => {
    const bytes = read(`cocrawler-cdx_toolkit/decoded_ranges/${file}`);
    expect(bytes.length).toBe(Number(length));
    const line = cdx.get(`${path} ${offset} ${length}`);
    expect(line).toBeDefined();
    const rec = readWarcRecord(bytes);
    expect(rec.version).toBe('WARC/1.0');
    expect(rec.type).toBe('response');
    expect(rec.targetUri).toBe(line!.url);
    expect(rec.http?.status).toBe(Number(line!.status));
    expect(rec.http?.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase()).toBe(line!.mime);
    // CC stores payloads decoded; the CDX digest is over exactly those bytes: decoding twice would break it.
    expect(`sha1:${sha1b32(rec.http!.payload)}`).toBe(rec.headers.get('WARC-Payload-Digest'));
    expect(sha1b32(rec.http!.payload)).toBe(line!.digest);
    expect(rec.http!.decoding.applied).toEqual([]);
    expect(rec.block.length).toBe(rec.contentLength);
  });

  test('renamed X-Crawler-* headers mean "stored decoded" and a missing reason phrase is tolerated', () => {
    const rec = readWarcRecord(read('cocrawler-cdx_toolkit/decoded_ranges/CC-MAIN-20250804083340-20250804113340-00340.warc.gz.667474763-667481825'));
    expect(rec.http!.headers.get('x-crawler-content-encoding')).toBe('gzip');
    expect(rec.http!.decoding.storedDecoded).toBe(true);
    expect(rec.http!.decoding.contentEncoding).toEqual([]);
    expect(rec.http!.status).toBe(200);
    expect(rec.http!.reason).toBe('');
    expect(Buffer.from(rec.http!.payload.subarray(0, 200)).toString('latin1').toLowerCase()).toContain('<!doctype html');
  });

  test('a 301 keeps its Location header', () => {
    const rec = readWarcRecord(read('cocrawler-cdx_toolkit/decoded_ranges/CC-MAIN-20250804145214-20250804175214-00905.warc.gz.71720-72289'));
    expect(rec.http!.status).toBe(301);
    expect(rec.http!.reason).toBe('Moved Permanently');
    expect(rec.http!.headers.get('LOCATION')).toMatch(/^https?:\/\//);
  });

  test('whirlwind: the response member matches the real CDX line quoted in its README', () => {
    const readme = readFileSync(join(CORPUS, 'commoncrawl-whirlwind-python/README.whirlwind.md'), 'utf8');
    const cdxLine = readme.split('\n').find((l) => l.includes('"offset": "80610731"'))!;
    const line = JSON.parse(cdxLine.slice(cdxLine.indexOf('{'))) as Record<string, string>;
    const file = read('commoncrawl-whirlwind-python/whirlwind.warc.gz');
    // The excerpt re-packs members, so the crawl's offset/length do not apply here; the member does.
    const rec = readWarcRecord(file.subarray(1023, 1023 + 17351));
    expect(rec.targetUri).toBe(line.url);
    expect(rec.http!.status).toBe(Number(line.status));
    expect(`sha1:${sha1b32(rec.http!.payload)}`).toBe(line.digest);
    expect(rec.date).toBe('2024-05-18T01:58:10Z');
    expect(rec.recordId).toMatch(/^<urn:uuid:[0-9a-f-]{36}>$/);
  });

  test('jwarc cc.warc.gz and CmonCrawl mini.warc.gz response records', () => {
    const cc = readWarcRecord(read('iipc-jwarc/cc.warc.gz'));
    expect(cc.targetUri).toBe('http://commoncrawl.org/');
    expect(`sha1:${sha1b32(cc.http!.payload)}`).toBe(cc.headers.get('warc-payload-digest'));
    const mini = read('hynky1999-CmonCrawl/mini.warc.gz');
    const resp = readWarcRecord(mini.subarray(1066));
    expect(resp.targetUri).toBe('http://018hs.com/demo87/alzs.html');
    expect(resp.http!.status).toBe(200);
    // Reading the whole 3-member file as one range gives its first record (gunzip joins members).
    expect(readWarcRecord(mini).type).toBe('warcinfo');
  });

  test('bytes after the record\'s member (a too-long range) are not read', () => {
    const cc = read('iipc-jwarc/cc.warc.gz');
    for (const tail of [Buffer.from('not gzip'), Buffer.alloc(64), Buffer.from([0x1f, 0x8b, 8, 0])]) {
      const rec = readWarcRecord(Buffer.concat([cc, tail]));
      expect(rec.targetUri).toBe('http://commoncrawl.org/');
      expect(rec.block.length).toBe(rec.contentLength);
    }
  });

  test('a gzip header with an FEXTRA "sl" subfield (Heritrix style) is read', () => {
    const bytes = read('iipc-jwarc/gzip_extra_sl.warc.gz');
    expect(bytes[3]! & 0x04).toBe(0x04);
    const rec = readWarcRecord(bytes);
    expect(rec.type).toBe('warcinfo');
    expect(rec.http).toBeUndefined();
    expect(rec.block.length).toBe(rec.contentLength);
  });

  test('wget <bracketed> Target-URI is unwrapped, spaces in a URI are kept', () => {
    const wget = read('webrecorder-warcio-edgecases/example-wget-bad-target-uri.warc.gz');
    const req = readWarcRecord(wget.subarray(410, 410 + 414));
    expect(req.headers.get('WARC-Target-URI')).toBe('<http://example.com/>');
    expect(req.targetUri).toBe('http://example.com/');
    const spaced = read('webrecorder-warcio-edgecases/example-space-in-target-uri.warc.gz');
    expect(readWarcRecord(spaced.subarray(241)).targetUri).toBe('file:///example with spaces.png');
  });

  test('uncompressed input is detected by the missing gzip magic', () => {
    const rec = readWarcRecord(read('webrecorder-warcio-edgecases/example-iana.org-chunked.warc').subarray(405));
    expect(rec.type).toBe('response');
    expect(rec.targetUri).toBe('http://www.iana.org/');
  });
});

describe('readWarcRecord header handling', () => {
  const cc = (): Buffer => Buffer.from(readFileSync(join(CORPUS, 'iipc-jwarc/cc.warc.gz')));
  const plain = (): Buffer => {
    const { gunzipSync } = require('node:zlib') as typeof import('node:zlib');
    return gunzipSync(cc());
  };

  test('header names are case-insensitive; order and duplicates are kept', () => {
    const raw = plain().toString('latin1');
    const withDup = raw.replace('WARC-Type: response\r\n', 'warc-type: response\r\nX-Dup: <urn:a>\r\nx-dup: <urn:b>\r\n');
    const rec = readWarcRecord(Buffer.from(withDup, 'latin1'));
    expect(rec.type).toBe('response');
    expect(rec.headers.getAll('X-DUP')).toEqual(['<urn:a>', '<urn:b>']);
    expect(rec.headers.get('x-dup')).toBe('<urn:a>');
    const names = rec.headers.entries.map(([k]) => k);
    const at = names.indexOf('warc-type');
    expect(names.slice(at, at + 3)).toEqual(['warc-type', 'X-Dup', 'x-dup']);
  });

  test('lower-case and 1.1 version lines are accepted', () => {
    const rec = readWarcRecord(Buffer.from(plain().toString('latin1').replace(/^WARC\/1\.0/, 'warc/1.1'), 'latin1'));
    expect(rec.version).toBe('warc/1.1');
  });

  test('bare LF line ends and obs-fold continuation lines in the HTTP head', () => {
    const raw = plain().toString('latin1');
    const blockStart = raw.indexOf('\r\n\r\n') + 4;
    const headEnd = raw.indexOf('\r\n\r\n', blockStart);
    const head = raw.slice(blockStart, headEnd).replace(/\r\n/g, '\n').replace(/\nServer: ([^\n]*)/i, '\nServer: first\n  second half');
    const block = `${head}\n\n${raw.slice(headEnd + 4, raw.length - 4)}`;
    const warcHead = raw.slice(0, blockStart).replace(/Content-Length: \d+/, `Content-Length: ${Buffer.byteLength(block, 'latin1')}`);
    const rec = readWarcRecord(Buffer.from(`${warcHead}${block}\r\n\r\n`, 'latin1'));
    expect(rec.http!.status).toBe(200);
    expect(rec.http!.headers.get('server')).toBe('first second half');
    expect(`sha1:${sha1b32(rec.http!.payload)}`).toBe(rec.headers.get('warc-payload-digest'));
  });

  test('status lines: lower-case protocol, HTTP/2, reason glued to the code; four-digit codes are junk', () => {
    const raw = plain().toString('latin1');
    const withStatus = (line: string): Buffer => Buffer.from(raw.replace(/HTTP\/1\.1 200 OK/, line).replace(/Content-Length: (\d+)/, (_m, n: string) => `Content-Length: ${Number(n) + line.length - 15}`), 'latin1');
    expect(readWarcRecord(withStatus('http/1.0 404 Not Found')).http).toMatchObject({ httpVersion: 'HTTP/1.0', status: 404, reason: 'Not Found' });
    expect(readWarcRecord(withStatus('HTTP/2 204')).http).toMatchObject({ httpVersion: 'HTTP/2', status: 204, reason: '' });
    expect(readWarcRecord(withStatus('HTTP/1.0 200OK')).http).toMatchObject({ status: 200, reason: 'OK' });
    expectWarcError(() => readWarcRecord(withStatus('HTTP/1.1 2000 OK')), 'CCP_ERR_HTTP_HEAD');
  });

  test('HTTP/0.9-style junk instead of a status line is CCP_ERR_HTTP_HEAD (or httpError when lenient)', () => {
    const raw = plain().toString('latin1');
    const blockStart = raw.indexOf('\r\n\r\n') + 4;
    const block = '<html><body>no status line</body></html>\n';
    const bytes = Buffer.from(raw.slice(0, blockStart).replace(/Content-Length: \d+/, `Content-Length: ${block.length}`) + block + '\r\n\r\n', 'latin1');
    expectWarcError(() => readWarcRecord(bytes), 'CCP_ERR_HTTP_HEAD');
    const lenient = readWarcRecord(bytes, { lenientHttp: true });
    expect(lenient.http).toBeUndefined();
    expect(lenient.httpError?.code).toBe('CCP_ERR_HTTP_HEAD');
    expect(lenient.block.length).toBe(block.length);
  });

  test('typed errors: truncated gzip, corrupt CRC, short block, junk, missing Content-Length, oversize head', () => {
    expectWarcError(() => readWarcRecord(read('chatnoir-resiliparse/clipped.warc.gz')), 'CCP_ERR_WARC_TRUNCATED');
    const c = cc();
    expectWarcError(() => readWarcRecord(c.subarray(0, c.length - 100)), 'CCP_ERR_WARC_TRUNCATED');
    const bad = Buffer.from(c);
    bad[bad.length - 6]! ^= 0xff;
    expectWarcError(() => readWarcRecord(bad), 'CCP_ERR_WARC_GZIP');
    const p = plain();
    expectWarcError(() => readWarcRecord(p.subarray(0, p.length - 500)), 'CCP_ERR_WARC_TRUNCATED');
    expectWarcError(() => readWarcRecord(p.subarray(0, 40)), 'CCP_ERR_WARC_TRUNCATED');
    expectWarcError(() => readWarcRecord(Buffer.from('<html>not a warc</html>\r\n\r\n')), 'CCP_ERR_WARC_HEADER');
    expectWarcError(() => readWarcRecord(gzipSync(Buffer.from('GIF89a'.repeat(100)))), 'CCP_ERR_WARC_HEADER');
    expectWarcError(() => readWarcRecord(Buffer.from(p.toString('latin1').replace(/Content-Length: \d+\r\n/, ''), 'latin1')), 'CCP_ERR_WARC_HEADER');
    expectWarcError(() => readWarcRecord(p, { maxHeaderBytes: 64 }), 'CCP_ERR_WARC_HEADER');
    expectWarcError(() => readWarcRecord(c, { maxRecordBytes: 1000 }), 'CCP_ERR_WARC_TOO_LARGE');
    expectWarcError(() => readWarcRecord(new Uint8Array(0)), 'CCP_ERR_WARC_TRUNCATED');
  });

  test('maxPayloadBytes clips the payload and says so', () => {
    const rec: WarcRecord = readWarcRecord(cc(), { maxPayloadBytes: 1000 });
    expect(rec.http!.payload.length).toBe(1000);
    expect(rec.http!.payloadClipped).toBe(true);
    expect(readWarcRecord(cc()).http!.payloadClipped).toBe(false);
  });

  test('a Common Crawl WARC-Truncated header is exposed', () => {
    const raw = plain().toString('latin1').replace('WARC-Type: response\r\n', 'WARC-Type: response\r\nWARC-Truncated: length\r\n');
    expect(readWarcRecord(Buffer.from(raw, 'latin1')).truncated).toBe('length');
    expect(readWarcRecord(cc()).truncated).toBeUndefined();
  });
});
