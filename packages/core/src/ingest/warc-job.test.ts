import { BULK_BLOCK_BASE, decodeMessage, decodeRecordList, encodeRecordList, isWarcJob, subBatchesOf, warcJobBatchId, warcJobId, type WarcJob } from './warc-job';
import { batchId, encodeMessage, type Batch, type BatchRecord } from './batch';

const rec = (offset: number, filename = 'crawl-data/X/segments/1/warc/a.warc.gz'): BatchRecord => ({ url: `https://a.example/${offset}`, ts: '20300101000000', languages: ['eng'], filename, offset, length: 10 });
const job = (records: number, batchSize: number): WarcJob => ({
  v: 1, kind: 'warc', id: warcJobId('CC-MAIN-2030-40', 12), crawl: 'CC-MAIN-2030-40', dataset: 'cc', datasetId: 4, fileNo: 12,
  filename: 'crawl-data/X/segments/1/warc/a.warc.gz', list: 'bulk/x', records, batchSize,
});

describe('WARC file jobs', () => {
  it('cut the list into ordinary batches of batchSize records, at block BULK_BLOCK_BASE + fileNo', () => {
    const list = [0, 5, 5, 30, 70].map((o) => rec(o));
    const b = subBatchesOf(job(5, 2), list);
    expect(b.map((x) => [x.id, x.blockNo, x.seq, x.records.map((r) => r.offset)])).toEqual([
      [batchId('CC-MAIN-2030-40', BULK_BLOCK_BASE + 12, 0), BULK_BLOCK_BASE + 12, 0, [0, 5]],
      [batchId('CC-MAIN-2030-40', BULK_BLOCK_BASE + 12, 1), BULK_BLOCK_BASE + 12, 1, [5, 30]],
      [warcJobBatchId(job(5, 2), 2), BULK_BLOCK_BASE + 12, 2, [70]],
    ]);
    expect(b[0]!.id).toBe('CC-MAIN-2030-40/90000012/0000');
  });

  it('refuse a list that does not fit the job: count, another file, out of order', () => {
    expect(() => subBatchesOf(job(3, 2), [rec(0), rec(1)])).toThrow(/does not hold the records/);
    expect(() => subBatchesOf(job(2, 2), [rec(0), rec(1, 'crawl-data/X/b.warc.gz')])).toThrow(/another WARC file/);
    expect(() => subBatchesOf(job(2, 2), [rec(9), rec(1)])).toThrow(/not sorted/);
  });

  it('travel as queue messages beside batches; a message of neither shape is a format error', () => {
    const j = job(4, 2);
    const back = decodeMessage(encodeMessage(j));
    expect(isWarcJob(back) && back).toEqual(j);
    const batch: Batch = { v: 1, id: batchId('C', 3, 0), crawl: 'C', dataset: 'C', datasetId: 1, blockNo: 3, seq: 0, records: [rec(0)] };
    const b = decodeMessage(encodeMessage(batch));
    expect([isWarcJob(b), b]).toEqual([false, batch]);
    expect(() => decodeMessage(Buffer.from(JSON.stringify({ ...j, fileNo: -1 })))).toThrow(/WARC file job does not match/);
    expect(() => decodeMessage(Buffer.from(JSON.stringify({ ...j, id: 'C/00000001/0000' })))).toThrow(/WARC file job does not match/);
    expect(() => decodeMessage(Buffer.from('nope'))).toThrow(/not JSON/);
    expect(decodeRecordList(encodeRecordList([rec(1)]))).toEqual([rec(1)]);
    expect(() => decodeRecordList(Buffer.from('[{"url":1}]'))).toThrow(/does not match/);
  });
});
