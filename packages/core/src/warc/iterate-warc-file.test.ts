import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { iterateWarcFile, readWarcRecord, WarcError, type WarcFileEntry } from './index';

const CORPUS = join(__dirname, '../../../..', '../shared/corpus');
const read = (p: string): Buffer => readFileSync(join(CORPUS, p));

function walk(bytes: Uint8Array): { entries: WarcFileEntry[]; error: unknown } {
  const entries: WarcFileEntry[] = [];
  try {
    for (const e of iterateWarcFile(bytes)) entries.push(e);
    return { entries, error: undefined };
  } catch (error) {
    return { entries, error };
  }
}

const countBy = (xs: string[]): Record<string, number> => xs.reduce<Record<string, number>>((m, x) => ({ ...m, [x]: (m[x] ?? 0) + 1 }), {});

describe('iterateWarcFile, one gzip member per record', () => {
  test('resiliparse CC-MAIN-2020-34 excerpt: 50 records, 16 responses, each range re-reads alone', () => {
    const file = read('chatnoir-resiliparse/warcfile.warc.gz');
    const { entries, error } = walk(file);
    expect(error).toBeUndefined();
    expect(entries).toHaveLength(50);
    expect(countBy(entries.map((e) => e.record.type))).toEqual({ warcinfo: 1, request: 17, response: 16, metadata: 16 });
    const uris = entries.filter((e) => e.record.type === 'response').map((e) => e.record.targetUri!);
    expect(new Set(uris).size).toBe(16);
    expect(uris).toContain('http://01spb.ru/company/');
    // Each response has its request (same URI) and metadata record.
    for (const u of uris) expect(entries.filter((e) => e.record.targetUri === u).length).toBeGreaterThanOrEqual(3);
    let next = 0;
    for (const e of entries) {
      expect(e).toMatchObject({ memberPerRecord: true, compressed: true, members: 1, offset: next });
      next = e.offset + e.length;
      const again = readWarcRecord(file.subarray(e.offset, e.offset + e.length));
      expect(again.recordId).toBe(e.record.recordId);
      expect(again.targetUri).toBe(e.record.targetUri);
      expect(gunzipSync(file.subarray(e.offset, e.offset + e.length)).equals(Buffer.from(e.raw))).toBe(true);
    }
    expect(next).toBe(file.length);
  });

  test.each([
    ['hynky1999-CmonCrawl/mini.warc.gz', ['warcinfo', 'request', 'response']],
    ['commoncrawl-whirlwind-python/whirlwind.warc.gz', ['warcinfo', 'request', 'response', 'metadata']],
    ['commoncrawl-whirlwind-python/whirlwind.warc.wet.gz', ['warcinfo', 'conversion']],
    ['commoncrawl-whirlwind-python/whirlwind.warc.wat.gz', ['warcinfo', 'metadata']],
    ['iipc-jwarc/gzip_extra_sl.warc.gz', ['warcinfo']],
  ])('%s yields its records in order', (path, types) => {
    const { entries, error } = walk(read(path));
    expect(error).toBeUndefined();
    expect(entries.map((e) => e.record.type)).toEqual(types);
    expect(entries.every((e) => e.memberPerRecord)).toBe(true);
  });

  test.each([
    ['allenai-dolma-wget-warc/sample-0000.warc.gz', 48, 22],
    ['allenai-dolma-wget-warc/sample-0001.warc.gz', 34, 15],
  ])('wget %s: %i records, %i responses, <bracketed> URIs unwrapped', (path, records, responses) => {
    const { entries, error } = walk(read(path));
    expect(error).toBeUndefined();
    expect(entries).toHaveLength(records);
    const resp = entries.filter((e) => e.record.type === 'response');
    expect(resp).toHaveLength(responses);
    for (const e of resp) {
      expect(e.record.headers.get('warc-target-uri')).toMatch(/^<.*>$/);
      expect(e.record.targetUri).toMatch(/^https?:\/\/[^<>]+$/);
      expect(e.record.http?.status).toBeGreaterThanOrEqual(200);
    }
  });
});

describe('iterateWarcFile, other layouts', () => {
  test('a whole file in ONE gzip member is reported as such, raw records re-gzip into readable members', () => {
    const file = read('webrecorder-warcio-edgecases/example-bad-non-chunked.warc.gz');
    const { entries, error } = walk(file);
    expect(error).toBeUndefined();
    expect(entries.map((e) => e.record.type)).toEqual(['warcinfo', 'warcinfo', 'response', 'request', 'revisit', 'request']);
    const whole = gunzipSync(file);
    for (const e of entries) {
      expect(e.memberPerRecord).toBe(false);
      expect(e.members).toBe(0);
      // offset/length address the uncompressed stream.
      expect(whole.subarray(e.offset, e.offset + e.length).equals(Buffer.from(e.raw))).toBe(true);
      const again = readWarcRecord(gzipSync(e.raw), { lenientHttp: true });
      expect(again.recordId).toBe(e.record.recordId);
      expect(Buffer.from(again.block).equals(Buffer.from(e.record.block))).toBe(true);
    }
  });

  test('an uncompressed file: offsets are file offsets', () => {
    const file = read('webrecorder-warcio-edgecases/example-iana.org-chunked.warc');
    const { entries, error } = walk(file);
    expect(error).toBeUndefined();
    expect(entries.map((e) => [e.record.type, e.compressed, e.memberPerRecord])).toEqual([
      ['warcinfo', false, false],
      ['response', false, false],
      ['request', false, false],
    ]);
    for (const e of entries) expect(readWarcRecord(file.subarray(e.offset, e.offset + e.length)).recordId).toBe(e.record.recordId);
  });

  test('a record split over two gzip members is one addressable range of 2 members', () => {
    const file = read('webrecorder-warcio-edgecases/example-wrong-chunks.warc.gz');
    const { entries, error } = walk(file);
    expect(error).toBeUndefined();
    expect(entries.map((e) => [e.record.type, e.memberPerRecord, e.members])).toEqual([
      ['response', true, 2],
      ['request', true, 1],
    ]);
    const [first] = entries;
    const again = readWarcRecord(file.subarray(first!.offset, first!.offset + first!.length));
    expect(again.http?.status).toBe(200);
    expect(again.block.length).toBe(again.contentLength);
  });

  test('an uncompressed file truncated inside a record yields the records before it, then CCP_ERR_WARC_TRUNCATED', () => {
    const file = read('webrecorder-warcio-edgecases/example-iana.org-chunked.warc');
    const { entries, error } = walk(file.subarray(0, 3000));
    expect(entries.map((e) => e.record.type)).toEqual(['warcinfo']);
    expect(error).toBeInstanceOf(WarcError);
    expect((error as WarcError).code).toBe('CCP_ERR_WARC_TRUNCATED');
  });

  test('a response whose HTTP head is junk is yielded with httpError, and the walk goes on', () => {
    const file = read('hynky1999-CmonCrawl/mini.warc.gz');
    const raw = gunzipSync(file.subarray(1066)).toString('latin1');
    const blockStart = raw.indexOf('\r\n\r\n') + 4;
    const junk = 'ICY 200 OK\r\n\r\nnot http';
    const bad = raw.slice(0, blockStart).replace(/Content-Length: \d+/, `Content-Length: ${junk.length}`) + junk + '\r\n\r\n';
    const spliced = Buffer.concat([file.subarray(0, 1066), gzipSync(Buffer.from(bad, 'latin1')), file.subarray(0, 518)]);
    const { entries, error } = walk(spliced);
    expect(error).toBeUndefined();
    expect(entries.map((e) => e.record.type)).toEqual(['warcinfo', 'request', 'response', 'warcinfo']);
    expect(entries[2]!.record.http).toBeUndefined();
    expect(entries[2]!.record.httpError?.code).toBe('CCP_ERR_HTTP_HEAD');
    expect(() => [...iterateWarcFile(spliced, { lenientHttp: false })]).toThrow(WarcError);
  });

  test('trailing NUL padding is ignored, trailing junk is CCP_ERR_WARC_GZIP', () => {
    const file = read('hynky1999-CmonCrawl/mini.warc.gz');
    expect(walk(Buffer.concat([file, Buffer.alloc(512)])).entries).toHaveLength(3);
    const junk = walk(Buffer.concat([file, Buffer.from('garbage after the last member')]));
    expect(junk.entries).toHaveLength(3);
    expect((junk.error as WarcError).code).toBe('CCP_ERR_WARC_GZIP');
  });
});

describe('iterateWarcFile robustness on malformed inputs', () => {
  const edge = readdirSync(join(CORPUS, 'webrecorder-warcio-edgecases')).filter((f) => f.includes('.warc')).map((f) => `webrecorder-warcio-edgecases/${f}`);
  test.each([...edge, 'chatnoir-resiliparse/clipped.warc.gz', 'chatnoir-resiliparse/clueweb-quirk.warc.gz'])('%s: records or a typed error', (path) => {
    const { entries, error } = walk(read(path));
    if (error !== undefined) expect(error).toBeInstanceOf(WarcError);
    expect(entries.length + (error ? 1 : 0)).toBeGreaterThan(0);
  });

  test('clipped.warc.gz (gzip cut mid-record) is CCP_ERR_WARC_TRUNCATED with no records', () => {
    const { entries, error } = walk(read('chatnoir-resiliparse/clipped.warc.gz'));
    expect(entries).toHaveLength(0);
    expect((error as WarcError).code).toBe('CCP_ERR_WARC_TRUNCATED');
  });

  test('clueweb-quirk.warc.gz (WARC/0.18, LF-only HTTP heads): 30 records, 29 HTTP responses', () => {
    const { entries, error } = walk(read('chatnoir-resiliparse/clueweb-quirk.warc.gz'));
    expect(error).toBeUndefined();
    expect(entries).toHaveLength(30);
    expect(entries[0]!.record.version).toBe('WARC/0.18');
    const resp = entries.filter((e) => e.record.http);
    expect(resp).toHaveLength(29);
    for (const e of resp) expect(e.record.http!.headers.get('content-type')).toMatch(/^text\/html/);
  });

  test('every cut of a real file ends in records or a WarcError, never a crash or a hang', () => {
    const files = [read('chatnoir-resiliparse/warcfile.warc.gz').subarray(0, 12_000), read('webrecorder-warcio-edgecases/example-bad-non-chunked.warc.gz'), read('webrecorder-warcio-edgecases/example-digest.warc')];
    for (const f of files) {
      for (let cut = 0; cut <= f.length; cut += 97) {
        const { error } = walk(f.subarray(0, cut));
        if (error !== undefined) expect(error).toBeInstanceOf(WarcError);
        const flipped = Buffer.from(f);
        if (cut < f.length) flipped[cut]! ^= 0x5a;
        const r = walk(flipped);
        if (r.error !== undefined) expect(r.error).toBeInstanceOf(WarcError);
      }
    }
  });
});

describe('iterateWarcFile on cc-mirror-dev: every CDX offset/length re-reads standalone', () => {
  const root = join(CORPUS, 'cc-mirror-dev');
  const crawls = ['CC-MAIN-2030-40', 'CC-MAIN-2030-44'];
  test.each(crawls)('%s', (crawl) => {
    const idx = join(root, 'cc-index/collections', crawl, 'indexes');
    const lines = readdirSync(idx)
      .filter((f) => /^cdx-\d+\.gz$/.test(f))
      .flatMap((f) => execFileSync('zcat', [join(idx, f)], { encoding: 'utf8', maxBuffer: 1 << 28 }).split('\n'))
      .filter((l) => l.trim());
    const cdx = lines.map((l) => JSON.parse(l.slice(l.indexOf('{'))) as Record<string, string>);
    expect(cdx.length).toBeGreaterThan(100);
    const byFile = new Map<string, Record<string, string>[]>();
    for (const c of cdx) byFile.set(c.filename!, [...(byFile.get(c.filename!) ?? []), c]);
    for (const [filename, rows] of byFile) {
      const file = readFileSync(join(root, filename));
      const responses = new Map<string, WarcFileEntry>();
      for (const e of iterateWarcFile(file)) {
        expect(e.memberPerRecord).toBe(true);
        if (e.record.type === 'response') responses.set(`${e.offset}/${e.length}`, e);
      }
      for (const row of rows) {
        const off = Number(row.offset);
        const len = Number(row.length);
        const rec = readWarcRecord(file.subarray(off, off + len));
        expect(rec.targetUri).toBe(row.url);
        expect(String(rec.http!.status)).toBe(row.status);
        expect(rec.headers.get('warc-payload-digest')).toBe(`sha1:${row.digest}`);
        expect(responses.get(`${off}/${len}`)?.record.recordId).toBe(rec.recordId);
      }
      expect(responses.size).toBe(rows.length);
    }
  });
});
