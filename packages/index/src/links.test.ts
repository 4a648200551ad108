import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalizeUrl } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine, type PartRow } from '@ccpipe/adapters';
import { readParquetRows } from '../../../tests/support/parquet';
import { tempDirEach } from '../../../tests/support/temp-dir';
import { partRow, putBatch, writeOldPart } from '../../../tests/support/batches';
import { rng } from '../../../tests/support/rng';
import { indexLayout, type IndexManifest, type LakeFileEntry } from './format';
import { LINK_FILE_KINDS, type DatasetLinks } from './links';
import { LinkGraph } from './links-read';
import { ParquetLakeReader } from './lake-reader';
import { openDuck } from './duck';
import { runMerge, type MergeOptions } from './run-merge';

let dir: string;
let store: FsObjectStore;

tempDirEach('ccpipe-links-', (d) => {
  dir = d;
  store = new FsObjectStore({ root: dir });
});
afterAll(async () => {
  await closeDuckDbParquetEngine();
});

const opts = (over: Partial<MergeOptions> = {}): MergeOptions => ({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 60_000, ...over });

async function versionJson<T>(name: string): Promise<T> {
  const m = JSON.parse(await readFile(join(dir, indexLayout.manifest()), 'utf8')) as IndexManifest;
  return JSON.parse(await readFile(join(dir, indexLayout.versionFile(m.current!, name)), 'utf8')) as T;
}

const rowsOf = async (key: string): Promise<Record<string, unknown>[]> => readParquetRows(await readFile(join(dir, key)));

/** A capture whose outlinks are `targets` (raw URLs: canonicalized here as a worker does, the registered domain beside). */
function page(datasetId: number, url: string, ts: string, targets: readonly string[]): PartRow {
  const c = targets.map((t) => canonicalizeUrl(t));
  return partRow(datasetId, url, ts, { outlinks: c.map((x) => x.url), outlinkDomains: c.map((x) => x.domain ?? x.host) });
}

/** The graph the link files must hold, from the captures alone: latest capture per (dataset, url) wins. */
function expectedGraph(caps: readonly PartRow[], datasetId: number) {
  const latest = new Map<string, PartRow>();
  for (const c of caps.filter((x) => x.datasetId === datasetId)) {
    const had = latest.get(c.url);
    if (had === undefined || had.timestamp! <= c.timestamp!) latest.set(c.url, c);
  }
  const inlinks = new Map<string, Set<string>>(); // "domain url" → source URLs
  const out = new Map<string, string[]>(); // source URL → "domain url" sorted
  const domainPages = new Map<string, Set<string>>();
  const domainDomains = new Map<string, Set<string>>();
  for (const p of latest.values()) {
    p.outlinks.forEach((u, i) => {
      const d = p.outlinkDomains[i]!;
      const key = `${d} ${u}`;
      inlinks.set(key, (inlinks.get(key) ?? new Set()).add(p.url));
      out.set(p.url, [...(out.get(p.url) ?? []), key]);
      if (d !== p.domain) {
        domainPages.set(d, (domainPages.get(d) ?? new Set()).add(p.url));
        domainDomains.set(d, (domainDomains.get(d) ?? new Set()).add(p.domain));
      }
    });
  }
  for (const v of out.values()) v.sort();
  return { inlinks, out, domainPages, domainDomains };
}

/** The link files of `datasetId` read back by an independent Parquet reader, positions resolved through the lake. */
async function readGraph(datasetId: number) {
  const files = (await versionJson<LakeFileEntry[]>('files.json')).filter((f) => f.datasetId === datasetId);
  const urlAt = new Map<number, string>();
  for (const f of files) (await rowsOf(f.key)).forEach((r, i) => urlAt.set(f.posBase! + i, r['url'] as string));
  const links = (await versionJson<DatasetLinks[]>('links.json')).find((l) => l.datasetId === datasetId)!;
  const [targets, inRows, outRows, domains, dom] = await Promise.all(LINK_FILE_KINDS.map((k) => rowsOf(links.files[k].key)));
  const inlinks = new Map<string, Set<string>>();
  for (const t of targets!) {
    const srcs = inRows!.slice(Number(t['in_start']), Number(t['in_start']) + Number(t['inlinks'])).map((r) => urlAt.get(Number(r['pos']))!);
    expect(srcs).toHaveLength(new Set(srcs).size);
    inlinks.set(t['key'] as string, new Set(srcs));
  }
  const out = new Map<string, string[]>();
  let lastPos = -1;
  for (const r of outRows!) {
    expect(Number(r['pos'])).toBeGreaterThanOrEqual(lastPos); // sorted by source
    lastPos = Number(r['pos']);
    const src = urlAt.get(Number(r['pos']))!;
    out.set(src, [...(out.get(src) ?? []), targets![Number(r['target'])]!['key'] as string]);
  }
  const domainPages = new Map<string, Set<string>>();
  const linkingDomains = new Map<string, number>();
  for (const d of domains!) {
    const srcs = dom!.slice(Number(d['dom_start']), Number(d['dom_start']) + Number(d['pages'])).map((r) => urlAt.get(Number(r['pos']))!);
    domainPages.set(d['domain'] as string, new Set(srcs));
    linkingDomains.set(d['domain'] as string, Number(d['linking_domains']));
  }
  return { links, targets: targets!, inlinks, out, domainPages, linkingDomains };
}

async function expectGraph(caps: readonly PartRow[], datasetId: number): Promise<void> {
  const want = expectedGraph(caps, datasetId);
  const got = await readGraph(datasetId);
  expect(got.targets.map((t) => t['key'])).toEqual([...want.inlinks.keys()].sort());
  expect(got.inlinks).toEqual(want.inlinks);
  expect(got.out).toEqual(want.out);
  expect(got.domainPages).toEqual(want.domainPages);
  expect(got.linkingDomains).toEqual(new Map([...want.domainDomains].map(([d, s]) => [d, s.size])));
  expect(got.links.edges).toBe([...want.out.values()].reduce((n, v) => n + v.length, 0));
}

describe('link graph (links.ts)', () => {
  it('holds exactly the outlinks of the live captures, inlinks by target, linking pages by domain', async () => {
    const caps = [
      page(1, 'https://a.example.com/', '20300101000000', ['https://b.example.org/x', 'https://www.example.com/about', 'https://nowhere.example.net/']),
      page(1, 'https://www.example.com/about', '20300101000000', ['https://b.example.org/x', 'https://a.example.com/']),
      page(1, 'https://b.example.org/x', '20300101000000', ['https://a.example.com/', 'https://c.example.org/']),
      page(1, 'https://c.example.org/', '20300101000000', []),
      page(2, 'https://a.example.com/', '20300201000000', ['https://b.example.org/x']),
    ];
    await putBatch(store, 1, 'b1', caps.filter((c) => c.datasetId === 1));
    await putBatch(store, 2, 'b2', caps.filter((c) => c.datasetId === 2));
    await runMerge(opts());
    await expectGraph(caps, 1);
    await expectGraph(caps, 2);
    const g = await readGraph(1);
    // a target nobody crawled counts too; a domain's own pages are not its linking pages
    expect(g.inlinks.get('example.net https://nowhere.example.net/')).toEqual(new Set(['https://a.example.com/']));
    expect(g.domainPages.get('example.com')).toEqual(new Set(['https://b.example.org/x']));
    expect(g.linkingDomains.get('example.org')).toBe(1);
  });

  it('drops the edges of a superseded capture and keeps other datasets as they were, over several merges', async () => {
    const r = rng(2101);
    const rnd = (): number => r.float();
    const hosts = ['a.one.com', 'b.one.com', 'two.org', 'x.three.co.uk', 'four.net', 'five.io'];
    const urls = Array.from({ length: 120 }, (_, i) => `https://${hosts[i % hosts.length]}/p${i % 40}`);
    const caps: PartRow[] = [];
    for (let merge = 0; merge < 3; merge++) {
      for (const datasetId of merge === 2 ? [1] : [1, 2]) {
        const batch: PartRow[] = [];
        const seen = new Set<string>();
        for (let k = 0; k < 60; k++) {
          const u = urls[Math.floor(rnd() * urls.length)]!;
          if (seen.has(canonicalizeUrl(u).url)) continue;
          seen.add(canonicalizeUrl(u).url);
          const targets = [...new Set(Array.from({ length: Math.floor(rnd() * 8) }, () => urls[Math.floor(rnd() * urls.length)]!))]
            .filter((t) => canonicalizeUrl(t).url !== canonicalizeUrl(u).url);
          batch.push(page(datasetId, u, `2030010${merge + 1}000000`, targets));
        }
        caps.push(...batch);
        await putBatch(store, datasetId, `m${merge}-d${datasetId}`, batch);
      }
      await runMerge(opts({ lakeMaxRuns: 2 }));
      await expectGraph(caps, 1);
      await expectGraph(caps, 2);
    }
    // dataset 2 received nothing in the last merge: its files are carried over, not rebuilt
    const links = await versionJson<DatasetLinks[]>('links.json');
    expect(links.find((l) => l.datasetId === 2)!.files.in.key).toMatch(/-v000002\.parquet$/);
    expect(links.find((l) => l.datasetId === 1)!.files.in.key).toMatch(/-v000003\.parquet$/);
  });

  it('takes parts written before outlink_domains (no links from them) together with new ones', async () => {
    const old = page(1, 'https://old.example.com/', '20300101000000', ['https://t.example.org/']);
    await putBatch(store, 1, 'new', [page(1, 'https://new.example.com/', '20300101000000', ['https://t.example.org/'])]);
    // a part with the schema of an older worker: no outlink_domains column
    await writeOldPart(store, 1, 'old', [old]);
    const r = await runMerge(opts());
    expect(r.rowsIn).toBe(2);
    const g = await readGraph(1);
    expect(g.inlinks.get('example.org https://t.example.org/')).toEqual(new Set(['https://new.example.com/']));
  });

  it('merges a batch whose every part is from a worker before outlink_domains (the column read as null: no links)', async () => {
    await writeOldPart(store, 1, 'old', [page(1, 'https://old.example.com/', '20300101000000', ['https://t.example.org/'])]);
    const r = await runMerge(opts());
    expect(r).toMatchObject({ published: true, rowsIn: 1, urls: 1 });
    expect(await versionJson<DatasetLinks[]>('links.json')).toEqual([]);
  });

  it('writes no link graph with links: false, nor for a lake without the outlink columns', async () => {
    await putBatch(store, 1, 'b', [page(1, 'https://a.example.com/', '20300101000000', ['https://b.example.org/'])]);
    await runMerge(opts({ links: false }));
    expect(await versionJson<DatasetLinks[]>('links.json').catch(() => null)).toBeNull();
    await rm(dir, { recursive: true, force: true });
    await putBatch(store, 1, 'b', [page(1, 'https://a.example.com/', '20300101000000', ['https://b.example.org/'])]);
    await runMerge(opts({ lakeColumns: 'api' }));
    expect(await versionJson<DatasetLinks[]>('links.json').catch(() => null)).toBeNull();
  });

  it('reads targets and domains back by key through the footer statistics, over many row groups', async () => {
    // a target table of 10,000 keys in row groups of 2,048 (the merge writes 8,192), each key's row its number
    const db = await openDuck();
    const conn = await db.connect();
    const file = join(dir, 'targets.parquet');
    await conn.run(`COPY (SELECT 'd' || lpad((i // 7)::VARCHAR, 5, '0') || '.com https://x/' || i::VARCHAR AS key, (i % 5 + 1)::INTEGER AS inlinks, (i * 3)::BIGINT AS in_start
      FROM range(10000) t(i) ORDER BY key) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE 2048, PARQUET_VERSION V2)`);
    const keys = (await readParquetRows(await readFile(file))).map((r) => r['key'] as string);
    conn.closeSync();
    db.closeSync();
    const bytes = await readFile(file);
    const entry = { key: 'targets.parquet', bytes: bytes.length, crc32: 0, rows: keys.length };
    const files = Object.fromEntries(LINK_FILE_KINDS.map((k) => [k, entry])) as DatasetLinks['files'];
    const graph = new LinkGraph([{ datasetId: 1, edges: 0, targets: keys.length, sources: 0, files }], new ParquetLakeReader({ store }));
    for (const k of [0, 1, 2047, 2048, 2049, 4095, 6000, 9999].map((i) => keys[i]!)) {
      const sp = k.indexOf(' ');
      const t = await graph.target(1, k.slice(0, sp), k.slice(sp + 1));
      expect(t?.row).toBe(keys.indexOf(k));
    }
    expect(await graph.target(1, 'd00000.com', 'https://x/nope')).toBeNull();
    expect(await graph.target(1, 'zzz.com', 'https://x/1')).toBeNull();
    expect(await graph.target(1, 'a.com', 'https://x/1')).toBeNull();
    expect(graph.has(2)).toBe(false);
  });
});
