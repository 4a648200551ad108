// Fuzz (#24): WARC records as a CDX range read returns them (gzip members: truncated, bit-flipped, wrong
// Content-Length, split over members, gzip bombs) and HTTP payloads (chunked framing, content encodings, bombs).
// Seeded from real WARC files and pages; see harness.ts for the seed and replay variables.
import { brotliCompressSync as brotli, constants, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { decodeHtml, dechunk, iterateWarcFile, parseHttpResponse, readWarcRecord, type ReadWarcOptions } from '@ccpipe/core';
import { excerpt, explain, fuzz, fuzzTimeout, mutateBytes, type Rng } from './harness';
import { htmlPages, warcSeeds } from './seeds';

const FILE = 'tests/fuzz/warc.fuzz.test.ts';
const MiB = 2 ** 20;
// Brotli's default quality (11) costs ~100× more CPU than quality 4 for the same decoder input classes.
const brotliCompressSync = (b: Uint8Array): Buffer => brotli(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });

// Bombs are made once: 80 MiB of zeros gzip to ~80 KB.
let bombs: { warcMember: Buffer; gzipBody: Buffer; brBody: Buffer } | undefined;
function getBombs(): NonNullable<typeof bombs> {
  if (!bombs) {
    const zeros = Buffer.alloc(80 * MiB);
    const head = Buffer.from(`WARC/1.0\r\nWARC-Type: response\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: ${zeros.length}\r\n\r\n`);
    bombs = {
      warcMember: gzipSync(Buffer.concat([head, zeros]), { level: 1 }),
      gzipBody: gzipSync(zeros, { level: 1 }),
      brBody: brotliCompressSync(zeros.subarray(0, 40 * MiB)),
    };
  }
  return bombs;
}

/** A copy of a raw WARC record with its Content-Length changed (too small, too large, not a number). */
function wrongLength(r: Rng, raw: Uint8Array): Uint8Array {
  const text = Buffer.from(raw).toString('latin1');
  const m = /Content-Length:[ \t]*(\d+)/i.exec(text);
  if (!m) return raw;
  const n = Number(m[1]);
  const v = r.pick([String(n + 1 + r.next(1000)), String(Math.max(0, n - 1 - r.next(1000))), '0', '99999999999999', '-1', 'abc', '', ' 12', '1e3', String(2 ** 53)]);
  return Buffer.from(text.slice(0, m.index) + `Content-Length: ${v}` + text.slice(m.index + m[0].length), 'latin1');
}

type WarcInput = { bytes: Uint8Array; opts: ReadWarcOptions; file: boolean };

/** An HTTP response block around a real page: random codings applied for real, then framing and bytes damaged. */
function httpResponse(r: Rng): { block: Buffer; contentType: string | undefined } {
  const page = r.pick(htmlPages());
  const from = r.next(page.length);
  let body: Buffer = Buffer.from(page.slice(from, from + r.next(64 * 1024)), 'utf8');
  const headers: string[] = [];
  const charset = r.pick(['utf-8', 'UTF8', 'iso-8859-1', 'windows-1252', 'shift_jis', 'gb2312', 'utf-16', 'x-user-defined', 'bogus', '"utf-8"', '']);
  const contentType = r.chance(0.8) ? `text/html${r.chance(0.7) ? `; charset=${charset}` : ''}` : undefined;
  if (contentType) headers.push(`Content-Type: ${contentType}`);
  const ce: string[] = [];
  for (let k = r.next(3); k > 0; k--) {
    const enc = r.pick(['gzip', 'x-gzip', 'deflate', 'deflate-raw', 'br', 'identity', 'zstd', 'compress']);
    if (enc === 'gzip' || enc === 'x-gzip') body = gzipSync(body);
    else if (enc === 'deflate') body = deflateSync(body);
    else if (enc === 'deflate-raw') body = deflateRawSync(body);
    else if (enc === 'br') body = brotliCompressSync(body);
    ce.push(enc === 'deflate-raw' ? 'deflate' : enc);
  }
  if (r.chance(0.01)) {
    const b = getBombs();
    const br = r.chance(0.5);
    body = br ? b.brBody : b.gzipBody;
    ce.splice(0, ce.length, br ? 'br' : 'gzip');
  }
  if (ce.length > 0) headers.push(`${r.chance(0.1) ? 'X-Crawler-' : ''}Content-Encoding: ${ce.join(r.pick([', ', ',']))}`);
  if (r.chance(0.5)) {
    // chunked framing with random chunk sizes and extensions
    const parts: Buffer[] = [];
    for (let pos = 0; pos < body.length;) {
      const size = Math.min(body.length - pos, 1 + r.next(r.chance(0.5) ? 16 : 8192));
      parts.push(Buffer.from(`${size.toString(16)}${r.chance(0.1) ? ';ext=1' : ''}${r.chance(0.1) ? '\n' : '\r\n'}`), body.subarray(pos, pos + size), Buffer.from('\r\n'));
      pos += size;
    }
    parts.push(Buffer.from(r.chance(0.8) ? '0\r\n\r\n' : '0\r\nX-Trailer: 1\r\n\r\n'));
    body = Buffer.concat(parts);
    headers.push(`${r.chance(0.1) ? 'X-Crawler-' : ''}Transfer-Encoding: ${r.pick(['chunked', 'Chunked', 'gzip, chunked', 'chunked, chunked', 'bogus'])}`);
  } else if (r.chance(0.1)) {
    headers.push('Transfer-Encoding: chunked'); // header kept, body never chunked
  }
  const status = r.pick(['HTTP/1.1 200 OK', 'HTTP/1.0 200', 'http/2 404 Not Found', 'HTTP/1.1 200OK', 'HTTP/1.1 999 x', 'HTTP/1.1 20 OK', 'ICY 200 OK', '']);
  let block = Buffer.concat([Buffer.from(`${status}\r\n${headers.join(r.chance(0.1) ? '\n' : '\r\n')}\r\n\r\n`, 'latin1'), body]);
  if (r.chance(0.6)) block = Buffer.from(mutateBytes(r, block));
  return { block, contentType };
}

describe('fuzz: WARC and HTTP', () => {
  it('WARC records (gzip members: truncated, bit-flipped, wrong lengths, split, bombs)', async () => {
    const report = await fuzz<WarcInput>({
      name: 'warc-record',
      count: 10_000,
      generate(r) {
        const seeds = warcSeeds();
        const s = r.pick(seeds);
        const opts: ReadWarcOptions = r.chance(0.3)
          ? { maxRecordBytes: r.pick([1024, 64 * 1024, MiB]), maxPayloadBytes: r.pick([100, 64 * 1024]), maxHeaderBytes: r.pick([64, 4096]), lenientHttp: r.chance(0.5) }
          : { lenientHttp: r.chance(0.3) };
        const gz = (b: Uint8Array): Buffer => gzipSync(b, { level: 1 });
        let bytes: Uint8Array;
        switch (r.next(9)) {
          case 0: bytes = mutateBytes(r, s.member); break; // damaged compressed bytes
          case 1: bytes = gz(mutateBytes(r, s.raw)); break; // damaged record, valid gzip
          case 2: bytes = mutateBytes(r, s.raw); break; // uncompressed
          case 3: bytes = gz(wrongLength(r, s.raw)); break;
          case 4: bytes = s.member.subarray(0, r.next(s.member.length + 1)); break; // truncated
          case 5: { // one record over two members, the second maybe cut or damaged
            const cut = r.next(s.raw.length + 1);
            const second = gz(s.raw.subarray(cut));
            bytes = Buffer.concat([gz(s.raw.subarray(0, cut)), r.chance(0.5) ? mutateBytes(r, second) : second]);
            break;
          }
          case 6: // a bomb, with the default limits or small ones
            if (r.chance(0.05)) {
              bytes = getBombs().warcMember;
              break;
            }
            bytes = gz(wrongLength(r, mutateBytes(r, s.raw)));
            break;
          case 7: return { bytes: Buffer.concat(Array.from({ length: 1 + r.next(4) }, () => r.pick(seeds).member).map((m) => (r.chance(0.3) ? mutateBytes(r, m) : m))), opts, file: true };
          default: bytes = gz(mutateBytes(r, mutateBytes(r, s.raw))); break;
        }
        return { bytes, opts, file: false };
      },
      run({ bytes, opts, file }) {
        if (file) {
          for (const e of iterateWarcFile(bytes, opts)) if (e.record.http) decodeHtml(e.record.http.payload);
          return;
        }
        const rec = readWarcRecord(bytes, opts);
        if (rec.http) decodeHtml(rec.http.payload, { contentType: rec.http.headers.get('content-type') ?? '' });
      },
      describe: (i) => `${i.file ? 'file ' : ''}${JSON.stringify(i.opts)} ${i.bytes.length} bytes ${excerpt(i.bytes, 200)}`,
    });
    expect(explain(report, FILE)).toBe('');
  }, fuzzTimeout(120_000));

  it('HTTP payloads (chunked, content encodings, damaged framing, bombs)', async () => {
    const report = await fuzz<{ block: Buffer; contentType: string | undefined; maxPayload: number }>({
      name: 'http-payload',
      count: 10_000,
      generate(r) {
        return { ...httpResponse(r), maxPayload: r.chance(0.9) ? r.pick([1024, 64 * 1024, MiB]) : 32 * MiB };
      },
      run({ block, contentType, maxPayload }) {
        dechunk(block.subarray(block.indexOf('\r\n\r\n') + 4));
        const res = parseHttpResponse(block, 64 * 1024, maxPayload);
        if (res.payload.length > maxPayload) throw new Error(`payload of ${res.payload.length} bytes over the cap of ${maxPayload}`);
        decodeHtml(res.payload, contentType === undefined ? {} : { contentType });
      },
      describe: (i) => `maxPayload=${i.maxPayload} ${i.block.length} bytes ${excerpt(i.block, 300)}`,
    });
    expect(explain(report, FILE)).toBe('');
  }, fuzzTimeout(120_000));
});
