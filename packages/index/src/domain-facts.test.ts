import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DomainFacts, IndexView, ObjectStore } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine, type PartRow } from '@ccpipe/adapters';
import { readParquetRows } from '../../../tests/support/parquet';
import { partRow, putBatch } from '../../../tests/support/batches';
import { decodeFactsRecords, encodeFactsRecord, type FactsRecord } from './domain-facts';
import { crcOf, indexLayout, type IndexManifest, type LakeFileEntry, type VersionStatus } from './format';
import { openIndexSource } from './index-source';
import { runMerge, type MergeOptions } from './run-merge';
import { verifyVersion } from './verify';

let dir: string;
let store: FsObjectStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-facts-'));
  store = new FsObjectStore({ root: dir });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterAll(async () => {
  await closeDuckDbParquetEngine();
});

const opts = (over: Partial<MergeOptions> = {}): MergeOptions => ({
  store, dataDir: dir, rowGroupSize: 2048, keepVersions: 5, graceMs: 60_000, partitionBits: 2, ...over,
});

const DOMAINS = ['alpha.com', 'bravo.com', 'charlie.org', 'delta.co.uk', 'echo.net', 'foxtrot.com', 'golf.io', 'hotel.com'];
const SUBS = ['www.', '', 'blog.', 'shop.', 'a.b.'];
const STATUSES = [200, 200, 200, 301, 302, 404, 410, 500, 503, 204, 199, 600];
const LANGS = [null, '', 'eng', 'eng,deu', 'deu', 'fra,eng', 'spa', 'ita', 'nld', 'por', 'pol', 'rus', 'jpn', 'zho', 'kor', 'ara'];

/** A small deterministic generator (no Math.random: a failing case must come back). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** `n` rows of dataset `ds` over `domains`, varied hosts, statuses, languages, sizes and times; `tag` keeps URLs apart. */
function rows(ds: number, n: number, seed: number, domains = DOMAINS, tag = 'p'): PartRow[] {
  const r = rng(seed);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  return Array.from({ length: n }, (_, i) => {
    const day = 1 + Math.floor(r() * 27);
    const ts = `203001${String(day).padStart(2, '0')}${String(Math.floor(r() * 24)).padStart(2, '0')}0000`;
    return partRow(ds, `https://${pick(SUBS)}${pick(domains)}/${tag}/${i}`, ts, {
      status: pick(STATUSES), languages: pick(LANGS), contentLength: Math.floor(r() * 5000) * (r() < 0.1 ? 100 : 1),
    });
  });
}

/** The lake rows a version holds, read back by hyparquet from the files its files.json lists. */
async function lakeRows(version: string): Promise<{ datasetId: number; row: Record<string, unknown> }[]> {
  const files = JSON.parse(await readFile(join(dir, indexLayout.versionFile(version, 'files.json')), 'utf8')) as LakeFileEntry[];
  const out: { datasetId: number; row: Record<string, unknown> }[] = [];
  for (const f of files) for (const row of await readParquetRows(await readFile(join(dir, f.key)))) out.push({ datasetId: f.datasetId, row });
  return out;
}

/** The facts of every (domain, dataset), computed in plain JS from the rows as the port's TSDoc defines them. */
function oracle(all: { datasetId: number; row: Record<string, unknown> }[]): Map<string, DomainFacts> {
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const { datasetId, row } of all) {
    const k = `${row['domain'] as string} ${datasetId}`;
    groups.set(k, [...(groups.get(k) ?? []), row]);
  }
  const out = new Map<string, DomainFacts>();
  for (const [k, g] of groups) {
    const hosts = new Set(g.map((x) => (x['host'] as string | undefined) ?? new URL(x['url'] as string).hostname));
    const cls = (lo: number): number => g.filter((x) => (x['status'] as number) >= lo && (x['status'] as number) < lo + 100).length;
    const langs = new Map<string, number>();
    for (const x of g) {
      const code = ((x['languages'] as string | null | undefined) ?? '').split(',')[0]!;
      if (code !== '') langs.set(code, (langs.get(code) ?? 0) + 1);
    }
    const secs = g.map((x) => Math.floor((x['ts'] as Date).getTime() / 1000));
    const iso = (s: number): string => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
    const sizes = g.flatMap((x) => (typeof x['content_length'] === 'number' ? [x['content_length']] : [])).sort((a, b) => a - b);
    const rank = (q: number): number | null => (sizes.length === 0 ? null : sizes[Math.ceil(q * sizes.length) - 1]!);
    out.set(k, {
      hosts: hosts.size,
      statusClasses: { '2xx': cls(200), '3xx': cls(300), '4xx': cls(400), '5xx': cls(500) },
      languages: [...langs].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 10).map(([code, count]) => ({ code, count })),
      firstTs: iso(Math.min(...secs)),
      lastTs: iso(Math.max(...secs)),
      contentLengthMedian: rank(0.5),
      contentLengthP90: rank(0.9),
    });
  }
  return out;
}

/** Every (domain, dataset)'s facts as a view answers them (undefined where it has none). */
function answered(v: IndexView, domains: readonly string[]): Map<string, DomainFacts | undefined> {
  const out = new Map<string, DomainFacts | undefined>();
  for (const d of domains) for (const e of v.domain(d)?.datasets ?? []) out.set(`${d} ${e.datasetId}`, e.facts);
  return out;
}

/** The current version's facts, resident and read in place (`indexReads: 'files'`): both must agree. */
async function factsNow(domains: readonly string[] = DOMAINS): Promise<Map<string, DomainFacts | undefined>> {
  const resident = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
  const inPlace = await openIndexSource({ store, dataDir: dir, pollMs: 0, indexReads: 'files' });
  try {
    const a = answered((await resident.current())!, domains);
    expect(answered((await inPlace.current())!, domains)).toEqual(a);
    return a;
  } finally {
    await resident.close();
    await inPlace.close();
  }
}

/** The current version's facts against the oracle over its lake rows, for every (domain, dataset). */
async function expectExact(version: string): Promise<Map<string, DomainFacts | undefined>> {
  const lake = await lakeRows(version);
  const got = await factsNow([...new Set(lake.map(({ row }) => row['domain'] as string))]);
  expect(new Map([...got].sort())).toEqual(new Map([...oracle(lake)].sort()));
  return got;
}

describe('domain facts computed at merge', () => {
  it('a first merge: hosts, status classes, top languages, time range, median and p90 exact per (domain, dataset)', async () => {
    await putBatch(store, 1, 'a1', rows(1, 900, 1));
    await putBatch(store, 2, 'b1', rows(2, 400, 2, DOMAINS.slice(2)));
    // one domain with more than 10 primary languages (ties broken by code) and one host only
    await putBatch(store, 1, 'a2', LANGS.flatMap((l, i) => Array.from({ length: (i % 3) + 1 }, (_, k) => partRow(1, `http://india.com/l/${i}/${k}`, '20300105000000', { languages: l }))));
    expect(await runMerge(opts())).toMatchObject({ version: 'v000001', published: true });
    const got = await expectExact('v000001');
    const india = got.get('india.com 1')!;
    expect(india.hosts).toBe(1);
    expect(india.languages).toHaveLength(10);
    // 'eng' and 'eng,deu' count for eng; equal counts by code
    expect(india.languages.slice(0, 5)).toEqual([{ code: 'eng', count: 4 }, { code: 'fra', count: 3 }, { code: 'kor', count: 3 }, { code: 'nld', count: 3 }, { code: 'rus', count: 3 }]);
    expect(got.get('alpha.com 2')).toBeUndefined(); // not in dataset 2
    expect(got.get('charlie.org 2')!.hosts).toBeGreaterThan(1);
  });

  it('an incremental merge recomputes the domains it adds rows to (over runs folded and kept alike) and carries the others over', async () => {
    await putBatch(store, 1, 'a1', rows(1, 1200, 3));
    await runMerge(opts());
    const before = await factsNow();
    // new URLs of two domains only, then new URLs of one of them again: partitions with 2–3 runs
    await putBatch(store, 1, 'a2', rows(1, 150, 4, ['alpha.com', 'echo.net'], 'q'));
    const r2 = await runMerge(opts());
    const files = JSON.parse(await readFile(join(dir, indexLayout.versionFile('v000002', 'files.json')), 'utf8')) as LakeFileEntry[];
    expect(r2.rewrittenFiles).toBeLessThan(new Set(files.map((f) => f.prefix)).size); // some partitions untouched
    await putBatch(store, 1, 'a3', rows(1, 60, 5, ['alpha.com'], 'r'));
    await runMerge(opts());
    expect(files.length).toBeGreaterThan(new Set(files.map((f) => f.prefix)).size); // a partition holds several runs
    const after = await expectExact('v000003');
    expect(after.get('alpha.com 1')).not.toEqual(before.get('alpha.com 1'));
    expect(after.get('bravo.com 1')).toEqual(before.get('bravo.com 1'));
  });

  it('a recapture supersedes its row: the old status, size and language no longer count', async () => {
    const u = 'https://www.kilo.com/page';
    await putBatch(store, 1, 'a1', [partRow(1, u, '20300101000000', { status: 200, contentLength: 100, languages: 'eng' }), partRow(1, 'https://kilo.com/x', '20300102000000', { contentLength: 300, languages: 'eng' })]);
    await runMerge(opts());
    expect((await factsNow(['kilo.com'])).get('kilo.com 1')).toMatchObject({ statusClasses: { '2xx': 2, '4xx': 0 }, contentLengthMedian: 100, hosts: 2 });
    await putBatch(store, 1, 'a2', [partRow(1, u, '20300201000000', { status: 404, contentLength: 900, languages: 'fra' })]);
    await runMerge(opts());
    const f = (await factsNow(['kilo.com'])).get('kilo.com 1')!;
    expect(f).toEqual({
      hosts: 2, statusClasses: { '2xx': 1, '3xx': 0, '4xx': 1, '5xx': 0 }, languages: [{ code: 'eng', count: 1 }, { code: 'fra', count: 1 }],
      firstTs: '2030-01-02T00:00:00Z', lastTs: '2030-02-01T00:00:00Z', contentLengthMedian: 300, contentLengthP90: 900,
    });
    await expectExact('v000002');
  });

  it('compact folds the runs and the facts stay exact', async () => {
    await putBatch(store, 1, 'a1', rows(1, 600, 6));
    await runMerge(opts());
    await putBatch(store, 1, 'a2', rows(1, 100, 7, DOMAINS, 'q'));
    await runMerge(opts());
    const before = await factsNow();
    expect(await runMerge(opts({ compact: true }))).toMatchObject({ version: 'v000003', published: true });
    expect(await factsNow()).toEqual(before);
    await expectExact('v000003');
  });

  it("an 'api' lake: hosts from the canonical URL, languages and content_length kept in the lake", async () => {
    await putBatch(store, 1, 'a1', rows(1, 700, 8));
    await putBatch(store, 1, 'a2', [partRow(1, 'http://[2001:db8::1]:8080/v6', '20300103000000'), partRow(1, 'http://[2001:db8::1]/w', '20300103000000')]);
    await runMerge(opts({ lakeColumns: 'api' }));
    const lake = await lakeRows('v000001');
    expect(Object.keys(lake[0]!.row)).toEqual(expect.arrayContaining(['languages', 'content_length']));
    expect(Object.keys(lake[0]!.row)).not.toContain('host');
    await expectExact('v000001');
    const v6 = [...(await factsNow(['2001:db8::1', '[2001:db8::1]']))];
    expect(v6.map(([, f]) => f?.hosts)).toEqual([1]);
  });

  it('a version without facts files (written before them, or with facts off) loads and answers without facts; the next merge computes those of the domains it adds rows to', async () => {
    await putBatch(store, 1, 'a1', rows(1, 800, 9));
    await runMerge(opts({ facts: false }));
    const toc = JSON.parse(await readFile(join(dir, indexLayout.toc('v000001')), 'utf8')) as { files: Record<string, unknown> };
    expect(Object.keys(toc.files).filter((f) => f.startsWith('facts'))).toEqual([]);
    const none = await factsNow();
    expect([...none.values()].every((f) => f === undefined)).toBe(true);
    expect(none.size).toBe(DOMAINS.length);
    await putBatch(store, 1, 'a2', rows(1, 50, 10, ['golf.io'], 'q'));
    await runMerge(opts());
    const some = await factsNow();
    const want = oracle(await lakeRows('v000002'));
    expect(some.get('golf.io 1')).toEqual(want.get('golf.io 1'));
    // the other domains had nothing to carry over: no facts (not a rescan of the lake), even those sharing golf.io's partition
    expect([...some].filter(([, f]) => f !== undefined).map(([k]) => k)).toEqual(['golf.io 1']);
    for (const [k, f] of some) if (f !== undefined) expect(f).toEqual(want.get(k));
  });

  it("an 'api' lake begun before languages and content_length were lake columns keeps its columns; its facts have no languages and no sizes", async () => {
    await putBatch(store, 1, 'a1', rows(1, 300, 11));
    await runMerge(opts({ lakeColumns: 'api', facts: false }));
    await dropColumnList(store, 'v000001');
    await putBatch(store, 1, 'a2', rows(1, 300, 12, DOMAINS, 'q'));
    await runMerge(opts({ compact: true }));
    const lake = await lakeRows('v000002');
    // the compaction rewrote every partition with the lake's old columns
    expect(lake.every(({ row }) => !('languages' in row) && !('content_length' in row))).toBe(true);
    const got = await factsNow();
    const want = oracle(lake);
    expect(new Map([...got].sort())).toEqual(new Map([...want].sort()));
    expect([...got.values()].every((f) => f !== undefined && f.languages.length === 0 && f.contentLengthMedian === null && f.contentLengthP90 === null)).toBe(true);
  });
});

describe('a damaged facts file', () => {
  it('is refused when a version loads (resident and in place) and named by verifyVersion', async () => {
    await putBatch(store, 1, 'a1', rows(1, 200, 13));
    await runMerge(opts());
    const key = indexLayout.versionFile('v000001', 'facts-0000.bin');
    const b = Buffer.from((await store.get(key))!);
    b.writeUInt8(b.readUInt8(b.length - 1) ^ 0x01, b.length - 1);
    await store.put(key, b);
    for (const indexReads of ['resident', 'files'] as const) {
      const src = await openIndexSource({ store, dataDir: dir, pollMs: 0, indexReads });
      try {
        await expect(src.current()).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC' });
      } finally {
        await src.close();
      }
    }
    expect((await verifyVersion(store)).problems).toEqual([expect.objectContaining({ key, code: 'CCP_ERR_INDEX_CRC' })]);
  });
});

describe('facts records', () => {
  it('round-trip, copied verbatim by their byte spans', () => {
    const a: FactsRecord = { datasetId: 3, hosts: 2, status: [5, 0, 1, 0], firstTs: 1_900_000_000, lastTs: 1_900_086_400, median: 0, p90: 2 ** 31 - 1, languages: [['eng', 4], ['zh-Hant', 1]] };
    const b: FactsRecord = { datasetId: 70_000, hosts: 1, status: [0, 0, 0, 0], firstTs: -5, lastTs: 10, median: null, p90: null, languages: [] };
    const bytes = Buffer.concat([encodeFactsRecord(a), encodeFactsRecord(b)]);
    const back = decodeFactsRecords(bytes);
    expect(back.map((x) => x.record)).toEqual([a, b]);
    expect(Buffer.concat(back.map((x) => bytes.subarray(x.start, x.end)))).toEqual(bytes);
    expect(() => decodeFactsRecords(bytes.subarray(0, bytes.length - 1))).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
  });
});

/** Rewrites a version's status.json as a merge before stop 20 wrote it (no lakeColumnList), its CRCs following. */
async function dropColumnList(s: ObjectStore, v: string): Promise<void> {
  const m = JSON.parse(Buffer.from((await s.get(indexLayout.manifest()))!).toString()) as IndexManifest;
  const toc = JSON.parse(Buffer.from((await s.get(indexLayout.toc(v)))!).toString()) as { files: Record<string, { size: number; crc32: number }> };
  const status = JSON.parse(Buffer.from((await s.get(indexLayout.versionFile(v, 'status.json')))!).toString()) as VersionStatus;
  delete status.lakeColumnList;
  const b = Buffer.from(JSON.stringify(status));
  await s.put(indexLayout.versionFile(v, 'status.json'), b);
  toc.files['status.json'] = { size: b.length, crc32: crcOf(b) };
  const tocBytes = Buffer.from(JSON.stringify(toc));
  await s.put(indexLayout.toc(v), tocBytes);
  m.versions.find((x) => x.version === v)!.tocCrc32 = crcOf(tocBytes);
  await s.put(indexLayout.manifest(), Buffer.from(JSON.stringify(m)));
}
