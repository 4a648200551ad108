import { BatchFormatError, batchId, batchKey, decodeBatch, encodeMessage, type Batch } from './batch';

const batch: Batch = {
  v: 1,
  id: batchId('CC-MAIN-2024-30', 12345, 2),
  crawl: 'CC-MAIN-2024-30',
  dataset: 'CC-MAIN-2024-30',
  datasetId: 1,
  blockNo: 12345,
  seq: 2,
  records: [
    {
      url: 'https://example.com/a',
      ts: '20240715190219',
      status: '200',
      mime: 'text/html',
      languages: ['eng'],
      filename: 'crawl-data/CC-MAIN-2024-30/segments/1/warc/x.warc.gz',
      offset: 10,
      length: 2000,
    },
  ],
};

describe('batch messages', () => {
  it('have deterministic ids and storage keys', () => {
    expect(batch.id).toBe('CC-MAIN-2024-30/00012345/0002');
    expect(batchId('CC-MAIN-2024-30', 12345, 2)).toBe(batch.id);
    expect(batchKey(batch.id)).toBe('CC-MAIN-2024-30__00012345__0002');
    expect(() => batchId('../x', 1, 1)).toThrow(RangeError);
    expect(() => batchId('c', 1, 10_000)).toThrow(RangeError);
  });

  it('round-trip through the wire format', () => {
    expect(decodeBatch(encodeMessage(batch))).toEqual(batch);
  });

  it('reject what is not a batch with a non-retryable error', () => {
    for (const body of ['not json', '{"v":2}', JSON.stringify({ ...batch, id: 'x' })]) {
      let caught: unknown;
      try {
        decodeBatch(Buffer.from(body));
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(BatchFormatError);
      expect((caught as BatchFormatError).retryable).toBe(false);
    }
  });
});
