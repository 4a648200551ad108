import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CcpError, layout, type ObjectInfo } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { partRow, putBatch } from '../../../tests/support/batches';
import { loadVersionSummary, readManifest } from './version-files';
import { INBOX_SETTLE_MS, markerScanOf, nextInboxState } from './merge-inbox';
import { ingestTotals, pendingMerge, runMerge, type MergeOptions } from './run-merge';

let dir: string;
let store: FsObjectStore;
/** The merges' clock. */
let clock: number;
/** Prefixes listed through `store` (what the merge, pendingMerge and ingestTotals asked the store for). */
let listed: string[];
let watched: FsObjectStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-inbox-'));
  store = new FsObjectStore({ root: dir });
  clock = Date.parse('2030-01-01T00:00:00Z');
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

async function currentStatus() {
  const m = await readManifest(store);
  const meta = m.versions.find((v) => v.version === m.current)!;
  return (await loadVersionSummary(store, meta.version, meta.tocCrc32)).status;
}

async function inbox(): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of store.list(layout.inboxPrefix())) keys.push(o.key);
  return keys;
}

describe('the merge inbox', () => {
  /** Moves the clock on `min` minutes. */
  const later = (min: number): void => void (clock += min * 60_000);
  /** Merges until the inbox alone is read: two full listings an hour apart that find every batch through the inbox. */
  async function settle(): Promise<void> {
    await putBatch(store, 1, 's1', rowsOf('settle-one', 1));
    await runMerge(opts());
    later(61);
    await putBatch(store, 1, 's2', rowsOf('settle-two', 1));
    await runMerge(opts());
    expect(markerScanOf((await currentStatus()))).toBe('inbox');
  }

  it('lists every marker until a full listing an hour on finds no batch without an entry, then the inbox alone; --rescan lists every marker again', async () => {
    expect(markerScanOf(undefined)).toBe('full');
    await putBatch(store, 1, 'b1', rowsOf('one', 3));
    expect(await runMerge(opts())).toMatchObject({ version: 'v000001', batches: 1, scan: 'full', withoutInbox: 0 });
    expect(listed).toContain(layout.batchesPrefix());
    const t0 = new Date(clock).toISOString();
    expect(await currentStatus()).toMatchObject({ markerInboxSince: t0, fullScanAt: t0 });
    // the entry of a merged batch goes once the version holding it is current
    expect(await inbox()).toEqual([]);

    // half an hour on, a worker of an older ccpipe (no inbox entry) completes a batch: found, and the hour starts again
    later(30);
    await putBatch(store, 1, 'b2', rowsOf('two', 2), { inbox: false });
    expect(await runMerge(opts())).toMatchObject({ version: 'v000002', batches: 1, scan: 'full', withoutInbox: 1 });
    const t1 = new Date(clock).toISOString();
    expect(await currentStatus()).toMatchObject({ markerInboxSince: t1, fullScanAt: t1 });

    // 59 minutes after that, a full listing still (and it finds every batch through the inbox)
    later(59);
    await putBatch(store, 1, 'b3', rowsOf('three', 1));
    expect(await runMerge(opts())).toMatchObject({ version: 'v000003', scan: 'full', withoutInbox: 0 });
    expect(markerScanOf(await currentStatus())).toBe('full');
    // the next one, an hour on: its listing finds none without an entry, so the merges after it read the inbox alone
    later(2);
    await putBatch(store, 1, 'b4', rowsOf('four', 1));
    expect(await runMerge(opts())).toMatchObject({ version: 'v000004', scan: 'full', withoutInbox: 0 });
    expect(await currentStatus()).toMatchObject({ markerInboxSince: t1, fullScanAt: new Date(clock).toISOString() });
    expect(markerScanOf(await currentStatus())).toBe('inbox');

    // no listing of batches/ by the merge, pendingMerge or ingestTotals (GC lists index/ and urls/)
    later(5);
    await putBatch(store, 1, 'b5', rowsOf('five', 4));
    await putBatch(store, 1, 'b6', rowsOf('six', 1), { inbox: false });
    listed = [];
    expect(await pendingMerge(watched)).toEqual({ version: 'v000004', batches: 1, rows: 4, lakeUrls: 7, completes: [] });
    expect(await ingestTotals(watched)).toEqual([{ datasetId: 1, batches: 5, rows: 11, failed: 0 }]);
    expect(await runMerge(opts())).toMatchObject({ version: 'v000005', batches: 1, urls: 11, scan: 'inbox' });
    expect(listed).toContain(layout.inboxPrefix());
    expect(listed.filter((p) => layout.batchesPrefix().startsWith(p) || p.startsWith(layout.batchesPrefix()))).toEqual([]);

    // a rescan finds the batch written without an entry, and merges list every marker again for an hour
    expect(markerScanOf(await currentStatus(), true)).toBe('full');
    later(1);
    expect(await runMerge(opts({ rescan: true }))).toMatchObject({ version: 'v000006', batches: 1, urls: 12, scan: 'full', withoutInbox: 1 });
    expect(listed).toContain(layout.batchesPrefix());
    expect(markerScanOf(await currentStatus())).toBe('full');
  });

  it('the inbox clock: a since ahead of the listing (a clock that went back) is taken as the listing time; unreadable times mean a full listing', () => {
    const at = new Date('2030-01-01T12:00:00Z');
    expect(nextInboxState({ markerInboxSince: '2030-01-02T00:00:00.000Z', fullScanAt: '2030-01-02T00:00:00.000Z' }, 'full', 0, at)).toEqual({ markerInboxSince: at.toISOString(), fullScanAt: at.toISOString() });
    expect(nextInboxState({ markerInboxSince: '2030-01-01T10:00:00.000Z', fullScanAt: '2030-01-01T11:30:00.000Z' }, 'inbox', 0, at)).toEqual({ markerInboxSince: '2030-01-01T10:00:00.000Z', fullScanAt: '2030-01-01T11:30:00.000Z' });
    expect(nextInboxState(undefined, 'full', 5, at)).toEqual({ markerInboxSince: at.toISOString(), fullScanAt: at.toISOString() });
    expect(markerScanOf({ markerInboxSince: 'not a date', fullScanAt: '2030-01-01T11:30:00.000Z' })).toBe('full');
    expect(markerScanOf({ markerInboxSince: '2030-01-01T10:00:00.000Z', fullScanAt: '2030-01-01T11:00:00.000Z' })).toBe('inbox');
    expect(markerScanOf({ markerInboxSince: '2030-01-01T10:00:00.000Z', fullScanAt: '2030-01-01T10:59:59.999Z' })).toBe('full');
  });

  it('entries of batches merged before (a redelivery writes one again) and entries whose marker is gone are deleted, without a version', async () => {
    await settle();
    await store.put(layout.inboxEntry(1, 's1'), (await store.get(layout.batchMarker(1, 's1')))!);
    // a batch folder removed by hand after its entry was written: the entry points at nothing
    await store.put(layout.inboxEntry(1, 'ghost'), Buffer.from(JSON.stringify({ v: 1, batchId: 'ghost', datasetId: 1, rows: 9, part: layout.batchPart(1, 'ghost') })));
    expect(await pendingMerge(watched)).toMatchObject({ batches: 0, rows: 0 });
    expect(await ingestTotals(watched)).toEqual([{ datasetId: 1, batches: 2, rows: 2, failed: 0 }]);
    expect(await runMerge(opts())).toMatchObject({ version: 'v000002', published: false, batches: 0, scan: 'inbox' });
    expect(await inbox()).toEqual([]);
    // a file in the inbox that is no entry is neither merged nor deleted
    await store.put('inbox/dataset_id=1/notes.txt', Buffer.from('x'));
    expect(await runMerge(opts())).toMatchObject({ published: false });
    expect(await inbox()).toEqual(['inbox/dataset_id=1/notes.txt']);
  });

  it('entries that cannot be deleted after the flip (also refused at once, as by a lost merge lease) leave the merge published, reported, and go with the next merge', async () => {
    await settle();
    await putBatch(store, 1, 'b2', rowsOf('two', 3));
    await putBatch(store, 2, 'b3', rowsOf('three', 1));
    const failing = Object.assign(Object.create(watched) as FsObjectStore, {
      // throws before any promise exists, as the lease fence does
      delete: (key: string): Promise<void> => {
        if (key.startsWith(layout.inboxPrefix())) throw new CcpError('CCP_ERR_MERGE_BUSY', 'the merge lease was lost');
        return store.delete(key);
      },
    });
    const r = await runMerge(opts({ store: failing }));
    expect(r).toMatchObject({ version: 'v000003', published: true, batches: 2, urls: 6, gcError: 'CCP_ERR_MERGE_BUSY' });
    expect((await inbox()).sort()).toEqual([layout.inboxEntry(1, 'b2'), layout.inboxEntry(2, 'b3')].sort());
    expect((await readManifest(store)).current).toBe('v000003');
    // the next merge finds them held by the current version: nothing to fold, entries deleted
    expect(await pendingMerge(watched)).toMatchObject({ batches: 0 });
    expect(await runMerge(opts())).toMatchObject({ version: 'v000003', published: false, batches: 0, urls: 6 });
    expect(await inbox()).toEqual([]);
  });

  it('a merge that fails before its flip keeps the entries; the rerun folds each batch once', async () => {
    await settle();
    await putBatch(store, 1, 'b2', rowsOf('two', 3));
    const dying = Object.assign(Object.create(watched) as FsObjectStore, {
      put: async (key: string, data: Uint8Array) => {
        if (key === 'index/manifest.json') throw Object.assign(new Error('killed'), { code: 'EIO' });
        await store.put(key, data);
      },
    });
    await expect(runMerge(opts({ store: dying }))).rejects.toThrow();
    expect(await inbox()).toEqual([layout.inboxEntry(1, 'b2')]);
    expect(await runMerge(opts())).toMatchObject({ version: 'v000003', published: true, batches: 1, urls: 5, scan: 'inbox' });
    expect(await inbox()).toEqual([]);
    expect(await ingestTotals(store)).toEqual([{ datasetId: 1, batches: 3, rows: 5, failed: 0 }]);
  });
});
