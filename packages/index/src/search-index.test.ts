import { readFile, readdir, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FsObjectStore, closeDuckDbParquetEngine, type PartRow } from '@ccpipe/adapters';
import { openSearchShard, parseSearchQuery, searchShards, type SearchShard } from '@ccpipe/search';
import { readParquetRows } from '../../../tests/support/parquet';
import { tempDirEach } from '../../../tests/support/temp-dir';
import { partRow, putBatch } from '../../../tests/support/batches';
import { crcOf, indexLayout, type IndexManifest, type LakeFileEntry } from './format';
import { runMerge, type MergeOptions } from './run-merge';
import type { SearchShardEntry } from './search-index';

const SH = resolve(__dirname, '../../../../shared/corpus/scrapinghub-article-extraction-benchmark/ground-truth.json');
const articles = Object.values(JSON.parse(readFileSync(SH, 'utf8')) as Record<string, { url: string; articleBody: string }>)
  .filter((a) => a.articleBody.split(/\s+/).length > 80)
  .slice(0, 40);

let dir: string;
let store: FsObjectStore;
const open: SearchShard[] = [];

tempDirEach('ccpipe-search-index-', (d) => {
  dir = d;
  store = new FsObjectStore({ root: dir });
});
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});
afterAll(async () => {
  await closeDuckDbParquetEngine();
});

const opts = (over: Partial<MergeOptions> = {}): MergeOptions => ({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 60_000, ...over });

async function versionJson<T>(name: string): Promise<T | null> {
  const m = JSON.parse(await readFile(join(dir, indexLayout.manifest()), 'utf8')) as IndexManifest;
  return readFile(join(dir, indexLayout.versionFile(m.current!, name)), 'utf8').then((s) => JSON.parse(s) as T, () => null);
}

/** A phrase of six words from the middle of a text (quotes removed: they would end the phrase). */
function phraseOf(text: string, at = 0.5): string {
  const words = text.replace(/["“”]/g, ' ').split(/\s+/).filter(Boolean);
  const mid = Math.floor(words.length * at);
  return words.slice(mid, mid + 6).join(' ');
}

/** Article i as a capture of `https://site<i % 5>.example.com/a<i>` in `datasetId`. */
const article = (datasetId: number, i: number, ts: string, text = articles[i]!.articleBody): PartRow =>
  partRow(datasetId, `https://site${i % 5}.example.com/a${i}`, ts, { title: `Article ${i}`, text });

/** Every shard of the current version, opened, with the lake row each document names (by its row in the shard's lake file). */
async function shards(): Promise<{ entries: SearchShardEntry[]; open: SearchShard[]; urlAt: Map<string, string> }> {
  const entries = (await versionJson<SearchShardEntry[]>('search.json'))!;
  const files = (await versionJson<LakeFileEntry[]>('files.json'))!;
  const urlAt = new Map<string, string>();
  for (const f of files) (await readParquetRows(await readFile(join(dir, f.key)))).forEach((r, i) => urlAt.set(`${f.key}:${i}`, r['url'] as string));
  const opened = entries.map((e) => openSearchShard(join(dir, e.key)));
  open.push(...opened);
  return { entries, open: opened, urlAt };
}

async function find(q: string, domain?: string): Promise<string[]> {
  const s = await shards();
  const r = searchShards(s.open, parseSearchQuery(q), { limit: 100, ...(domain !== undefined && { domain }) });
  return r.hits.map((h) => {
    expect(s.urlAt.get(`${s.entries[h.shard]!.lakeKey}:${h.rowId}`)).toBe(h.url); // a hit's rowId is its row in the shard's lake file
    return `${h.datasetId} ${h.url}`;
  });
}

describe('search shards at merge (search-index.ts)', () => {
  it('indexes each lake file into one shard whose documents name their lake rows; every page is found by a rare phrase of its own', async () => {
    await putBatch(store, 1, 'b1', articles.slice(0, 30).map((_, i) => article(1, i, '20300101000000')));
    await putBatch(store, 2, 'b2', articles.slice(20, 40).map((_, k) => article(2, k + 20, '20300201000000')));
    await runMerge(opts());
    const s = await shards();
    const files = (await versionJson<LakeFileEntry[]>('files.json'))!;
    expect(s.entries.map((e) => e.lakeKey)).toEqual(files.map((f) => f.key).sort());
    for (const e of s.entries) {
      const bytes = await readFile(join(dir, e.key));
      expect([bytes.length, crcOf(bytes)]).toEqual([e.bytes, e.crc32]);
      expect(e.docs).toBe(files.find((f) => f.key === e.lakeKey)!.rows);
    }
    for (let i = 0; i < 40; i++) {
      const url = `https://site${i % 5}.example.com/a${i}`;
      const hits = await find(`"${phraseOf(articles[i]!.articleBody)}"`);
      const want = [...(i < 30 ? [`1 ${url}`] : []), ...(i >= 20 ? [`2 ${url}`] : [])];
      expect(hits.filter((h) => h.endsWith(` ${url}`)).sort()).toEqual(want);
    }
    // a domain-scoped search finds only that domain's pages
    const scoped = await find('the', 'example.com');
    expect(scoped.length).toBeGreaterThan(0);
    expect(await find('the', 'other.org')).toEqual([]);
  });

  it('rebuilds only the shards of files a merge writes; a recaptured page is found by its new text, not its old', async () => {
    await putBatch(store, 1, 'b1', articles.slice(0, 20).map((_, i) => article(1, i, '20300101000000')));
    await putBatch(store, 2, 'b2', articles.slice(0, 20).map((_, i) => article(2, i, '20300201000000')));
    await runMerge(opts());
    const before = (await versionJson<SearchShardEntry[]>('search.json'))!;
    // dataset 1 recaptures page 3 with page 25's text
    await putBatch(store, 1, 'b3', [article(1, 3, '20300301000000', articles[25]!.articleBody)]);
    await runMerge(opts());
    const after = (await versionJson<SearchShardEntry[]>('search.json'))!;
    const of = (l: SearchShardEntry[], d: number): string[] => l.filter((e) => e.datasetId === d).map((e) => e.key);
    expect(of(after, 2)).toEqual(of(before, 2));
    expect(after.filter((e) => e.datasetId === 1 && !of(before, 1).includes(e.key))).toHaveLength(1);
    const url = 'https://site3.example.com/a3';
    expect((await find(`"${phraseOf(articles[3]!.articleBody)}"`)).filter((h) => h.endsWith(url))).toEqual([`2 ${url}`]);
    expect((await find(`"${phraseOf(articles[25]!.articleBody)}"`)).filter((h) => h.endsWith(url))).toEqual([`1 ${url}`]);
  });

  it('drops from the shards the texts the content-versions policy takes, rewritten or not', async () => {
    await putBatch(store, 1, 'b1', articles.slice(0, 20).map((_, i) => article(1, i, '20300101000000')));
    await runMerge(opts({ textVersions: 1 }));
    // dataset 2 captures page 4 later: dataset 1's capture loses its text, in a file this merge does not rewrite
    await putBatch(store, 2, 'b2', [article(2, 4, '20300201000000', articles[30]!.articleBody)]);
    await runMerge(opts({ textVersions: 1 }));
    const url = 'https://site4.example.com/a4';
    expect((await find(`"${phraseOf(articles[4]!.articleBody)}"`)).filter((h) => h.endsWith(url))).toEqual([]);
    expect((await find(`"${phraseOf(articles[30]!.articleBody)}"`)).filter((h) => h.endsWith(url))).toEqual([`2 ${url}`]);
    // the other pages of that file are still found
    expect(await find(`"${phraseOf(articles[5]!.articleBody)}"`)).toContain('1 https://site0.example.com/a5');
  });

  it('writes no shards with search: false or from a lake without url_id; gc sweeps the shards no version lists', async () => {
    await putBatch(store, 1, 'b', [article(1, 0, '20300101000000')]);
    await runMerge(opts({ search: false }));
    expect(await versionJson('search.json')).toBeNull();
    await rm(dir, { recursive: true, force: true });
    await putBatch(store, 1, 'b', [article(1, 0, '20300101000000')]);
    await runMerge(opts({ lakeColumns: 'lean' }));
    expect(await versionJson('search.json')).toBeNull();
    await rm(dir, { recursive: true, force: true });
    for (let m = 0; m < 4; m++) {
      await putBatch(store, 1, `m${m}`, [article(1, m, `2030010${m + 1}000000`)]);
      await runMerge(opts({ keepVersions: 1, graceMs: 0, lakeMaxRuns: 1 }));
    }
    const listed = (await versionJson<SearchShardEntry[]>('search.json'))!.map((e) => e.key);
    const onDisk = (await readdir(join(dir, 'search'), { recursive: true })).filter((f) => f.endsWith('.sqlite')).map((f) => `search/${f}`);
    expect(onDisk.sort()).toEqual(listed.sort());
  });
});
