import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { iterateWarcFile } from '@ccpipe/core';
import { base32, cdxRecordFor, normalizeSha1, redirectOf, sniffMime, timestampOf } from './cdx-fields';

const REPO_ROOT = path.resolve(__dirname, '../../../..');
const CORPUS = path.join(REPO_ROOT, '../shared/corpus');
const AT = { filename: 'crawl-data/X/segments/1.00/warc/x.warc.gz', offset: 0, length: 1 };

describe('CDX field helpers', () => {
  it('encodes base32 like RFC 4648 (no padding)', () => {
    expect(['', 'f', 'fo', 'foo', 'foob', 'fooba', 'foobar'].map((s) => base32(Buffer.from(s)))).toEqual(['', 'MY', 'MZXQ', 'MZXW6', 'MZXW6YQ', 'MZXW6YTB', 'MZXW6YTBOI']);
  });

  it('turns hex and base64 SHA-1 digests into base32 and keeps base32 ones', () => {
    const sha = createHash('sha1').update('payload').digest();
    expect(normalizeSha1(sha.toString('hex'))).toBe(base32(sha));
    expect(normalizeSha1(sha.toString('base64'))).toBe(base32(sha));
    expect(normalizeSha1(base32(sha))).toBe(base32(sha));
  });

  it('reads WARC-Date into a 14-digit timestamp and resolves relative redirects', () => {
    expect(timestampOf('2030-11-10T21:16:51Z')).toBe('20301110211651');
    expect(timestampOf('2030-11-10T21:16:51.123456Z')).toBe('20301110211651');
    expect(timestampOf('2030-11-10')).toBeUndefined();
    expect(timestampOf('2030-11-10T21:16:51')).toBe('20301110211651'); // no zone: UTC
    expect(timestampOf('2008-10-29T05:21:46-0700')).toBe('20081029122146'); // offsets are converted to UTC
    expect(timestampOf('2008-10-29T23:21:46+02:00')).toBe('20081029212146');
    expect(timestampOf('2030-12-31T23:30:00-01:00')).toBe('20310101003000');
    // not an instant: refused (the record is skipped as bad_date), never cut into an impossible timestamp
    for (const bad of ['2008-10-294T05:21:46-0700', '2030-02-30T00:00:00Z', '2029-02-29T00:00:00Z', '2030-13-01T00:00:00Z', '2030-11-10T24:00:00Z', '2030-11-10T21:60:00Z', '2030-11-10 21:16:51Z', '20301110211651']) {
      expect({ bad, ts: timestampOf(bad) }).toEqual({ bad, ts: undefined });
    }
    expect(timestampOf('2028-02-29T12:00:00Z')).toBe('20280229120000');
    expect(redirectOf('/moved?a=1', 'https://www.example.com/a/b')).toBe('https://www.example.com/moved?a=1');
    expect(redirectOf('http://[bad', 'https://www.example.com/')).toBeUndefined();
  });
});

describe('cdxRecordFor on real records', () => {
  it('normalises the digest spellings of the warcio fixtures to CC base32', async () => {
    // example-digest.warc declares the SHA-1 of an empty payload in base32, base64 and base64url.
    const text = (await fsp.readFile(path.join(CORPUS, 'webrecorder-warcio-edgecases/example-digest.warc'))).toString('latin1');
    const declared = [...text.matchAll(/^WARC-Payload-Digest: sha1:(\S+)\r?$/gm)].map((m) => m[1]!).filter((d) => d.endsWith('='));
    expect(declared.length).toBe(3);
    const empty = base32(createHash('sha1').update('').digest());
    for (const d of declared) expect(normalizeSha1(d)).toBe(empty);
    // example-iana.org-chunked.warc declares it in hex on a response: the CDX line gets base32.
    const chunked = await fsp.readFile(path.join(CORPUS, 'webrecorder-warcio-edgecases/example-iana.org-chunked.warc'));
    const lines = [...iterateWarcFile(chunked)].map((e) => cdxRecordFor(e.record, AT, { languages: false })).filter((r) => typeof r !== 'string');
    expect(lines.length).toBe(1);
    const hex = /WARC-Payload-Digest: sha1:([0-9a-f]{40})/.exec(chunked.toString('latin1'))![1]!;
    expect(lines[0]!.digest).toBe(base32(Buffer.from(hex, 'hex')));
  });

  it('sniffs the same media type that cc-mirror-dev records in WARC-Identified-Payload-Type', async () => {
    const file = path.join(CORPUS, 'cc-mirror-dev/crawl-data/CC-MAIN-2030-40/segments/1700003000.00/warc/CC-MAIN-20301110120000-20301110150000-00000.warc.gz');
    let n = 0;
    let same = 0;
    for (const { record } of iterateWarcFile(await fsp.readFile(file))) {
      const declared = record.headers.get('warc-identified-payload-type');
      if (record.type !== 'response' || declared === undefined || record.http === undefined || record.http.payload.length === 0) continue;
      n += 1;
      if (sniffMime(record.http.payload) === declared) same += 1;
    }
    expect(n).toBeGreaterThan(300);
    expect(same / n).toBeGreaterThanOrEqual(0.98);
  });

  it('indexes exactly the response records of a wget WARC (request, metadata, warcinfo get none)', async () => {
    const bytes = await fsp.readFile(path.join(CORPUS, 'allenai-dolma-wget-warc/sample-0001.warc.gz'));
    const kinds = new Map<string, number>();
    for (const { record } of iterateWarcFile(bytes)) {
      const r = cdxRecordFor(record, AT, { languages: false });
      const k = typeof r === 'string' ? r : 'line';
      kinds.set(k, (kinds.get(k) ?? 0) + 1);
    }
    // PROVENANCE.md: 34 records, 15 responses.
    expect(kinds.get('line')).toBe(15);
    expect(kinds.get('not_capture')).toBe(34 - 15);
  });
});
