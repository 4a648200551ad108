import { readWarcRecord } from '@ccpipe/core';
import { devBatches, devReader } from '../../../tests/support/dev-batches';
import { DEV_CRAWLS } from '../../../tests/support/corpus';
import { readPage } from './read-page';

describe('readPage', () => {
  it("reads a record's facts, decodes a page below status 400 only when asked, never an error page", async () => {
    const batches = await devBatches(DEV_CRAWLS[0], { datasetId: 1, maxBlocks: 4, filter: { status: null, languages: null } });
    const records = batches.flatMap((b) => b.records);
    const page = records.find((r) => r.status === '200' && r.mime === 'text/html')!;
    const error = records.find((r) => Number(r.status) >= 400)!;
    expect([page, error].every((r) => r !== undefined)).toBe(true);
    const reader = devReader();
    const bytes = await reader.read(page.filename, page.offset, page.length);
    const payload = readWarcRecord(bytes).http!.payload;
    const got = readPage(bytes, page, true);
    expect(got).toMatchObject({ status: 200, mime: 'text/html', html: true, payloadLength: payload.length, contentType: expect.stringMatching(/^text\/html/) });
    expect(got.decoded?.charset).toBe('utf-8');
    expect(got.decoded?.text).toContain('<html');
    expect(readPage(bytes, page, false)).toEqual({ ...got, decoded: null });
    const e = readPage(await reader.read(error.filename, error.offset, error.length), error, true);
    expect([e.status, e.decoded]).toEqual([Number(error.status), null]);
    expect(() => readPage(bytes, { ...page, url: 'https://elsewhere.example/' }, true)).toThrow(expect.objectContaining({ code: 'CCP_ERR_WARC_URI_MISMATCH' }));
  });
});
