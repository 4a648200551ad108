import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { layout } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { processBatch } from '@ccpipe/worker';
import { openIndexSource, runMerge, type LakeIndexSource } from '@ccpipe/index';
import { Acl, searchMetrics, startApi, type ApiServer } from '@ccpipe/api';
import { Registry } from 'prom-client';
import { DEV_CRAWLS } from './support/corpus';
import { devBatches, devStore } from './support/dev-batches';
import { readParquetRows } from './support/parquet';

// Full-text search over the whole pipeline: cc-mirror-dev (default filter) → worker (real extraction, text kept) →
// merger (search shards) → HTTP API. Every page with text must be found by a phrase of its own text that no other page
// of its dataset holds — chosen here from the parts the worker wrote, by plain string matching, not by the engine —
// and a caller sees no hit from a dataset its token does not grant.

interface Page {
  url: string;
  title: string | null;
  text: string;
  ts: number;
}

let dir: string;
let source: LakeIndexSource;
let server: ApiServer;
const ids: Record<string, number> = {};
/** Per dataset: the latest capture of each URL with a text (the merge's rule: the latest capture wins). */
const pages = new Map<number, Map<string, Page>>();

const ALL = { authorization: 'Bearer token-for-all-datasets' };
const FIRST = { authorization: 'Bearer token-for-the-first-crawl' };

async function get(path: string, headers: Record<string, string> = ALL): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${server.url}${path}`, { headers });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** Text as compared here: diacritics and case folded, every run of non-letters one space (what a phrase match ignores). */
const fold = (s: string): string => ` ${s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim()} `;

/**
 * Phrases of `n` words of `text`, from the middle outwards, at most `max`: words of letters and digits only, so a
 * phrase is the same words to the engine's tokenizer.
 */
function phrasesOf(text: string, n = 6, max = 8): string[] {
  const words = text.split(/\s+/).filter(Boolean);
  const mid = Math.floor(words.length / 2);
  const out: string[] = [];
  for (let k = 0; k < words.length && out.length < max; k++) {
    const at = mid + (k % 2 === 0 ? k / 2 : -(k + 1) / 2);
    if (at < 0 || at + n > words.length) continue;
    const w = words.slice(at, at + n);
    if (w.every((x) => /^[\p{L}\p{N}]+$/u.test(x))) out.push(w.join(' '));
  }
  return out;
}

/** A page as the independent matcher reads it: title and text folded, apart (a phrase never spans the two). */
const searchable = (p: Page): string => `${fold(p.title ?? '')}\u0001${fold(p.text)}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-search-e2e-'));
  const { store, ids: named, deps } = await devStore(dir);
  Object.assign(ids, named);
  for (const crawl of DEV_CRAWLS) {
    const id = ids[crawl]!;
    const latest = new Map<string, Page | null>();
    const tsOf = new Map<string, number>();
    for (const b of await devBatches(crawl, { datasetId: id, batchSize: 200 })) {
      await processBatch(b, deps, { concurrency: 8, includeText: true });
      for (const r of await readParquetRows((await store.get(layout.batchPart(id, b.id)))!)) {
        const url = r['url'] as string;
        const ts = Number(r['ts'] instanceof Date ? (r['ts'] as Date).getTime() : r['ts']);
        if ((tsOf.get(url) ?? -Infinity) > ts) continue;
        tsOf.set(url, ts);
        const text = r['text'] as string | null;
        latest.set(url, text ? { url, title: (r['title'] as string | null) ?? null, text, ts } : null);
      }
    }
    pages.set(id, new Map([...latest].filter((e): e is [string, Page] => e[1] !== null)));
  }
  await runMerge({ store, dataDir: dir, rowGroupSize: 64, keepVersions: 3, graceMs: 60_000 });
  source = await openIndexSource({ store, dataDir: dir, pollMs: 0, search: { threads: 1, timeLimitMs: 5000 } });
  const acl = Acl.parse(JSON.stringify({ v: 1, tokens: [{ name: 'all', token: 'token-for-all-datasets', datasets: '*' }, { name: 'first', token: 'token-for-the-first-crawl', datasets: [DEV_CRAWLS[0]] }] }));
  server = await startApi({ source, port: 0, acl });
}, 600_000);

afterAll(async () => {
  await server?.close();
  await source?.close();
  await closeDuckDbParquetEngine();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('full-text search over HTTP on cc-mirror-dev', () => {
  it('finds every page with text by a phrase of its own text: exactly the pages that hold the phrase, its own first when alone', async () => {
    let asked = 0;
    let alone = 0;
    const found = new Set<string>();
    for (const [id, byUrl] of pages) {
      const all = [...byUrl.values()];
      expect(all.length).toBeGreaterThan(100);
      const folded = all.map(searchable);
      // the mirror repeats some texts under several URLs: one phrase per distinct text
      const done = new Set<string>();
      for (const p of all) {
        if (done.has(p.text)) continue;
        done.add(p.text);
        // the phrase held by the fewest pages (counted here, not by the engine), at most 20 of them
        let best: { phrase: string; holders: string[] } | null = null;
        for (const phrase of phrasesOf(p.text)) {
          const f = fold(phrase);
          const holders = all.filter((_, j) => folded[j]!.includes(f)).map((x) => x.url);
          if (best === null || holders.length < best.holders.length) best = { phrase, holders };
          if (holders.length === 1) break;
        }
        if (best === null || best.holders.length > 20) continue; // no plain six-word phrase, or boilerplate only
        const r = await get(`/v1/search?q=${encodeURIComponent(`"${best.phrase}"`)}&dataset_id=${id}&limit=100`);
        expect(r.status).toBe(200);
        const urls = r.body.items.map((h: { url: string }) => h.url);
        expect({ phrase: best.phrase, urls: [...urls].sort() }).toEqual({ phrase: best.phrase, urls: [...best.holders].sort() });
        expect(r.body.total).toBe(best.holders.length);
        for (const u of urls) found.add(`${id} ${u}`);
        expect(r.body.items.find((h: { url: string }) => h.url === p.url).snippet).toContain('<mark>');
        if (best.holders.length === 1) {
          alone++;
          expect(r.body.items[0].ts).toBe(new Date(p.ts).toISOString().replace('.000Z', 'Z'));
        }
        asked++;
      }
    }
    // every distinct text was asked for (cc-mirror-dev: 166 and 149 of them), so every page was found; some by a
    // phrase that only its page holds
    const distinct = [...pages.values()].reduce((n, m) => n + new Set([...m.values()].map((x) => x.text)).size, 0);
    expect(asked).toBeGreaterThanOrEqual(Math.ceil(distinct * 0.95));
    expect(found.size).toBeGreaterThanOrEqual(Math.ceil([...pages.values()].reduce((n, m) => n + m.size, 0) * 0.95));
    expect(alone).toBeGreaterThan(100);
  }, 300_000);

  it('returns no hit from a dataset the caller may not see', async () => {
    const [first, second] = DEV_CRAWLS.map((c) => ids[c]!);
    // a page only the second crawl holds, found by a caller who sees both and by no one else
    const firstTexts = [...pages.get(first!)!.values()].map(searchable);
    let only: Page | undefined;
    let phrase = '';
    for (const p of pages.get(second!)!.values()) {
      if (pages.get(first!)!.has(p.url)) continue;
      phrase = phrasesOf(p.text).find((x) => firstTexts.every((t) => !t.includes(fold(x)))) ?? '';
      if (phrase !== '') {
        only = p;
        break;
      }
    }
    expect(only).toBeDefined();
    const q = `/v1/search?q=${encodeURIComponent(`"${phrase}"`)}`;
    expect((await get(q)).body.items.map((h: { url: string }) => h.url)).toContain(only!.url);
    const limited = await get(q, FIRST);
    expect(limited.status).toBe(200);
    expect(limited.body.items).toEqual([]);
    expect(limited.body.total).toBe(0);
    expect((await get(`${q}&dataset_id=${second}`, FIRST)).status).toBe(404);
    // a common word: every hit the limited caller sees is of the first crawl
    const common = await get('/v1/search?q=the&limit=100', FIRST);
    expect(common.body.items.length).toBeGreaterThan(0);
    expect(new Set(common.body.items.map((h: { dataset_id: number }) => h.dataset_id))).toEqual(new Set([first]));
  });

  it('scopes to a domain and a time range, pages with a cursor, and refuses bad queries with 400', async () => {
    const all = await get('/v1/search?q=the&limit=10');
    expect(all.body.total).toBeGreaterThan(10);
    const second = await get(`/v1/search?q=the&limit=10&cursor=${all.body.next_cursor}`);
    expect(second.status).toBe(200);
    const seen = new Set(all.body.items.map((h: { url: string; dataset_id: number }) => `${h.dataset_id} ${h.url}`));
    for (const h of second.body.items) expect(seen.has(`${h.dataset_id} ${h.url}`)).toBe(false);
    const domain = new URL(all.body.items[0].url).hostname;
    const scoped = await get(`/v1/search?q=the&limit=100&domain=${encodeURIComponent(domain)}`);
    expect(scoped.body.items.length).toBeGreaterThan(0);
    for (const h of scoped.body.items) expect(new URL(h.url).hostname.endsWith(scoped.body.domain)).toBe(true);
    const none = await get('/v1/search?q=the&to=2000-01-01');
    expect([none.status, none.body.total]).toEqual([200, 0]);
    for (const [q, param] of [['', 'q'], ['x'.repeat(1001), 'q'], ['"', 'q'], ['the&limit=0', 'limit'], ['the&from=yesterday', 'from'], ['the&limit=100&cursor=abc', 'cursor']] as const) {
      const r = await get(`/v1/search?q=${q}`);
      expect({ q: q.slice(0, 20), status: r.status, param: r.body.error?.detail?.param }).toEqual({ q: q.slice(0, 20), status: 400, param });
    }
  });

  it('answers 503 with Retry-After past the time limit, counted in the search metrics, and serves on', async () => {
    const tight = await openIndexSource({ store: new FsObjectStore({ root: dir }), dataDir: dir, pollMs: 0, search: { threads: 1, timeLimitMs: 1 } });
    const api = await startApi({ source: tight, port: 0 });
    const registry = new Registry();
    searchMetrics(registry, () => tight.searchStats());
    const value = async (name: string): Promise<number | undefined> => (await registry.getSingleMetric(name)!.get()).values[0]?.value;
    try {
      expect(await value('ccpipe_api_search_timeouts_total')).toBe(0);
      const res = await fetch(`${api.url}/v1/search?q=the&limit=100`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CCP_ERR_API_SEARCH_TIMEOUT');
      expect(await value('ccpipe_api_search_timeouts_total')).toBe(1);
      // the API and its other routes go on; the generous source answers the same query
      expect((await fetch(`${api.url}/v1/datasets`)).status).toBe(200);
      expect((await get('/v1/search?q=the&limit=100')).status).toBe(200);
    } finally {
      await api.close();
      await tight.close();
    }
  });
});
