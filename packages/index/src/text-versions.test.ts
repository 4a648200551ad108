import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalizeUrl, textKept } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine, type PartRow } from '@ccpipe/adapters';
import { readParquetRows } from '../../../tests/support/parquet';
import { partRow, putBatch } from '../../../tests/support/batches';
import { indexLayout, type IndexManifest, type LakeFileEntry, type VersionStatus } from './format';
import { openIndexSource } from './index-source';
import { startApi } from '@ccpipe/api';
import { runMerge, type MergeOptions } from './run-merge';

let dir: string;
let store: FsObjectStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-textv-'));
  store = new FsObjectStore({ root: dir });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterAll(async () => {
  await closeDuckDbParquetEngine();
});

const opts = (over: Partial<MergeOptions> = {}): MergeOptions => ({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 60_000, ...over });

async function currentVersion(): Promise<string> {
  return (JSON.parse(await readFile(join(dir, indexLayout.manifest()), 'utf8')) as IndexManifest).current!;
}

async function versionJson<T>(name: string): Promise<T> {
  return JSON.parse(await readFile(join(dir, indexLayout.versionFile(await currentVersion(), name)), 'utf8')) as T;
}

/** Every lake row of the current version, read by an independent Parquet reader: `dataset url` → its text. */
async function lakeTexts(): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (const f of await versionJson<LakeFileEntry[]>('files.json')) {
    for (const r of await readParquetRows(await readFile(join(dir, f.key)))) {
      const key = `${f.datasetId} ${r['url'] as string}`;
      expect(out.has(key)).toBe(false);
      out.set(key, (r['text'] as string | null) ?? null);
    }
  }
  return out;
}

/** A capture of `url` in `datasetId` at `ts`, its text naming both. */
const cap = (datasetId: number, url: string, ts: string, over: Partial<PartRow> = {}): PartRow => partRow(datasetId, url, ts, { text: `text of ${url} in ${datasetId}`, ...over });

/**
 * What the lake must hold under a policy of `versions`: every (dataset, url) of `caps` (one per pair, latest capture
 * wins, as the merge keeps them) with its text when the reference rule keeps it.
 */
function expected(caps: readonly PartRow[], versions: number | null): Map<string, string | null> {
  const latest = new Map<string, PartRow>();
  for (const c of caps) {
    const k = `${c.datasetId} ${c.url}`;
    if (!latest.has(k) || latest.get(k)!.timestamp! < c.timestamp!) latest.set(k, c);
  }
  const byUrl = new Map<string, PartRow[]>();
  for (const c of latest.values()) byUrl.set(c.url, [...(byUrl.get(c.url) ?? []), c]);
  const out = new Map<string, string | null>();
  for (const list of byUrl.values()) {
    const kept = textKept(list.map((c) => ({ datasetId: c.datasetId, ts: Number(c.timestamp) })), versions);
    list.forEach((c, i) => out.set(`${c.datasetId} ${c.url}`, kept[i] ? c.text : null));
  }
  return out;
}

const A = 'https://www.example.com/a';
const B = 'https://www.example.com/b';
const C = 'https://blog.example.org/c';

describe('the content-versions policy (textVersions)', () => {
  it('keeps the text of the newest N captures of a URL as crawls arrive one merge at a time, rewriting older files', async () => {
    const all: PartRow[] = [];
    // four crawls, a month apart; A in every one, B in two, C in the last only; crawl 3 recaptures A twice
    const crawls: PartRow[][] = [
      [cap(1, A, '20300101000000'), cap(1, B, '20300101000000')],
      [cap(2, A, '20300201000000')],
      [cap(3, A, '20300301000000'), cap(3, A, '20300302000000', { text: 'A again in 3' }), cap(3, B, '20300301000000')],
      [cap(4, A, '20300401000000'), cap(4, C, '20300401000000')],
    ];
    const dropped: number[] = [];
    for (const [i, rows] of crawls.entries()) {
      all.push(...rows);
      await putBatch(store, i + 1, `b${i + 1}`, rows);
      dropped.push((await runMerge(opts({ textVersions: 2 }))).textDropped);
      expect(await lakeTexts()).toEqual(expected(all, 2));
    }
    // crawl 3 dropped A's text in crawl 1; crawl 4 dropped A's text in crawl 2 (B's crawl 1 text stays: 2 captures)
    expect(dropped).toEqual([0, 0, 1, 1]);
    expect((await versionJson<VersionStatus>('status.json')).textVersions).toBe(2);
    // the API serves the history with the texts the policy kept
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      const v = (await src.current())!;
      const history = await v.captures(canonicalizeUrl(A).url, { text: true });
      expect(history.map((c) => [c.datasetId, c.text, c.textLength])).toEqual([
        [1, null, null], [2, null, null], [3, 'A again in 3', 12], [4, `text of ${A} in 4`, `text of ${A} in 4`.length],
      ]);
    } finally {
      await src.close();
    }
  });

  it('ranks the new rows too: a crawl merged late, older than the lake, keeps no text for a URL already captured N times', async () => {
    const rows = [cap(5, A, '20300501000000'), cap(6, A, '20300601000000'), cap(7, A, '20300701000000', { text: null })];
    await putBatch(store, 5, 'b5', rows.slice(0, 1));
    await putBatch(store, 6, 'b6', rows.slice(1, 2));
    await putBatch(store, 7, 'b7', rows.slice(2));
    // a first merge of three crawls at once: the new rows are ranked among themselves
    expect((await runMerge(opts({ textVersions: 2 }))).textDropped).toBe(1);
    expect(await lakeTexts()).toEqual(expected(rows, 2));
    const late = cap(2, A, '20290101000000');
    await putBatch(store, 2, 'b2', [late]);
    const r = await runMerge(opts()); // the lake's policy applies without the option
    expect(r.textDropped).toBe(1);
    expect(r.rewrittenFiles).toBe(1); // only the late crawl's new file: no lake row loses its text
    expect(await lakeTexts()).toEqual(expected([...rows, late], 2));
  });

  it('tightening the policy of a lake ranks every URL once, even with no new batch; loosening it brings no text back', async () => {
    const rows = [
      cap(1, A, '20300101000000'), cap(2, A, '20300201000000'), cap(3, A, '20300301000000'),
      cap(1, B, '20300101000000'), cap(2, B, '20300201000000'), cap(1, C, '20300101000000'),
    ];
    for (const d of [1, 2, 3]) await putBatch(store, d, `b${d}`, rows.filter((r) => r.datasetId === d));
    await runMerge(opts());
    expect(await lakeTexts()).toEqual(expected(rows, null));
    const r = await runMerge(opts({ textVersions: 1 }));
    expect(r).toMatchObject({ published: true, batches: 0, textDropped: 3 });
    expect(await lakeTexts()).toEqual(expected(rows, 1));
    // the same policy again: nothing to do
    expect((await runMerge(opts({ textVersions: 1 }))).published).toBe(false);
    // loosened: recorded, the next crawl's rows keep their text, the dropped texts stay dropped
    const next = cap(4, A, '20300401000000');
    await putBatch(store, 4, 'b4', [next]);
    expect((await runMerge(opts({ textVersions: 'all' }))).textDropped).toBe(0);
    expect((await versionJson<VersionStatus>('status.json')).textVersions).toBeUndefined();
    const texts = await lakeTexts();
    expect(texts.get(`4 ${canonicalizeUrl(A).url}`)).toBe(next.text);
    expect(texts.get(`3 ${canonicalizeUrl(A).url}`)).toBe(rows[2]!.text);
    expect(texts.get(`2 ${canonicalizeUrl(A).url}`)).toBeNull();
  });

  it('works on a lean lake (no url_id column) and folds a rewritten partition with its new rows', async () => {
    const rows = [cap(1, A, '20300101000000'), cap(1, B, '20300101000000'), cap(2, A, '20300201000000'), cap(2, B, '20300201000000')];
    await putBatch(store, 1, 'b1', rows.slice(0, 2));
    await runMerge(opts({ lakeColumns: 'lean', partitionBits: 1, textVersions: 1 }));
    await putBatch(store, 2, 'b2', rows.slice(2));
    expect((await runMerge(opts({ partitionBits: 1 }))).textDropped).toBe(2);
    expect(await lakeTexts()).toEqual(expected(rows, 1));
    // dataset 1 gets a recapture of A: it supersedes the text-less row and, being newest, keeps its text
    const again = cap(1, A, '20300301000000', { text: 'A, third' });
    await putBatch(store, 1, 'b3', [again]);
    expect((await runMerge(opts({ partitionBits: 1 }))).textDropped).toBe(1); // dataset 2's A
    expect(await lakeTexts()).toEqual(expected([...rows, again], 1));
  });

  it('refuses a policy that is not a whole number ≥ 1', async () => {
    await putBatch(store, 1, 'b1', [cap(1, A, '20300101000000')]);
    await expect(runMerge(opts({ textVersions: 0 }))).rejects.toMatchObject({ code: 'CCP_ERR_CONFIG' });
    await expect(runMerge(opts({ textVersions: 2.5 }))).rejects.toMatchObject({ code: 'CCP_ERR_CONFIG' });
  });

  it('a file where few rows lose their text is not rewritten at every merge: readers hide those texts, a compaction drops them', async () => {
    // dataset 1: 40 URLs in one partition; dataset 2 recaptures them two at a time, one merge each (a crawl merged in passes)
    const urls = Array.from({ length: 40 }, (_, i) => `https://www.example.com/p${String(i).padStart(2, '0')}`);
    const all = urls.map((u) => cap(1, u, '20300101000000'));
    await putBatch(store, 1, 'b1', all);
    await runMerge(opts({ partitionBits: 1, textVersions: 1 }));
    const d1Files = async () => (await versionJson<LakeFileEntry[]>('files.json')).filter((f) => f.datasetId === 1).map((f) => f.key);
    const before = await d1Files();
    for (let k = 0; k < 4; k++) {
      const rows = urls.slice(2 * k, 2 * k + 2).map((u) => cap(2, u, `2030020${k + 1}000000`));
      all.push(...rows);
      await putBatch(store, 2, `b2-${k}`, rows);
      expect((await runMerge(opts({ partitionBits: 1 }))).textDropped).toBe(2);
    }
    // 8 of dataset 1's 40 rows lost their text (< a quarter): its file was never rewritten, the texts are still in it
    expect(await d1Files()).toEqual(before);
    const inLake = await lakeTexts();
    expect(inLake.get(`1 ${canonicalizeUrl(urls[0]!).url}`)).toBe(`text of ${urls[0]} in 1`);
    // … and readers do not show them: /v1/url says text_dropped, with no text
    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    const api = await startApi({ source: src, port: 0 });
    try {
      const body = (await (await fetch(`${api.url}/v1/url?url=${encodeURIComponent(urls[0]!)}&include=text`)).json()) as { text_versions: number; captures: Record<string, unknown>[] };
      expect(body.text_versions).toBe(1);
      expect(body.captures.map((c) => [c['dataset_id'], c['text'], c['text_length'], c['text_dropped'] ?? false])).toEqual([
        [1, null, null, true], [2, `text of ${urls[0]} in 2`, `text of ${urls[0]} in 2`.length, false],
      ]);
    } finally {
      await api.close();
      await src.close();
    }
    // a compaction ranks every URL and drops what was left
    const c = await runMerge(opts({ partitionBits: 1, compact: true }));
    expect(c).toMatchObject({ published: true, textDropped: 8 });
    expect(await lakeTexts()).toEqual(expected(all, 1));
  });

  it('a --drop-text merge cannot set the policy (it could neither apply nor honestly record it)', async () => {
    await putBatch(store, 1, 'b1', [cap(1, A, '20300101000000')]);
    await expect(runMerge(opts({ dropText: true, textVersions: 1 }))).rejects.toMatchObject({ code: 'CCP_ERR_CONFIG', message: expect.stringMatching(/--drop-text/) });
  });
});
