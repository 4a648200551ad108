import { compileFilter, decodeBatch, registeredDomainOf, type Batch, type BatchPublisher, type RangeReader } from '@ccpipe/core';
import { FetchStatusError, FsRangeReader, MemoryBatchQueue, MemoryObjectStore, systemClock } from '@ccpipe/adapters';
import { CC_MIRROR_DEV, DEV_CRAWLS, loadOracle, oracleUrlForm } from '../../../tests/support/corpus';
import { MAX_FAILED_IN_A_ROW, runBatcher, type BatcherParams } from './batcher';
import { loadCheckpoint, runFingerprint } from './checkpoint';
import { loadClusterIdx } from './cluster-idx-source';
import { planBlocks } from './plan-blocks';
import { TargetSet } from './targets';

const oracle = loadOracle();
const defaultFilter = compileFilter({}, { registeredDomainOf });

/** Collects published batches; optionally fails (non-retryably) from the n-th publish on. */
class CollectingPublisher implements BatchPublisher {
  readonly batches: Batch[] = [];
  constructor(private readonly failFrom = Infinity) {}
  async publish(batch: Batch): Promise<void> {
    if (this.batches.length >= this.failFrom) throw new Error('broker gone');
    this.batches.push(batch);
  }
  async close(): Promise<void> {}
}

/** Counts reads of the wrapped reader. */
function counting(reader: RangeReader): RangeReader & { reads: number } {
  const r = {
    reads: 0,
    read: (path: string, offset: number, length: number, signal?: AbortSignal) => {
      r.reads++;
      return reader.read(path, offset, length, signal);
    },
    stream: (path: string, signal?: AbortSignal) => reader.stream(path, signal),
    streamRange: (path: string, offset: number, length: number, signal?: AbortSignal) => reader.streamRange(path, offset, length, signal),
    close: () => reader.close(),
  };
  return r;
}

async function setUp(crawl: string, opts: { targets?: TargetSet; maxBlocks?: number } = {}) {
  const reader = counting(new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true }));
  const { entries } = await loadClusterIdx(crawl, { localDir: '/nonexistent', reader });
  const plan = planBlocks(entries, { targets: opts.targets ?? null, maxBlocks: opts.maxBlocks ?? null });
  const params: BatcherParams = {
    crawl,
    dataset: crawl,
    datasetId: 1,
    fingerprint: runFingerprint({ crawl }),
    plan,
    startIndex: 0,
    filter: defaultFilter,
    targets: opts.targets ?? null,
    batchSize: 40,
    blockConcurrency: 3,
    publishWindow: 8,
    publishAttempts: 1,
  };
  return { reader, entries, plan, params, store: new MemoryObjectStore() };
}

describe('runBatcher over cc-mirror-dev', () => {
  it.each(DEV_CRAWLS)('%s: reads every line, keeps exactly the oracle captures, counts drops by reason', async (crawl) => {
    const { reader, plan, params, store } = await setUp(crawl);
    const publisher = new CollectingPublisher();
    const summary = await runBatcher(params, { reader, publisher, store, clock: systemClock });
    const want = oracle.crawls[crawl]!;
    expect(plan.length).toBe(want.blocks);
    expect(summary.blocks).toBe(want.blocks);
    expect(summary.records).toBe(want.cdx_lines);
    expect(summary.kept).toBe(want.kept_captures);
    const droppedTotal = Object.values(summary.dropped).reduce((a, b) => a + b, 0);
    expect(summary.kept + droppedTotal).toBe(summary.records);
    expect(Object.keys(summary.dropped).sort()).toEqual(expect.arrayContaining(['language', 'status']));
    const records = publisher.batches.flatMap((b) => b.records);
    expect(records).toHaveLength(want.kept_captures);
    expect(publisher.batches.every((b) => b.records.length > 0 && b.records.length <= 40)).toBe(true);
    // Every kept capture's URL is one the oracle expects, and every expected URL is there.
    const got = new Set(records.map((r) => oracleUrlForm(r.url)));
    const expected = new Set(Object.values(want.domains).flatMap((d) => d.urls));
    expect(got).toEqual(expected);
    // Ids are deterministic and unique; the checkpoint says done.
    expect(new Set(publisher.batches.map((b) => b.id)).size).toBe(publisher.batches.length);
    const cp = await loadCheckpoint(store, crawl, params.fingerprint);
    expect(cp).toMatchObject({ done: true, nextPlanIndex: plan.length });
  });

  it('resumes after a failure from its checkpoint without losing a batch', async () => {
    const crawl = DEV_CRAWLS[0];
    const first = await setUp(crawl);
    const failing = new CollectingPublisher(9);
    await expect(runBatcher({ ...first.params, publishWindow: 1 }, { reader: first.reader, publisher: failing, store: first.store, clock: systemClock })).rejects.toThrow('broker gone');
    const cp = await loadCheckpoint(first.store, crawl, first.params.fingerprint);
    expect(cp).not.toBeNull();
    expect(cp!.done).toBe(false);
    expect(cp!.nextPlanIndex).toBeGreaterThan(0);
    expect(cp!.nextPlanIndex).toBeLessThan(first.plan.length);

    // the batches of the blocks before the checkpoint, counted (the first run also published some beyond it)
    expect(cp!.batchesPublished).toBeGreaterThan(0);
    expect(cp!.batchesPublished).toBeLessThanOrEqual(failing.batches.length);
    expect(cp!.recordsPublished).toBeGreaterThanOrEqual(cp!.batchesPublished!);

    const second = new CollectingPublisher();
    const summary = await runBatcher(
      { ...first.params, startIndex: cp!.nextPlanIndex, startBatches: cp!.batchesPublished, startRecords: cp!.recordsPublished },
      { reader: first.reader, publisher: second, store: first.store, clock: systemClock },
    );
    expect(summary.done).toBe(true);
    // Union of both runs = a clean run's batches (ids and contents); overlap is only re-published whole batches.
    const clean = new CollectingPublisher();
    const fresh = await setUp(crawl);
    await runBatcher(fresh.params, { reader: fresh.reader, publisher: clean, store: fresh.store, clock: systemClock });
    const union = new Map([...failing.batches, ...second.batches].map((b) => [b.id, b]));
    expect([...union.keys()].sort()).toEqual(clean.batches.map((b) => b.id).sort());
    for (const b of clean.batches) expect(union.get(b.id)).toEqual(b);
    // over both runs the finished checkpoint counts every batch once, as a clean run's does
    const records = clean.batches.reduce((n, b) => n + b.records.length, 0);
    expect((await loadCheckpoint(first.store, crawl, first.params.fingerprint))!).toMatchObject({ done: true, batchesPublished: clean.batches.length, recordsPublished: records });
    expect((await loadCheckpoint(fresh.store, crawl, fresh.params.fingerprint))!).toMatchObject({ done: true, batchesPublished: clean.batches.length, recordsPublished: records });
  });

  it('skips a block that cannot be had for good (does not inflate, 404), records it, and goes on; a block unreadable for now stops the run there', async () => {
    const crawl = DEV_CRAWLS[0];
    const { reader, plan, params, store } = await setUp(crawl);
    expect(plan.length).toBeGreaterThan(3);
    const clean = new CollectingPublisher();
    await runBatcher(params, { reader, publisher: clean, store: new MemoryObjectStore(), clock: systemClock });
    const blockOf = (b: Batch): number => b.blockNo;
    // block 1 comes back as bytes that are not gzip, block 2 as a 404
    const [bad, missing] = [plan[1]!, plan[2]!];
    const broken: RangeReader = {
      read: async (path, offset, length, signal) => {
        if (offset === bad.entry.offset && path.endsWith(bad.entry.shard)) return Buffer.from('not a gzip member');
        if (offset === missing.entry.offset && path.endsWith(missing.entry.shard)) throw new FetchStatusError(404, false);
        return reader.read(path, offset, length, signal);
      },
      stream: (path, signal) => reader.stream(path, signal),
      streamRange: (path, offset, length, signal) => reader.streamRange(path, offset, length, signal),
      close: async () => undefined,
    };
    const publisher = new CollectingPublisher();
    const failed: { ordinal: number; code: string }[] = [];
    const summary = await runBatcher(params, { reader: broken, publisher, store, clock: systemClock, events: { onBlockFailed: (e) => failed.push(e) } });
    const want = [{ ordinal: bad.ordinal, code: 'CCP_ERR_CDX_BLOCK' }, { ordinal: missing.ordinal, code: 'CCP_ERR_FETCH_STATUS' }];
    expect([summary.done, summary.failedBlocks, failed]).toEqual([true, want, want]);
    // every other block's batches, exactly
    expect(publisher.batches.map((b) => b.id)).toEqual(clean.batches.filter((b) => blockOf(b) !== bad.ordinal && blockOf(b) !== missing.ordinal).map((b) => b.id));
    expect(await loadCheckpoint(store, crawl, params.fingerprint)).toMatchObject({ done: true, nextPlanIndex: plan.length, failedBlocks: want });

    // unreadable for now (a 503 after every retry): the run fails at that block, and a rerun resumes there
    const overloaded: RangeReader = { ...broken, read: async (path, offset, length, signal) => {
      if (offset === plan[3]!.entry.offset && path.endsWith(plan[3]!.entry.shard)) throw new FetchStatusError(503, true);
      return reader.read(path, offset, length, signal);
    } };
    const store2 = new MemoryObjectStore();
    await expect(runBatcher(params, { reader: overloaded, publisher: new CollectingPublisher(), store: store2, clock: systemClock })).rejects.toMatchObject({ code: 'CCP_ERR_FETCH_STATUS' });
    const cp = await loadCheckpoint(store2, crawl, params.fingerprint);
    expect(cp?.done ?? false).toBe(false);
    expect(cp?.nextPlanIndex ?? 0).toBeLessThanOrEqual(3);
    expect(cp?.failedBlocks).toBeUndefined();
  });

  it('a source that refuses every block (403), or misses many in a row, fails the run instead of skipping the crawl; the checkpoint stays before them', async () => {
    const crawl = DEV_CRAWLS[0];
    const { reader, plan, params } = await setUp(crawl);
    expect(plan.length).toBeGreaterThan(MAX_FAILED_IN_A_ROW + 2);
    const answering = (status: number, from: number): RangeReader => ({
      read: async (path, offset, length, signal) => {
        const i = plan.findIndex((b) => b.entry.offset === offset && path.endsWith(b.entry.shard));
        if (i >= from) throw new FetchStatusError(status, false);
        return reader.read(path, offset, length, signal);
      },
      stream: (path, signal) => reader.stream(path, signal),
      streamRange: (path, offset, length, signal) => reader.streamRange(path, offset, length, signal),
      close: async () => undefined,
    });
    const forbidden = new MemoryObjectStore();
    await expect(runBatcher(params, { reader: answering(403, 2), publisher: new CollectingPublisher(), store: forbidden, clock: systemClock })).rejects.toMatchObject({ code: 'CCP_ERR_FETCH_STATUS' });
    expect((await loadCheckpoint(forbidden, crawl, params.fingerprint))?.nextPlanIndex ?? 0).toBeLessThanOrEqual(2);
    // 404 from block 2 on: a few would be skipped, a row of them is a wrong source
    const missing = new MemoryObjectStore();
    await expect(runBatcher(params, { reader: answering(404, 2), publisher: new CollectingPublisher(), store: missing, clock: systemClock })).rejects.toMatchObject({ code: 'CCP_ERR_BATCHER_SOURCE' });
    const cp = await loadCheckpoint(missing, crawl, params.fingerprint);
    expect([cp?.done ?? false, (cp?.nextPlanIndex ?? 0) <= 2, cp?.failedBlocks]).toEqual([false, true, undefined]);
  });

  it('a stop while publishes are in flight ends the run undone, not failed; the next run publishes the rest', async () => {
    const crawl = DEV_CRAWLS[0];
    const { reader, params, store } = await setUp(crawl);
    const clean = new CollectingPublisher();
    await runBatcher(params, { reader, publisher: clean, store: new MemoryObjectStore(), clock: systemClock });
    const stop = new AbortController();
    const confirmed: Batch[] = [];
    // confirms come for the first 5 batches; the 6th waits until the stop, which cuts it short as the publisher would
    const slow: BatchPublisher = {
      publish: async (batch, signal) => {
        if (confirmed.length >= 5) {
          stop.abort(new Error('SIGTERM'));
          signal?.throwIfAborted();
        }
        confirmed.push(batch as Batch);
      },
      close: async () => undefined,
    };
    const summary = await runBatcher(params, { reader, publisher: slow, store, clock: systemClock, signal: stop.signal });
    expect(summary.done).toBe(false);
    expect((await loadCheckpoint(store, crawl, params.fingerprint))?.done ?? false).toBe(false);
    const rest = new CollectingPublisher();
    expect((await runBatcher({ ...params, startIndex: (await loadCheckpoint(store, crawl, params.fingerprint))?.nextPlanIndex ?? 0 }, { reader, publisher: rest, store, clock: systemClock })).done).toBe(true);
    expect(new Set([...confirmed, ...rest.batches].map((b) => b.id))).toEqual(new Set(clean.batches.map((b) => b.id)));
  });

  it('refuses to resume a dataset with other settings', async () => {
    const { store, params, reader } = await setUp(DEV_CRAWLS[0], { maxBlocks: 2 });
    await runBatcher(params, { reader, publisher: new CollectingPublisher(), store, clock: systemClock });
    await expect(loadCheckpoint(store, params.dataset, runFingerprint({ other: true }))).rejects.toMatchObject({ code: 'CCP_ERR_CHECKPOINT_MISMATCH' });
  });

  it('--reset-checkpoint starts over a dataset whose filter kept nothing, and only such a dataset', async () => {
    const crawl = DEV_CRAWLS[0];
    const { store, params, reader } = await setUp(crawl, { maxBlocks: 2 });
    // a filter that cannot match: no record of the crawl is in Zulu
    const nothing = { ...params, fingerprint: runFingerprint({ languages: ['zul'] }), filter: compileFilter({ languages: { mode: 'contains', codes: ['zul'] } }) };
    expect(await runBatcher(nothing, { reader, publisher: new CollectingPublisher(), store, clock: systemClock })).toMatchObject({ kept: 0, batches: 0, done: true });
    // the usual settings are refused without the flag, with a message pointing at it …
    await expect(loadCheckpoint(store, crawl, params.fingerprint)).rejects.toMatchObject({
      code: 'CCP_ERR_CHECKPOINT_MISMATCH',
      message: expect.stringMatching(/published no batch under them; to start it over with these settings, run ccpipe batcher again with --reset-checkpoint$/),
    });
    // … and accepted with it: the run starts over and its checkpoint now holds the new settings
    expect(await loadCheckpoint(store, crawl, params.fingerprint, { reset: true })).toBeNull();
    const publisher = new CollectingPublisher();
    const summary = await runBatcher(params, { reader, publisher, store, clock: systemClock });
    expect(summary.kept).toBeGreaterThan(0);
    expect(await loadCheckpoint(store, crawl, params.fingerprint)).toMatchObject({ done: true, batchesPublished: publisher.batches.length });
    // a dataset that did publish batches is still refused: new ones would reuse the finished batches' ids
    await expect(loadCheckpoint(store, crawl, nothing.fingerprint, { reset: true })).rejects.toMatchObject({
      code: 'CCP_ERR_CHECKPOINT_MISMATCH',
      message: expect.stringContaining(`published ${publisher.batches.length} batches under them`),
    });
    // with equal settings the flag changes nothing
    expect(await loadCheckpoint(store, crawl, params.fingerprint, { reset: true })).toMatchObject({ done: true });
  });

  it('domain-targeted runs read only the blocks that can hold the domains', async () => {
    const crawl = DEV_CRAWLS[0];
    const domains = Object.entries(oracle.crawls[crawl]!.domains)
      .sort((a, b) => b[1].count - a[1].count)
      .slice(0, 3)
      .map(([d]) => d);
    const targets = TargetSet.fromLines(domains);
    const { reader, plan, params, store, entries } = await setUp(crawl, { targets });
    const publisher = new CollectingPublisher();
    const summary = await runBatcher(params, { reader, publisher, store, clock: systemClock });
    expect(plan.length).toBeLessThan(entries.length);
    expect(reader.reads).toBe(plan.length);
    const urls = new Set(publisher.batches.flatMap((b) => b.records).map((r) => oracleUrlForm(r.url)));
    const expected = new Set(domains.flatMap((d) => oracle.crawls[crawl]!.domains[d]!.urls));
    expect(urls).toEqual(expected);
    // The planned blocks also hold other domains' captures: they are read, counted and dropped as not targeted.
    expect(summary.dropped['not_targeted']).toBeGreaterThan(0);
    const droppedTotal = Object.values(summary.dropped).reduce((a, b) => a + b, 0);
    expect(summary.kept + droppedTotal).toBe(summary.records);
  });

  it('publishes batches a consumer can decode (through the in-memory queue)', async () => {
    const { reader, params, store } = await setUp(DEV_CRAWLS[1], { maxBlocks: 3 });
    const queue = new MemoryBatchQueue();
    const summary = await runBatcher(params, { reader, publisher: queue.publisher(), store, clock: systemClock });
    const consumer = queue.consumer({ prefetch: 100 });
    const got: Batch[] = [];
    await consumer.start(async (d) => {
      got.push(decodeBatch(d.body));
      await d.ack();
    });
    await new Promise((r) => setTimeout(r, 50));
    await consumer.close();
    expect(got.reduce((n, b) => n + b.records.length, 0)).toBe(summary.kept);
    expect(await loadCheckpoint(store, params.dataset, params.fingerprint)).toMatchObject({ done: true, nextPlanIndex: 3, planLength: 3 });
  });
});
