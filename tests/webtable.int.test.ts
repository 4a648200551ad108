import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { canonicalizeUrl, layout, registeredDomainOf } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { processBatch } from '@ccpipe/worker';
import { openIndexSource, runMerge, type LakeIndexSource } from '@ccpipe/index';
import { startApi, type ApiServer } from '@ccpipe/api';
import { CC_MIRROR_DEV, DEV_CRAWLS } from './support/corpus';
import { devBatches, devStore } from './support/dev-batches';
import { readParquetRows } from './support/parquet';

// The web table over the whole pipeline: cc-mirror-dev with every record kept (--status any --languages any) →
// batcher → worker (real extraction) → merger → HTTP API. Pages and filters are checked against an independent
// reading of the mirror's CDX files (gunzip + JSON, not ccpipe's parser), texts against the parts the worker wrote.

interface Cdx {
  url: string;
  ts: number;
  status: number;
  filename: string;
  offset: number;
}

/** The latest capture of each canonical URL per crawl, read straight from the mirror's CDX files. */
function cdxRows(crawl: string): Map<string, Cdx> {
  const dir = join(CC_MIRROR_DEV, 'cc-index', 'collections', crawl, 'indexes');
  const latest = new Map<string, Cdx>();
  for (const f of readdirSync(dir).filter((n) => n.startsWith('cdx-')).sort()) {
    for (const line of gunzipSync(readFileSync(join(dir, f))).toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      const [, ts, ...rest] = line.split(' ');
      const j = JSON.parse(rest.join(' ')) as Record<string, string>;
      const t = ts!;
      const row: Cdx = {
        url: canonicalizeUrl(j['url']!).url, status: Number(j['status']), filename: j['filename']!, offset: Number(j['offset']),
        ts: Date.UTC(+t.slice(0, 4), +t.slice(4, 6) - 1, +t.slice(6, 8), +t.slice(8, 10), +t.slice(10, 12), +t.slice(12, 14)),
      };
      // the merger's rule: the latest capture wins, then the later WARC position
      const prev = latest.get(row.url);
      if (prev === undefined || prev.ts < row.ts || (prev.ts === row.ts && (prev.filename < row.filename || (prev.filename === row.filename && prev.offset < row.offset)))) {
        latest.set(row.url, row);
      }
    }
  }
  return latest;
}

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

let dir: string;
let server: ApiServer | undefined;
let source: LakeIndexSource | undefined;
const ids: Record<string, number> = {};
const texts = new Map<string, string | null>(); // `${datasetId} ${url}` → the text the worker wrote
const sizes = new Map<string, number>(); // same key → content_length the worker wrote
const expected = new Map<number, Map<string, Cdx>>(); // dataset → url → latest CDX capture
let v1 = '';
let v2 = '';
let firstPage: { cursor: string; seen: string[]; total: number } | null = null;

async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; version: string | null }> {
  const res = await fetch(server!.url + path, { headers });
  return { status: res.status, body: await res.json(), version: res.headers.get('x-index-version') };
}

/** Every row of a paged query, following next_cursor; checks each page names one version. */
async function walk(path: string): Promise<{ items: any[]; totals: Set<number>; versions: Set<string | null> }> {
  const items: any[] = [];
  const totals = new Set<number>();
  const versions = new Set<string | null>();
  let cursor: string | null = null;
  for (let guard = 0; guard < 10_000; guard++) {
    const r = await get(path + (cursor === null ? '' : `&cursor=${cursor}`));
    expect(r.status).toBe(200);
    items.push(...r.body.items);
    totals.add(r.body.total);
    versions.add(r.version);
    cursor = r.body.next_cursor;
    if (cursor === null) return { items, totals, versions };
  }
  throw new Error('paging did not end');
}

const BULK = 'bulk-3.co.uk';
/** The rows the index must hold for a domain in the datasets given, as `${datasetId} ${url}`. */
function expectedRows(domain: string, datasets: number[], keep: (c: Cdx) => boolean = () => true): Set<string> {
  const out = new Set<string>();
  for (const d of datasets) for (const [url, c] of expected.get(d)!) if (registeredDomainOf(url) === domain && keep(c)) out.add(`${d} ${url}`);
  return out;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-webtable-'));
  const { store, ids: named, deps } = await devStore(dir);
  Object.assign(ids, named);
  const ingest = async (crawl: string): Promise<string> => {
    const id = ids[crawl]!;
    expected.set(id, cdxRows(crawl));
    for (const b of await devBatches(crawl, { datasetId: id, batchSize: 200, filter: { status: null, languages: null } })) {
      const { marker } = await processBatch(b, deps, { concurrency: 8, includeText: true });
      for (const r of await readParquetRows((await store.get(layout.batchPart(id, b.id)))!)) {
        texts.set(`${id} ${r['url']}`, (r['text'] as string | null) ?? null);
        sizes.set(`${id} ${r['url']}`, Number(r['content_length']));
      }
      // only extraction may fail (the row is kept without text): every record has its row
      expect(marker.rows).toBe(b.records.length);
    }
    const { version } = await runMerge({ store, dataDir: dir, rowGroupSize: 64, keepVersions: 3, graceMs: 60_000 });
    return version!;
  };
  v1 = await ingest(DEV_CRAWLS[0]);
  source = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
  server = await startApi({ source, port: 0 });
  // a first page under v1 only, continued after the second crawl is merged (the manifest flip)
  const r = await get(`/v1/domain/${BULK}/pages?limit=25`);
  firstPage = { cursor: r.body.next_cursor, seen: r.body.items.map((i: any) => `${i.dataset_id} ${i.url}`), total: r.body.total };
  expect(r.version).toBe(v1);
  v2 = await ingest(DEV_CRAWLS[1]);
}, 600_000);

afterAll(async () => {
  await server?.close();
  await source?.close();
  await closeDuckDbParquetEngine();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the web table over HTTP on cc-mirror-dev (every record kept)', () => {
  it('a cursor keeps paging the version it came from across a manifest flip: every row of v1 once, none of v2', async () => {
    expect(v2).not.toBe(v1);
    const [d40] = [ids[DEV_CRAWLS[0]]!];
    const want = expectedRows(BULK, [d40]);
    expect(firstPage!.total).toBe(want.size);
    // a walk started now reads v2, which holds both crawls
    const fresh = await get(`/v1/domain/${BULK}/pages?limit=25`);
    expect([fresh.version, fresh.body.total]).toEqual([v2, expectedRows(BULK, [d40, ids[DEV_CRAWLS[1]]!]).size]);
    const seen = [...firstPage!.seen];
    let cursor: string | null = firstPage!.cursor;
    while (cursor !== null) {
      const r = await get(`/v1/domain/${BULK}/pages?limit=25&cursor=${cursor}`);
      expect([r.status, r.version, r.body.total]).toEqual([200, v1, want.size]);
      seen.push(...r.body.items.map((i: any) => `${i.dataset_id} ${i.url}`));
      cursor = r.body.next_cursor;
    }
    expect(seen).toHaveLength(want.size);
    expect(new Set(seen)).toEqual(want);
    // a cursor naming a version this API does not keep: 410, never a page from another version
    const [vv, ...tail] = JSON.parse(Buffer.from(firstPage!.cursor, 'base64url').toString('utf8'));
    const gone = Buffer.from(JSON.stringify([vv, 'v999999', ...tail.slice(1)]), 'utf8').toString('base64url');
    expect((await get(`/v1/domain/${BULK}/pages?limit=25&cursor=${gone}`)).body.error.code).toBe('CCP_ERR_API_VERSION_GONE');
  });

  it.each([
    ['row key', 'sort=surt'],
    ['row key descending, one dataset', 'sort=surt&order=desc&dataset_id=DS2'],
    ['time, in a window', 'sort=ts&from=2030-11-10T06:00:00Z&to=2030-11-11'],
    ['size, largest first, 4xx and 301', 'sort=size&order=desc&status=4xx,301'],
    ['size bounds', 'min_size=2000&max_size=60000'],
  ])('pages by %s: every matching row exactly once, in order, equal to the CDX', async (_name, params) => {
    const [d40, d44] = [ids[DEV_CRAWLS[0]]!, ids[DEV_CRAWLS[1]]!];
    const p = new URLSearchParams(params.replace('DS2', String(d44)));
    const datasets = p.get('dataset_id') ? [Number(p.get('dataset_id'))] : [d40, d44];
    const from = p.get('from') ? Date.parse(p.get('from')!) : -Infinity;
    const to = p.get('to') ? Date.parse(p.get('to')!) : Infinity;
    const statuses = p.get('status')?.split(',') ?? null;
    const [min, max] = [Number(p.get('min_size') ?? -Infinity), Number(p.get('max_size') ?? Infinity)];
    const want = new Set(
      [...expectedRows(BULK, datasets, (c) => c.ts >= from && c.ts < to && (statuses === null || statuses.some((s) => (s.endsWith('xx') ? Math.floor(c.status / 100) === Number(s[0]) : c.status === Number(s)))))]
        .filter((k) => sizes.get(k)! >= min && sizes.get(k)! <= max),
    );
    expect(want.size).toBeGreaterThan(0);
    const { items, totals, versions } = await walk(`/v1/domain/${BULK}/pages?limit=17&${p}`);
    expect(versions).toEqual(new Set([v2]));
    expect(totals).toEqual(new Set([want.size]));
    const keys = items.map((i) => `${i.dataset_id} ${i.url}`);
    expect(keys).toHaveLength(want.size);
    expect(new Set(keys)).toEqual(want);
    // each row as the CDX and the worker have it
    for (const i of items) {
      const c = expected.get(i.dataset_id)!.get(i.url)!;
      expect([i.ts, i.status, i.content_length]).toEqual([iso(c.ts), c.status, sizes.get(`${i.dataset_id} ${i.url}`)]);
    }
    const sort = p.get('sort') ?? 'surt';
    const dir = p.get('order') === 'desc' ? -1 : 1;
    const value = (i: any): number | string => (sort === 'ts' ? Date.parse(i.ts) : sort === 'size' ? i.content_length : i.surt);
    for (let k = 1; k < items.length; k++) {
      const [a, b] = [value(items[k - 1]), value(items[k])];
      expect(dir * (a < b ? -1 : a > b ? 1 : 0)).toBeLessThanOrEqual(0);
    }
  });

  it.each([
    ['a time window, oldest first', 'from=2030-11-10T06:00:00Z&to=2030-11-10T18:00:00Z', true],
    ['the largest pages', 'min_size=100000&order=desc', true],
    ['error pages, newest first', 'status=4xx,5xx&order=desc', true],
    ['404s in one dataset', 'status=404&dataset_id=DS1', false],
    ['a time window with a size bound, by size', 'from=2030-11-10&to=2030-11-11&min_size=20000&sort=size', false],
  ])('/v1/pages across domains, %s: every matching row exactly once, in order, equal to the CDX', async (_name, params, exactTotal) => {
    const [d40, d44] = [ids[DEV_CRAWLS[0]]!, ids[DEV_CRAWLS[1]]!];
    const p = new URLSearchParams(params.replace('DS1', String(d40)));
    const datasets = p.get('dataset_id') ? [Number(p.get('dataset_id'))] : [d40, d44];
    const from = p.get('from') ? Date.parse(p.get('from')!) : -Infinity;
    const to = p.get('to') ? Date.parse(p.get('to')!) : Infinity;
    const statuses = p.get('status')?.split(',') ?? null;
    const [min, max] = [Number(p.get('min_size') ?? -Infinity), Number(p.get('max_size') ?? Infinity)];
    const want = new Set<string>();
    for (const d of datasets) {
      for (const [url, c] of expected.get(d)!) {
        const k = `${d} ${url}`;
        if (c.ts < from || c.ts >= to || sizes.get(k)! < min || sizes.get(k)! > max) continue;
        if (statuses !== null && !statuses.some((s) => (s.endsWith('xx') ? Math.floor(c.status / 100) === Number(s[0]) : c.status === Number(s)))) continue;
        want.add(k);
      }
    }
    expect(want.size).toBeGreaterThan(0);
    const { items, totals, versions } = await walk(`/v1/pages?limit=13&${p}`);
    expect(versions).toEqual(new Set([v2]));
    if (exactTotal) expect(totals).toEqual(new Set([want.size]));
    else expect(totals).toEqual(new Set([undefined]));
    const keys = items.map((i) => `${i.dataset_id} ${i.url}`);
    expect(keys).toHaveLength(want.size);
    expect(new Set(keys)).toEqual(want);
    for (const i of items) {
      const c = expected.get(i.dataset_id)!.get(i.url)!;
      expect([i.ts, i.status, i.content_length, i.domain]).toEqual([iso(c.ts), c.status, sizes.get(`${i.dataset_id} ${i.url}`), registeredDomainOf(i.url)]);
    }
    const sort = p.get('sort') ?? (p.get('min_size') && !p.get('from') && !p.get('status') ? 'size' : 'ts');
    const dir = p.get('order') === 'desc' ? -1 : 1;
    const value = (i: any): number => (sort === 'ts' ? Date.parse(i.ts) : i.content_length);
    for (let k = 1; k < items.length; k++) expect(dir * (value(items[k]) - value(items[k - 1]))).toBeGreaterThanOrEqual(0);
  });

  it('/v1/pages refuses row-key order and a cursor of another query; hides what the caller may not see', async () => {
    const r = await get('/v1/pages?sort=surt');
    expect([r.status, r.body.error.detail]).toEqual([400, { param: 'sort' }]);
    const first = await get('/v1/pages?status=4xx&limit=2');
    expect((await get(`/v1/pages?status=5xx&limit=2&cursor=${first.body.next_cursor}`)).body.error.detail).toEqual({ param: 'cursor' });
    expect((await get(`/v1/domain/${BULK}/pages?cursor=${first.body.next_cursor}`)).status).toBe(400);
    expect((await get('/v1/pages?dataset_id=99')).body.error.code).toBe('CCP_ERR_API_DATASET_NOT_FOUND');
  });

  it('/v1/datasets/{id}/domains: the largest domains of a crawl as the CDX counts them; /v1/domain: facts as the CDX has them', async () => {
    for (const crawl of DEV_CRAWLS) {
      const d = ids[crawl]!;
      const counts = new Map<string, number>();
      for (const url of expected.get(d)!.keys()) counts.set(registeredDomainOf(url)!, (counts.get(registeredDomainOf(url)!) ?? 0) + 1);
      const want = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 8).map(([domain, url_count]) => ({ domain, url_count }));
      const r = await get(`/v1/datasets/${d}/domains?limit=8`);
      expect([r.status, r.body.items]).toEqual([200, want]);
    }
    const dom = await get(`/v1/domain/${BULK}`);
    for (const ds of dom.body.datasets) {
      const rows = [...expected.get(ds.dataset_id)!.values()].filter((c) => registeredDomainOf(c.url) === BULK);
      const cls = (k: number) => rows.filter((c) => Math.floor(c.status / 100) === k).length;
      expect(ds.status_classes).toEqual({ '2xx': cls(2), '3xx': cls(3), '4xx': cls(4), '5xx': cls(5) });
      expect([ds.first_ts, ds.last_ts]).toEqual([iso(Math.min(...rows.map((c) => c.ts))), iso(Math.max(...rows.map((c) => c.ts)))]);
      expect(ds.hosts).toBe(new Set(rows.map((c) => new URL(c.url).hostname)).size);
      const sz = rows.map((c) => sizes.get(`${ds.dataset_id} ${c.url}`)!).sort((a, b) => a - b);
      expect(ds.content_length_median).toBe(sz[Math.ceil(sz.length / 2) - 1]);
    }
  });

  it('row-key order: the registered domain first, then its subdomains, www. folded into the domain', async () => {
    const { items } = await walk(`/v1/domain/${BULK}/pages?limit=1000&dataset_id=${ids[DEV_CRAWLS[0]]}`);
    const surts: string[] = items.map((i) => i.surt);
    expect(surts).toEqual([...surts].sort());
    expect(surts[0]!.startsWith('uk,co,bulk-3)/')).toBe(true);
  });

  it('/v1/url: the history across both crawls, oldest first, with the text the worker extracted, language and size', async () => {
    const [d40, d44] = [ids[DEV_CRAWLS[0]]!, ids[DEV_CRAWLS[1]]!];
    const both = [...expected.get(d40)!.keys()].filter((u) => expected.get(d44)!.has(u) && (texts.get(`${d40} ${u}`) ?? '').length > 200);
    expect(both.length).toBeGreaterThan(5);
    for (const url of both.slice(0, 10)) {
      const plain = await get(`/v1/url?url=${encodeURIComponent(url)}`);
      expect(plain.status).toBe(200);
      expect(plain.body.captures[0]).not.toHaveProperty('text');
      const r = await get(`/v1/url?url=${encodeURIComponent(url)}&include=text`);
      const caps = r.body.captures as any[];
      expect(caps.map((c) => c.ts)).toEqual(caps.map((c) => c.ts).sort());
      expect(caps.map((c) => c.dataset_id).sort()).toEqual([d40, d44].sort());
      for (const c of caps) {
        const key = `${c.dataset_id} ${url}`;
        expect(c.text).toBe(texts.get(key));
        expect(c.text_length).toBe([...(texts.get(key) ?? '')].length);
        expect(c.content_length).toBe(sizes.get(key));
        expect(c.ts).toBe(iso(expected.get(c.dataset_id)!.get(url)!.ts));
        expect(c).not.toHaveProperty('text_truncated');
        expect(c.language === null || /^[a-z]{3}$/.test(c.language)).toBe(true);
      }
    }
    // an error page is in the index with its status and size, and no text
    const err = [...expected.get(d40)!.values()].find((c) => c.status === 404)!;
    const e = await get(`/v1/url?url=${encodeURIComponent(err.url)}&include=text`);
    expect(e.body.captures.find((c: any) => c.dataset_id === d40)).toMatchObject({ status: 404, text: null, content_length: sizes.get(`${d40} ${err.url}`) });
  });

  it('bad input: unknown parameters, bad values, from after to, a cursor of another query → 400 naming the parameter; unknown URL → 404', async () => {
    const bad = async (path: string, param: string) => {
      const r = await get(path);
      expect([path, r.status, r.body.error.code, r.body.error.detail]).toEqual([path, 400, 'CCP_ERR_API_BAD_REQUEST', { param }]);
    };
    await bad('/v1/url?url=https%3A%2F%2Fexample.com%2F&include=bogus', 'include');
    await bad(`/v1/domain/${BULK}/pages?sort=bogus`, 'sort');
    await bad(`/v1/domain/${BULK}/pages?order=up`, 'order');
    await bad(`/v1/domain/${BULK}/pages?from=2030-11-12&to=2030-11-10`, 'from');
    await bad(`/v1/domain/${BULK}/pages?from=2030-02-30`, 'from');
    await bad(`/v1/domain/${BULK}/pages?status=4x`, 'status');
    await bad(`/v1/domain/${BULK}/pages?min_size=-1`, 'min_size');
    await bad(`/v1/domain/${BULK}/pages?limti=5`, 'limti');
    await bad(`/v1/domain/${BULK}/pages?cursor=notacursor`, 'cursor');
    await bad(`/v1/domain/${BULK}?x=1`, 'x');
    const first = await get(`/v1/domain/${BULK}/pages?limit=5&status=2xx`);
    await bad(`/v1/domain/${BULK}/pages?limit=5&status=4xx&cursor=${first.body.next_cursor}`, 'cursor');
    await bad(`/v1/domain/${BULK}/pages?limit=5&sort=ts&status=2xx&cursor=${first.body.next_cursor}`, 'cursor');
    // the page size may change between pages of one query
    expect((await get(`/v1/domain/${BULK}/pages?limit=50&status=2xx&cursor=${first.body.next_cursor}`)).status).toBe(200);
    expect((await get('/v1/url?url=https%3A%2F%2Fnot-crawled.example%2F')).body.error.code).toBe('CCP_ERR_API_URL_NOT_FOUND');
    expect((await get('/v1/domain/not-crawled.example/pages')).body.error.code).toBe('CCP_ERR_API_DOMAIN_NOT_FOUND');
    expect((await get(`/v1/domain/${BULK}/pages?dataset_id=99`)).body.error.code).toBe('CCP_ERR_API_DATASET_NOT_FOUND');
  });

  // last: it publishes a third version (the policy applied to the lake)
  it('--text-versions 1 on the merged lake: only the newest capture of each URL keeps its text, the older say text_dropped', async () => {
    const [d40, d44] = [ids[DEV_CRAWLS[0]]!, ids[DEV_CRAWLS[1]]!];
    const both = [...expected.get(d40)!.keys()].filter((u) => expected.get(d44)!.has(u) && (texts.get(`${d40} ${u}`) ?? '').length > 0 && (texts.get(`${d44} ${u}`) ?? '').length > 0);
    expect(both.length).toBeGreaterThan(5);
    const r = await runMerge({ store: new FsObjectStore({ root: dir }), dataDir: dir, rowGroupSize: 64, keepVersions: 3, graceMs: 60_000, textVersions: 1 });
    expect(r).toMatchObject({ published: true, batches: 0 });
    // the lake had no policy: every URL's older capture is ranked out (one per URL both crawls hold, text or not)
    expect(r.textDropped).toBe([...expected.get(d40)!.keys()].filter((u) => expected.get(d44)!.has(u)).length);
    for (const url of both.slice(0, 10)) {
      const res = await get(`/v1/url?url=${encodeURIComponent(url)}&include=text`);
      expect(res.version).toBe(r.version);
      expect(res.body.text_versions).toBe(1);
      const [a, b] = [expected.get(d40)!.get(url)!, expected.get(d44)!.get(url)!];
      const newest = a.ts > b.ts ? d40 : d44; // a tie goes to the higher dataset id
      for (const c of res.body.captures as any[]) {
        if (c.dataset_id === newest) {
          expect(c.text).toBe(texts.get(`${c.dataset_id} ${url}`));
          expect(c).not.toHaveProperty('text_dropped');
        } else {
          expect([c.text, c.text_length, c.text_dropped]).toEqual([null, null, true]);
          expect(c.status).toBe(expected.get(c.dataset_id)!.get(url)!.status); // the metadata stays
        }
      }
    }
  });
});
