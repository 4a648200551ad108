import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { iterateWarcFile, readWarcRecord, readWarcRecordWithWarcio, WarcError } from './index';

const CORPUS = join(__dirname, '../../../..', '../shared/corpus');
const read = (p: string): Buffer => readFileSync(join(CORPUS, p));

describe('readWarcRecordWithWarcio (warcio.js, selectable alternative)', () => {
  test('loads under jest through the package\'s CommonJS entry', () => {
    const w = require('warcio') as { WARCParser?: unknown };
    expect(typeof w.WARCParser).toBe('function');
  });

  test('agrees with readWarcRecord on every member of a real CC file', async () => {
    const file = read('chatnoir-resiliparse/warcfile.warc.gz');
    let compared = 0;
    for (const e of iterateWarcFile(file)) {
      const member = file.subarray(e.offset, e.offset + e.length);
      const ours = readWarcRecord(member);
      const theirs = await readWarcRecordWithWarcio(member);
      expect(theirs.type).toBe(ours.type);
      expect(theirs.targetUri).toBe(ours.targetUri);
      expect(theirs.recordId).toBe(ours.recordId);
      expect(theirs.contentLength).toBe(ours.contentLength);
      expect(theirs.headers.get('WARC-Date')).toBe(ours.date);
      if (ours.type === 'response') {
        expect(theirs.http?.status).toBe(ours.http!.status);
        expect(theirs.http?.headers.get('content-type')).toBe(ours.http!.headers.get('content-type'));
        expect(Buffer.from(theirs.http!.payload).equals(Buffer.from(ours.http!.payload))).toBe(true);
        compared++;
      }
      if (ours.type === 'response' || ours.type === 'metadata') {
        // warcio's own HTTP path (parseHttp, decoded content) yields the same payload bytes.
        const { WARCParser } = require('warcio') as typeof import('warcio');
        const rec = await new WARCParser([member]).parse();
        const own = await rec!.readFully(true);
        expect(Buffer.from(own).equals(Buffer.from(ours.http?.payload ?? ours.block))).toBe(true);
      }
    }
    expect(compared).toBe(16);
  });

  test('agrees on the real CC range reads (payloads stored decoded, X-Crawler-* headers)', async () => {
    for (const f of ['CC-MAIN-20250802220907-20250803010907-00970.warc.gz.34323482-34324700', 'CC-MAIN-20250804083340-20250804113340-00340.warc.gz.667474763-667481825']) {
      const bytes = read(`cocrawler-cdx_toolkit/decoded_ranges/${f}`);
      const ours = readWarcRecord(bytes);
      const theirs = await readWarcRecordWithWarcio(bytes);
      expect(theirs.targetUri).toBe(ours.targetUri);
      expect(theirs.http!.decoding.storedDecoded).toBe(true);
      expect(Buffer.from(theirs.http!.payload).equals(Buffer.from(ours.http!.payload))).toBe(true);
    }
  });

  test('a truncated member is CCP_ERR_WARC_TRUNCATED, as with readWarcRecord (warcio alone returns a short payload)', async () => {
    const clipped = read('chatnoir-resiliparse/clipped.warc.gz');
    const err = await readWarcRecordWithWarcio(clipped).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WarcError);
    expect((err as WarcError).code).toBe('CCP_ERR_WARC_TRUNCATED');
    // What warcio's own HTTP path makes of it: a response with fewer bytes than the record declares.
    const { WARCParser } = require('warcio') as typeof import('warcio');
    const rec = await new WARCParser([clipped]).parse();
    const payload = await rec!.readFully(true);
    expect(payload.length).toBeLessThan(rec!.warcContentLength);
  });

  test('keeps the block and the decoding report', async () => {
    const file = read('allenai-dolma-wget-warc/sample-0000.warc.gz');
    const member = file.subarray(15904, 15904 + 8572);
    const ours = readWarcRecord(member);
    const theirs = await readWarcRecordWithWarcio(member);
    expect(Buffer.from(theirs.block).equals(Buffer.from(ours.block))).toBe(true);
    expect(theirs.http!.decoding).toEqual(ours.http!.decoding);
    expect(theirs.http!.decoding.applied).toEqual(['chunked']);
  });
});
