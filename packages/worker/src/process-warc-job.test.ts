import { gzipSync } from 'node:zlib';
import { CcpError, encodeRecordList, extractDocument, layout, warcJobBatchId, warcJobId, type BatchRecord, type RangeReader, type WarcJob } from '@ccpipe/core';
import { FsRangeReader, MemoryObjectStore, closeDuckDbParquetEngine, writeParquetPart } from '@ccpipe/adapters';
import { CC_MIRROR_DEV, DEV_CRAWLS } from '../../../tests/support/corpus';
import { readParquetRows } from '../../../tests/support/parquet';
import { devBatches } from '../../../tests/support/dev-batches';
import { processBatch, type BatchDeps } from './process-batch';
import { processWarcJob } from './process-warc-job';

const crawl = DEV_CRAWLS[0];

afterAll(async () => {
  await closeDuckDbParquetEngine();
});

/** A reader over the mirror that counts streamRange calls and can cut a stream after `cutAfter` bytes. */
function countingReader(opts: { cutAfter?: number } = {}): RangeReader & { streams: { offset: number; length: number }[] } {
  const inner = new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true });
  const streams: { offset: number; length: number }[] = [];
  return {
    streams,
    read: (path, offset, length, signal) => inner.read(path, offset, length, signal),
    stream: (path, signal) => inner.stream(path, signal),
    async *streamRange(path, offset, length, signal) {
      streams.push({ offset, length });
      let n = 0;
      for await (const c of inner.streamRange(path, offset, length, signal)) {
        // small chunks: records span chunk boundaries
        for (let i = 0; i < c.length; i += 4096) {
          if (opts.cutAfter !== undefined && n >= opts.cutAfter) throw new CcpError('CCP_ERR_FETCH_SHORT_BODY', 'cut', { retryable: true });
          n += Math.min(4096, c.length - i);
          yield c.subarray(i, i + 4096);
        }
      }
    },
    close: () => inner.close(),
  };
}

function deps(store: MemoryObjectStore, reader: RangeReader): BatchDeps {
  return { reader, store, extract: async (html, url) => extractDocument(html, { url }), writePart: (rows) => writeParquetPart(rows, { engine: 'duckdb' }) };
}

/** The kept records of the crawl's first blocks that live in its first WARC file, sorted by offset: one job's list. */
async function jobOf(store: MemoryObjectStore, batchSize: number): Promise<{ job: WarcJob; list: BatchRecord[] }> {
  const records = (await devBatches(crawl, { datasetId: 3, maxBlocks: 6 })).flatMap((b) => b.records);
  const filename = records[0]!.filename;
  const list = records.filter((r) => r.filename === filename).sort((a, b) => a.offset - b.offset);
  const key = layout.bulkList(3, crawl, 0);
  await store.put(key, gzipSync(encodeRecordList(list)));
  return { job: { v: 1, kind: 'warc', id: warcJobId(crawl, 0), crawl, dataset: crawl, datasetId: 3, fileNo: 0, filename, list: key, records: list.length, batchSize }, list };
}

async function rowsIn(store: MemoryObjectStore, job: WarcJob): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (let seq = 0; seq * job.batchSize < job.records; seq++) {
    const part = await store.get(layout.batchPart(job.datasetId, warcJobBatchId(job, seq)));
    if (part !== null) rows.push(...(await readParquetRows(part)));
  }
  return rows;
}

describe('processWarcJob', () => {
  it('cuts every listed record out of one stream of the file: the rows range reads of the same records give', async () => {
    const store = new MemoryObjectStore();
    const { job, list } = await jobOf(store, 7);
    expect(list.length).toBeGreaterThan(14);
    const reader = countingReader();
    const out = await processWarcJob(job, deps(store, reader), { concurrency: 4, includeText: true });
    expect(reader.streams).toHaveLength(1);
    expect(out.batches.map((b) => b.id)).toEqual(Array.from({ length: Math.ceil(list.length / 7) }, (_, s) => warcJobBatchId(job, s)));
    expect(out.batches.every((b) => !b.outcome.skipped)).toBe(true);
    // the same records as one range batch each, through processBatch with range reads
    const ref = new MemoryObjectStore();
    const refRows: Record<string, unknown>[] = [];
    for (let seq = 0; seq * 7 < list.length; seq++) {
      const b = { v: 1 as const, id: `ref/${String(seq).padStart(8, '0')}/0000`, crawl, dataset: crawl, datasetId: 3, blockNo: seq, seq: 0, records: list.slice(seq * 7, seq * 7 + 7) };
      await processBatch(b, deps(ref, new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true })), { concurrency: 4, includeText: true });
      refRows.push(...(await readParquetRows((await ref.get(layout.batchPart(3, b.id)))!)));
    }
    const rows = await rowsIn(store, job);
    const sort = (r: Record<string, unknown>[]): string[] => r.map((x) => JSON.stringify(x, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).sort();
    expect(sort(rows)).toEqual(sort(refRows));
    // the list is deleted once every sub-batch is done; a duplicate delivery then finds every marker and does nothing
    expect(await store.get(job.list)).toBeNull();
    expect(await processWarcJob(job, deps(store, reader), { concurrency: 4, includeText: true })).toEqual({ batches: [] });
    expect(reader.streams).toHaveLength(1);
  }, 120_000);

  it('a stream cut mid-file fails the job for now; the redelivery streams from the first record of the first sub-batch not done', async () => {
    const store = new MemoryObjectStore();
    const { job, list } = await jobOf(store, 5);
    const span = list[list.length - 1]!.offset + list[list.length - 1]!.length - list[0]!.offset;
    const cut = countingReader({ cutAfter: Math.floor(span / 2) }); // half way: past the first sub-batches, not the last
    const err = await processWarcJob(job, deps(store, cut), { concurrency: 2, includeText: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CcpError);
    expect([(err as CcpError).code, (err as CcpError).retryable]).toEqual(['CCP_ERR_FETCH_SHORT_BODY', true]);
    const doneSeqs: number[] = [];
    for (let seq = 0; seq * 5 < list.length; seq++) if (await store.head(layout.batchMarker(3, warcJobBatchId(job, seq)))) doneSeqs.push(seq);
    expect(doneSeqs.length).toBeGreaterThan(0);
    expect(doneSeqs.length).toBeLessThan(Math.ceil(list.length / 5));
    expect(doneSeqs).toEqual(doneSeqs.map((_, i) => i)); // in order: a prefix

    const again = countingReader();
    const out = await processWarcJob(job, deps(store, again), { concurrency: 2, includeText: false });
    expect(again.streams).toEqual([{ offset: list[doneSeqs.length * 5]!.offset, length: expect.any(Number) as number }]);
    expect(out.batches.filter((b) => b.outcome.skipped).map((b) => b.id)).toEqual(doneSeqs.map((s) => warcJobBatchId(job, s)));
    const rows = await rowsIn(store, job);
    expect(rows).toHaveLength(list.length);
    expect(new Set(rows.map((r) => String(r['warc_offset']))).size).toBe(new Set(list.map((r) => r.offset)).size);
  }, 120_000);

  it('a WARC file that is missing fails each record as its range read would (a failures file), and the job completes', async () => {
    const store = new MemoryObjectStore();
    const { job, list } = await jobOf(store, 50);
    const gone = { ...job, filename: job.filename.replace('.warc.gz', '-missing.warc.gz') };
    await store.put(gone.list, gzipSync(encodeRecordList(list.map((r) => ({ ...r, filename: gone.filename })))));
    const out = await processWarcJob(gone, deps(store, countingReader()), { concurrency: 2, includeText: false });
    const markers = out.batches.map((b) => b.outcome.marker);
    expect(markers.reduce((n, m) => n + m.failed, 0)).toBe(list.length);
    expect(markers.every((m) => m.rows === 0 && Object.keys(m.failures).join() === 'CCP_ERR_FETCH_STATUS')).toBe(true);
  });

  it('a list gone while sub-batches are not done is an error for the DLQ; a list that does not fit its job is refused', async () => {
    const store = new MemoryObjectStore();
    const { job } = await jobOf(store, 50);
    await store.delete(job.list);
    await expect(processWarcJob(job, deps(store, countingReader()), { concurrency: 2, includeText: false })).rejects.toMatchObject({ code: 'CCP_ERR_BULK_LIST_MISSING', retryable: false });
    const { job: again } = await jobOf(store, 50);
    await expect(processWarcJob({ ...again, records: again.records + 1 }, deps(store, countingReader()), { concurrency: 2, includeText: false }))
      .rejects.toMatchObject({ code: 'CCP_ERR_BATCH_FORMAT', retryable: false });
  });
});
