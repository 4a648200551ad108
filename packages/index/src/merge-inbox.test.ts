import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layout, type ObjectInfo } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { partRow, putBatch } from '../../../tests/support/batches';
import { loadVersionSummary, readManifest } from './version-files';
import { INBOX_SETTLE_MS, ingestTotals, markerScanOf, pendingMerge, runMerge, type MergeOptions } from './run-merge';

let dir: string;
let store: FsObjectStore;
/** The merges' clock: pendingMerge and ingestTotals read the system clock, so it starts in the past and moves to now. */
let clock: number;
/** Prefixes listed through `store` (what the merge, pendingMerge and ingestTotals asked the store for). */
let listed: string[];
let watched: FsObjectStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-inbox-'));
  store = new FsObjectStore({ root: dir });
  clock = Date.now() - 2 * INBOX_SETTLE_MS;
  listed = [];
  watched = Object.assign(Object.create(store) as FsObjectStore, {
    list: (prefix: string): AsyncIterable<ObjectInfo> => {
      listed.push(prefix);
      return store.list(prefix);
    },
  });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterAll(async () => {
  await closeDuckDbParquetEngine();
});

const opts = (over: Partial<MergeOptions> = {}): MergeOptions => ({
  store: watched, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 60_000, now: () => new Date(clock), ...over,
});

const rowsOf = (id: string, n: number) => Array.from({ length: n }, (_, i) => partRow(1, `https://${id}.example/${i}`, '20300101000000'));

async function statusOf(version: string) {
  const meta = (await readManifest(store)).versions.find((v) => v.version === version)!;
  return (await loadVersionSummary(store, version, meta.tocCrc32)).status;
}

async function inbox(): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of store.list(layout.inboxPrefix())) keys.push(o.key);
  return keys;
}

describe('the merge inbox', () => {
  it('lists every marker until merges have read the inbox for an hour, then the inbox alone; --rescan lists every marker again', async () => {
    expect(markerScanOf(undefined, new Date(clock))).toBe('full');
    await putBatch(store, 1, 'b1', rowsOf('one', 3));
    expect(await runMerge(opts())).toMatchObject({ version: 'v000001', batches: 1 });
    expect(listed).toContain(layout.batchesPrefix());
    const since = (await statusOf('v000001')).markerInboxSince;
    expect(since).toBe(new Date(clock).toISOString());
    // the entry of a merged batch goes once the version holding it is current
    expect(await inbox()).toEqual([]);

    // within the hour a worker of an older ccpipe (no inbox entry) still has its batch merged
    clock += INBOX_SETTLE_MS - 1;
    expect(markerScanOf({ markerInboxSince: since }, new Date(clock))).toBe('full');
    await putBatch(store, 1, 'b2', rowsOf('two', 2), { inbox: false });
    expect(await runMerge(opts())).toMatchObject({ version: 'v000002', batches: 1 });
    expect((await statusOf('v000002')).markerInboxSince).toBe(since);

    // then the inbox alone: no listing of batches/ by the merge, pendingMerge or ingestTotals (GC lists index/, urls/)
    clock = Date.now();
    expect(markerScanOf({ markerInboxSince: since }, new Date(clock))).toBe('inbox');
    await putBatch(store, 1, 'b3', rowsOf('three', 4));
    await putBatch(store, 1, 'b4', rowsOf('four', 1), { inbox: false });
    listed = [];
    expect(await pendingMerge(watched)).toEqual({ version: 'v000002', batches: 1, rows: 4, lakeUrls: 5 });
    expect(await ingestTotals(watched)).toEqual([{ datasetId: 1, batches: 3, rows: 9, failed: 0 }]);
    expect(await runMerge(opts())).toMatchObject({ version: 'v000003', batches: 1, urls: 9 });
    expect(listed).toContain(layout.inboxPrefix());
    expect(listed.filter((p) => layout.batchesPrefix().startsWith(p) || p.startsWith(layout.batchesPrefix()))).toEqual([]);

    // a rescan finds the batch written without an entry
    expect(markerScanOf({ markerInboxSince: since }, new Date(clock), true)).toBe('full');
    expect(await runMerge(opts({ rescan: true }))).toMatchObject({ version: 'v000004', batches: 1, urls: 10 });
    expect(listed).toContain(layout.batchesPrefix());
    expect(markerScanOf({ markerInboxSince: 'not a date' }, new Date(clock))).toBe('full');
  });

  it('the entry of a batch merged before (a redelivery writes it again) is deleted without publishing a version', async () => {
    await putBatch(store, 1, 'b1', rowsOf('one', 2));
    await runMerge(opts());
    clock = Date.now();
    await store.put(layout.inboxEntry(1, 'b1'), (await store.get(layout.batchMarker(1, 'b1')))!);
    expect(await pendingMerge(watched)).toMatchObject({ batches: 0, rows: 0 });
    expect(await runMerge(opts())).toMatchObject({ version: 'v000001', published: false, batches: 0 });
    expect(await inbox()).toEqual([]);
    // a file in the inbox that is no entry is neither merged nor deleted
    await store.put('inbox/dataset_id=1/notes.txt', Buffer.from('x'));
    expect(await runMerge(opts())).toMatchObject({ published: false });
    expect(await inbox()).toEqual(['inbox/dataset_id=1/notes.txt']);
  });

  it('entries that could not be deleted after the flip are reported, folded into no later version, and deleted by the next merge', async () => {
    await putBatch(store, 1, 'b1', rowsOf('one', 2));
    await runMerge(opts());
    clock = Date.now();
    await putBatch(store, 1, 'b2', rowsOf('two', 3));
    await putBatch(store, 2, 'b3', rowsOf('three', 1));
    const failing = Object.assign(Object.create(watched) as FsObjectStore, {
      delete: async (key: string) => {
        if (key.startsWith(layout.inboxPrefix())) throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
        await store.delete(key);
      },
    });
    const r = await runMerge(opts({ store: failing }));
    expect(r).toMatchObject({ version: 'v000002', published: true, batches: 2, urls: 6 });
    expect(r.gcError).toEqual(expect.any(String));
    expect((await inbox()).sort()).toEqual([layout.inboxEntry(1, 'b2'), layout.inboxEntry(2, 'b3')].sort());
    expect((await readManifest(store)).current).toBe('v000002');
    // the next merge finds them held by the current version: nothing to fold, entries deleted
    expect(await pendingMerge(watched)).toMatchObject({ batches: 0 });
    expect(await runMerge(opts())).toMatchObject({ version: 'v000002', published: false, batches: 0, urls: 6 });
    expect(await inbox()).toEqual([]);
  });

  it('a merge that fails before its flip keeps the entries; the rerun folds each batch once', async () => {
    await putBatch(store, 1, 'b1', rowsOf('one', 2));
    await runMerge(opts());
    clock = Date.now();
    await putBatch(store, 1, 'b2', rowsOf('two', 3));
    const dying = Object.assign(Object.create(watched) as FsObjectStore, {
      put: async (key: string, data: Uint8Array) => {
        if (key === 'index/manifest.json') throw Object.assign(new Error('killed'), { code: 'EIO' });
        await store.put(key, data);
      },
    });
    await expect(runMerge(opts({ store: dying }))).rejects.toThrow();
    expect(await inbox()).toEqual([layout.inboxEntry(1, 'b2')]);
    expect(await runMerge(opts())).toMatchObject({ version: 'v000002', published: true, batches: 1, urls: 5 });
    expect(await inbox()).toEqual([]);
    expect(await ingestTotals(store)).toEqual([{ datasetId: 1, batches: 2, rows: 5, failed: 0 }]);
  });
});
