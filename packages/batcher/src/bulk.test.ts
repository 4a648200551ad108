import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { compileFilter, decodeRecordList, registeredDomainOf, subBatchCount, type BatchPublisher, type QueueMessage, type WarcJob } from '@ccpipe/core';
import { FetchStatusError, FsRangeReader, MemoryObjectStore, systemClock } from '@ccpipe/adapters';
import { CC_MIRROR_DEV, DEV_CRAWLS, loadOracle } from '../../../tests/support/corpus';
import { MAX_FAILED_IN_A_ROW, runBatcher } from './batcher';
import { loadWarcPaths, runBulkBatcher, type BulkParams } from './bulk';
import { byShard } from './plan-blocks';
import { BulkSpill } from './bulk-spill';
import { loadCheckpoint, runFingerprint } from './checkpoint';
import { loadClusterIdx } from './cluster-idx-source';
import { chooseMode, estimateModes, sampleBlocks, type ModeEstimate } from './mode-choice';
import { planBlocks } from './plan-blocks';

const oracle = loadOracle();
const crawl = DEV_CRAWLS[0];
const filter = compileFilter({}, { registeredDomainOf });
const spillRoot = mkdtempSync(join(tmpdir(), 'ccpipe-spill-test-'));
afterAll(() => rmSync(spillRoot, { recursive: true, force: true }));

class Collecting implements BatchPublisher {
  readonly messages: QueueMessage[] = [];
  async publish(m: QueueMessage): Promise<void> {
    this.messages.push(m);
  }
  async close(): Promise<void> {}
}

async function setUp(): Promise<{ params: BulkParams; reader: FsRangeReader; store: MemoryObjectStore }> {
  const reader = new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true });
  const { entries } = await loadClusterIdx(crawl, { localDir: '/nonexistent', reader });
  const plan = planBlocks(entries, {});
  return {
    reader, store: new MemoryObjectStore(),
    params: {
      crawl, dataset: crawl, datasetId: 2, fingerprint: runFingerprint({ crawl }), plan, filter, targets: null, batchSize: 40, publishWindow: 4, publishAttempts: 2,
      warcPaths: await loadWarcPaths(crawl, reader), spillDir: spillRoot, startJob: 0, choice: { mode: 'bulk', asked: 'bulk', reason: 'test' },
    },
  };
}

describe('runBulkBatcher over cc-mirror-dev', () => {
  it('publishes a job per WARC file with kept records: the records ranges mode keeps, listed by file and offset; the checkpoint counts sub-batches', async () => {
    const { params, reader, store } = await setUp();
    const pub = new Collecting();
    const summary = await runBulkBatcher(params, { reader, publisher: pub, store, clock: systemClock });
    const jobs = pub.messages as WarcJob[];
    expect(jobs.map((j) => j.fileNo)).toEqual([...new Set(jobs.map((j) => j.fileNo))].sort((a, b) => a - b));
    const lists = await Promise.all(jobs.map(async (j) => decodeRecordList(gunzipSync((await store.get(j.list))!))));
    for (const [i, l] of lists.entries()) {
      expect(l.every((r) => r.filename === jobs[i]!.filename)).toBe(true);
      expect(l.map((r) => r.offset)).toEqual([...l.map((r) => r.offset)].sort((a, b) => a - b));
    }
    // the same records ranges mode keeps
    const ranges = new Collecting();
    const ref = await runBatcher({ ...params, startIndex: 0, blockConcurrency: 2 }, { reader, publisher: ranges, store: new MemoryObjectStore(), clock: systemClock });
    const key = (r: { url: string; ts: string; offset: number }): string => `${r.url} ${r.ts} ${r.offset}`;
    expect(lists.flat().map(key).sort()).toEqual(ranges.messages.flatMap((b) => ('records' in b && Array.isArray(b.records) ? b.records : [])).map(key).sort());
    expect([summary.kept, summary.records, summary.dropped]).toEqual([ref.kept, ref.records, ref.dropped]);
    expect(summary.kept).toBe(oracle.crawls[crawl]!.kept_captures);
    const cp = (await loadCheckpoint(store, crawl, params.fingerprint))!;
    expect(cp).toMatchObject({ mode: 'bulk', done: true, nextPlanIndex: jobs.length, planLength: jobs.length, recordsPublished: summary.kept });
    expect(cp.batchesPublished).toBe(jobs.reduce((n, j) => n + subBatchCount(j.records, 40), 0));
    expect(readdirSync(spillRoot)).toEqual([]); // the spill is gone
  });

  it('a rerun from the checkpoint publishes only the jobs not confirmed, and counts every batch', async () => {
    const { params, reader, store } = await setUp();
    const all = new Collecting();
    await runBulkBatcher(params, { reader, publisher: all, store, clock: systemClock });
    const done = (await loadCheckpoint(store, crawl, params.fingerprint))!;
    const again = new Collecting();
    const second = new MemoryObjectStore();
    await runBulkBatcher({ ...params, startJob: 1 }, { reader, publisher: again, store: second, clock: systemClock });
    expect(again.messages.map((m) => m.id)).toEqual(all.messages.slice(1).map((m) => m.id));
    expect((await loadCheckpoint(second, crawl, params.fingerprint))!.batchesPublished).toBe(done.batchesPublished);
  });

  it('reads each CDX file in one request', async () => {
    const { params, reader, store } = await setUp();
    let streams = 0;
    let reads = 0;
    const counted = Object.assign(Object.create(reader) as FsRangeReader, {
      streamRange: (p: string, o: number, l: number, s?: AbortSignal) => {
        streams++;
        return reader.streamRange(p, o, l, s);
      },
      read: (p: string, o: number, l: number, s?: AbortSignal) => {
        reads++;
        return reader.read(p, o, l, s);
      },
    });
    await runBulkBatcher(params, { reader: counted, publisher: new Collecting(), store, clock: systemClock });
    expect([streams, reads]).toEqual([byShard(params.plan).length, 0]);
  });
});

describe('runBulkBatcher over a CDX source that cannot be had', () => {
  const gone = (reader: FsRangeReader, lost: (path: string) => boolean): FsRangeReader => Object.assign(Object.create(reader) as FsRangeReader, {
    streamRange: (path: string, o: number, l: number, s?: AbortSignal) => (lost(path) ? (async function* () {
      yield* [] as Uint8Array[];
      throw new FetchStatusError(404, false, { path });
    })() : reader.streamRange(path, o, l, s)),
  });

  it('skips the blocks of a CDX file that is gone, counted as failed blocks, and publishes the rest', async () => {
    const { params, reader, store } = await setUp();
    const [first] = byShard(params.plan);
    const pub = new Collecting();
    const summary = await runBulkBatcher(params, { reader: gone(reader, (path) => path.endsWith(first![0]!.entry.shard)), publisher: pub, store, clock: systemClock });
    expect(summary.failedBlocks.map((b) => b.ordinal)).toEqual(first!.map((b) => b.ordinal));
    expect(summary.failedBlocks.every((b) => b.code === 'CCP_ERR_FETCH_STATUS')).toBe(true);
    expect(summary.done).toBe(true);
    expect(pub.messages.length).toBeGreaterThan(0);
  });

  it('stops when every CDX file is gone (a wrong source), as ranges mode does, instead of calling the crawl done', async () => {
    const { params, reader, store } = await setUp();
    expect(params.plan.length).toBeGreaterThanOrEqual(MAX_FAILED_IN_A_ROW);
    const pub = new Collecting();
    await expect(runBulkBatcher(params, { reader: gone(reader, () => true), publisher: pub, store, clock: systemClock })).rejects.toMatchObject({ code: 'CCP_ERR_BATCHER_SOURCE' });
    expect(pub.messages).toEqual([]);
    expect(await loadCheckpoint(store, crawl, params.fingerprint)).toBeNull();
  });
});

describe('BulkSpill', () => {
  it('gives each file its records sorted by offset, files in order, ties in the order added', () => {
    const spill = new BulkSpill(join(spillRoot, 's1'), 5000);
    const r = (offset: number, url: string) => ({ url, ts: '20300101000000', languages: [], filename: 'f', offset, length: 1 });
    spill.add(4999, r(5, 'a'));
    spill.add(0, r(9, 'b'));
    spill.add(0, r(1, 'c'));
    spill.add(0, r(1, 'd'));
    for (let i = 0; i < 3000; i++) spill.add(2500, r(3000 - i, `x${i}`)); // past a flush
    const groups = [...spill.groups()];
    expect(groups.map((g) => g.fileNo)).toEqual([0, 2500, 4999]);
    expect(groups[0]!.records.map((x) => x.url)).toEqual(['c', 'd', 'b']);
    expect(groups[1]!.records.map((x) => x.offset)).toEqual(Array.from({ length: 3000 }, (_, i) => i + 1));
    spill.close();
  });
});

describe('auto mode', () => {
  const est = (kept: number, records: number): ModeEstimate => ({
    sampledBlocks: 10, sampledRecords: 1000, sampledKept: 0, plannedBlocks: 1e6, records, kept, warcFiles: 90_000, cdxFiles: 300,
    ranges: { requests: kept, bytes: kept * 30_000 }, bulk: { requests: 90_300, bytes: records * 33_000 },
  });
  it('chooses bulk for a crawl-wide filter and ranges for a selective one, saying why', () => {
    expect(chooseMode(est(1.1e9, 2.5e9))).toMatchObject({ mode: 'bulk', asked: 'auto', reason: expect.stringMatching(/keeps ≈ 44\.0%/) as string });
    expect(chooseMode(est(1e6, 2.5e9)).mode).toBe('ranges');
  });

  it('chooses ranges when no sample block could be read, and says so rather than "keeps ≈ 0%"', () => {
    const failed = { ...est(0, 0), sampledBlocks: 0, sampledRecords: 0 };
    expect(chooseMode(failed)).toMatchObject({ mode: 'ranges', reason: expect.stringMatching(/^no block of the CDX sample \(1000000 planned\) could be read/) as string });
  });

  it('samples a few blocks of every CDX file, and estimates bulk as the cheaper read for cc-mirror-dev\'s default filter', async () => {
    const { params, reader } = await setUp();
    const s = sampleBlocks(params.plan, 3);
    expect(new Set(s.map((b) => b.entry.shard)).size).toBe(byShard(params.plan).length);
    expect(s.length).toBeLessThanOrEqual(3 * byShard(params.plan).length);
    const e = await estimateModes(params, reader, params.warcPaths.length);
    expect(e.sampledBlocks).toBe(s.length);
    expect(e.kept / e.records).toBeCloseTo(oracle.crawls[crawl]!.kept_captures / oracle.crawls[crawl]!.cdx_lines, 0);
    expect(chooseMode(e).mode).toBe('bulk');
  });
});
