import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { hasCode } from '@ccpipe/core';
import { buildSearchShard, openSearchShard, parseSearchQuery, searchShards, type SearchDoc, type SearchShard } from './index';

const SH = resolve(__dirname, '../../../../shared/corpus/scrapinghub-article-extraction-benchmark');
const truth = JSON.parse(readFileSync(join(SH, 'ground-truth.json'), 'utf8')) as Record<string, { url: string; articleBody: string }>;
const articles = Object.values(truth).slice(0, 60);

const T0 = 1_700_000_000;
let dir: string;
const open: SearchShard[] = [];

function doc(rowId: number, domain: string, title: string | null, text: string | null, ts = T0 + rowId): SearchDoc {
  return { rowId, urlId: BigInt(rowId) * 1_000_000_007n, url: `https://${domain}/p/${rowId}`, domain, datasetId: 1, ts, title, text };
}

async function shard(name: string, docs: SearchDoc[], opts = {}): Promise<SearchShard> {
  const path = join(dir, `${name}.db`);
  await buildSearchShard(path, docs, opts);
  const s = openSearchShard(path);
  open.push(s);
  return s;
}

const search = (s: SearchShard, q: string, opts: Partial<Parameters<SearchShard['search']>[1]> = {}) =>
  s.search(parseSearchQuery(q), { limit: 10, ...opts });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ccpipe-search-test-'));
});
afterAll(() => {
  for (const s of open) s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a shard of real article texts', () => {
  let s: SearchShard;
  beforeAll(async () => {
    s = await shard(
      'articles',
      articles.map((a, i) => doc(i, `site${i % 7}.example`, null, a.articleBody)),
    );
  });

  it('finds an article by a rare phrase from its middle, first', () => {
    for (const i of [3, 17, 42]) {
      const words = articles[i]!.articleBody.split(/\s+/);
      const mid = Math.floor(words.length / 2);
      const phrase = words.slice(mid, mid + 6).join(' ').replace(/["“”]/g, '');
      const r = search(s, `"${phrase}"`);
      expect(r.hits[0]?.rowId).toBe(i);
      expect(r.hits[0]?.snippet).toContain('<mark>');
    }
  });

  it('counts and ranks phrase and bag-of-words queries differently', () => {
    const bag = search(s, 'the new year');
    const phrase = search(s, '"the new year"');
    expect(bag.total).toBeGreaterThan(phrase.total);
    const phraseIds = new Set(phrase.hits.map((h) => h.rowId));
    // every phrase hit holds the words next to each other; some bag-of-words hits do not
    for (const h of phrase.hits) expect(articles[h.rowId]!.articleBody.toLowerCase()).toMatch(/the\s+new\s+year/);
    expect(bag.hits.some((h) => !phraseIds.has(h.rowId))).toBe(true);
  });

  it('returns hits in score order with the fields of the doc', () => {
    const r = search(s, 'government');
    expect(r.hits.length).toBeGreaterThan(1);
    for (let i = 1; i < r.hits.length; i++) expect(r.hits[i - 1]!.score).toBeGreaterThanOrEqual(r.hits[i]!.score);
    const h = r.hits[0]!;
    expect(h.urlId).toBe((BigInt(h.rowId) * 1_000_000_007n).toString());
    expect(h.url).toBe(`https://site${h.rowId % 7}.example/p/${h.rowId}`);
    expect(h.datasetId).toBe(1);
    expect(h.ts).toBe(T0 + h.rowId);
  });

  it('pages with offset without repeating hits', () => {
    const all = search(s, 'the', { limit: 20 }).hits.map((h) => h.rowId);
    const p2 = search(s, 'the', { limit: 10, offset: 10 }).hits.map((h) => h.rowId);
    expect(p2).toEqual(all.slice(10, 20));
  });

  it('filters by domain (one rowid run per domain when docs come domain by domain)', async () => {
    const sorted = articles.map((a, i) => ({ a, i })).sort((x, y) => (x.i % 7) - (y.i % 7) || x.i - y.i);
    const byDomain = await shard(
      'by-domain',
      sorted.map(({ a, i }, row) => ({ ...doc(row, `site${i % 7}.example`, null, a.articleBody), url: `https://x/${i}` })),
    );
    const r = search(byDomain, 'the', { domain: 'site3.example', limit: 100 });
    expect(r.total).toBe(sorted.filter(({ i }) => i % 7 === 3).length);
    for (const h of r.hits) expect(Number(h.url.split('/').pop()) % 7).toBe(3);
    expect(search(byDomain, 'the', { domain: 'nowhere.example' })).toEqual({ hits: [], total: 0, totalExact: true });
    // docs in any order still filter right (one run per doc here)
    const r2 = search(s, 'the', { domain: 'site3.example', limit: 100 });
    expect(r2.hits.map((h) => h.rowId).sort((a, b) => a - b)).toEqual(articles.map((_, i) => i).filter((i) => i % 7 === 3));
  });
});

describe('query handling', () => {
  let s: SearchShard;
  beforeAll(async () => {
    s = await shard('small', [
      doc(1, 'a.example', 'Le café de Paris', 'Un café au lait, s’il vous plaît. AND OR NOT col: stuff * "quoted"', T0),
      doc(2, 'a.example', 'Coffee', 'The cafe serves coffee and tea all day.', T0 + 100),
      doc(3, 'b.example', 'Naïve <script>alert(1)</script>', 'Tags like <b>bold</b> & "quotes" stay text: café <i>x</i>', T0 + 200),
      doc(4, 'b.example', null, null, T0 + 300), // nothing to index: skipped
    ]);
  });

  it('folds diacritics both ways (café = cafe)', () => {
    expect(search(s, 'cafe').total).toBe(3);
    expect(search(s, 'café').total).toBe(3);
    expect(search(s, 'naive').hits.map((h) => h.rowId)).toEqual([3]);
  });

  it('never lets a hostile query reach FTS5 as syntax', () => {
    for (const q of ['AND OR NOT', 'col:', 'title:coffee', 'NEAR(cafe coffee)', '"unclosed', 'cafe*', '^cafe', '(((cafe', 'a"b"c"', '\u0000cafe']) {
      expect(() => search(s, q)).not.toThrow();
    }
    expect(search(s, 'AND OR NOT').hits.map((h) => h.rowId)).toEqual([1]);
    expect(search(s, 'title:coffee').total).toBe(0); // the words "title coffee" side by side: no doc has them
    expect(search(s, 'cafe*').total).toBe(3); // no prefix operator: the word cafe
  });

  it('gives a typed error for empty, too long and wordless queries', () => {
    for (const q of ['', '"', '*', '-cafe', ' : ', 'x'.repeat(1001)]) {
      let err: unknown;
      try {
        search(s, q);
      } catch (e) {
        err = e;
      }
      expect(hasCode(err, 'CCP_ERR_SEARCH_QUERY')).toBe(true);
    }
  });

  it('escapes the snippet and marks only the matched words', () => {
    const h = search(s, 'cafe').hits.find((x) => x.rowId === 3)!;
    expect(h.snippet).toBe('Tags like &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quotes&quot; stay text: <mark>café</mark> &lt;i&gt;x&lt;/i&gt;');
    expect(h.snippetParts.filter((p) => p.hit).map((p) => p.text)).toEqual(['café']);
    expect(h.title).toBe('Naïve <script>alert(1)</script>'); // raw: the API encodes it as JSON, the client escapes it
  });

  it('filters by time (from and to inclusive)', () => {
    expect(search(s, 'cafe', { from: T0 + 100 }).hits.map((h) => h.rowId).sort()).toEqual([2, 3]);
    expect(search(s, 'cafe', { to: T0 + 100 }).hits.map((h) => h.rowId).sort()).toEqual([1, 2]);
    expect(search(s, 'cafe', { from: T0 + 50, to: T0 + 150 }).total).toBe(1);
  });

  it('excludes words', () => {
    expect(search(s, 'cafe -coffee').hits.map((h) => h.rowId).sort()).toEqual([1, 3]);
  });

  it('refuses bad options with a typed error', () => {
    for (const o of [{ limit: 0 }, { limit: 101 }, { offset: -1 }, { offset: 995, limit: 10 }, { from: Number.NaN }]) {
      let err: unknown;
      try {
        search(s, 'cafe', o);
      } catch (e) {
        err = e;
      }
      expect(hasCode(err, 'CCP_ERR_SEARCH_QUERY')).toBe(true);
    }
  });
});

describe('time limit', () => {
  it('interrupts a query with many matches and says so with a typed, retryable error', async () => {
    const words = ['alpha', 'beta', 'gamma', 'delta', 'omega'];
    const docs = Array.from({ length: 30_000 }, (_, i) => doc(i, `d${i % 50}.example`, null, `${words[i % 5]} common text number ${i} ${words[(i * 7) % 5]} common`));
    const big = await shard('big', docs);
    const q = parseSearchQuery('common text');
    const ok = big.search(q, { limit: 10, timeLimitMs: 10_000 });
    // counted exactly to the cap (10,000), then extrapolated by how far into the rowids the cap was reached
    expect(ok.totalExact).toBe(false);
    expect(ok.total).toBe(30_000);
    const t = performance.now();
    let err: unknown;
    try {
      big.search(q, { limit: 10, timeLimitMs: 1 });
    } catch (e) {
      err = e;
    }
    expect(hasCode(err, 'CCP_ERR_SEARCH_TIMEOUT')).toBe(true);
    expect((err as { retryable: boolean }).retryable).toBe(true);
    expect(performance.now() - t).toBeLessThan(1000);
    // a deadline already past fails before any work, also across shards
    let err2: unknown;
    try {
      searchShards([big, big], q, { limit: 10, deadline: performance.now() - 1 });
    } catch (e) {
      err2 = e;
    }
    expect(hasCode(err2, 'CCP_ERR_SEARCH_TIMEOUT')).toBe(true);
  });
});

describe('searchShards', () => {
  it('merges hits of several shards by score and sums the totals', async () => {
    const texts = articles.slice(0, 30);
    const a = await shard('g-a', texts.filter((_, i) => i % 2 === 0).map((t, i) => doc(i, 'a.example', null, t.articleBody)));
    const b = await shard('g-b', texts.filter((_, i) => i % 2 === 1).map((t, i) => doc(i, 'b.example', null, t.articleBody)));
    const q = parseSearchQuery('people');
    const r = searchShards([a, b], q, { limit: 10 });
    expect(r.total).toBe(a.search(q, { limit: 1 }).total + b.search(q, { limit: 1 }).total);
    expect(r.shards).toBe(2);
    for (let i = 1; i < r.hits.length; i++) expect(r.hits[i - 1]!.score).toBeGreaterThanOrEqual(r.hits[i]!.score);
    expect(new Set(r.hits.map((h) => h.shard)).size).toBe(2);
    // the merged page is each shard's own best hits, interleaved by score
    const best = [...a.search(q, { limit: 10 }).hits.map((h) => ({ ...h, shard: 0 })), ...b.search(q, { limit: 10 }).hits.map((h) => ({ ...h, shard: 1 }))]
      .sort((x, y) => y.score - x.score)
      .slice(0, 10);
    expect(r.hits.map((h) => [h.shard, h.rowId])).toEqual(best.map((h) => [h.shard, h.rowId]));
    const p2 = searchShards([a, b], q, { limit: 5, offset: 5 });
    expect(p2.hits.map((h) => [h.shard, h.rowId])).toEqual(best.slice(5, 10).map((h) => [h.shard, h.rowId]));
  });
});

describe('shard files', () => {
  it('refuses a file that is not a search shard with a typed error', () => {
    const p = join(dir, 'junk.db');
    writeFileSync(p, 'not a database');
    for (const path of [p, join(dir, 'missing.db')]) {
      let err: unknown;
      try {
        openSearchShard(path);
      } catch (e) {
        err = e;
      }
      expect(hasCode(err, 'CCP_ERR_SEARCH_SHARD')).toBe(true);
    }
  });

  it('leaves no shard behind when a build fails (duplicate rowId)', async () => {
    const p = join(dir, 'dup.db');
    // matched by its code: better-sqlite3's native addon is loaded once per process, so when jest runs another test
    // file in this worker first, its SqliteError comes from that file's realm and is no `instanceof Error` here
    await expect(buildSearchShard(p, [doc(1, 'a', 't', 'x'), doc(1, 'a', 't', 'y')])).rejects.toHaveProperty('code', 'SQLITE_CONSTRAINT_PRIMARYKEY');
    expect(() => openSearchShard(p)).toThrow();
  });

  it('takes async iterables and stores no text when asked', async () => {
    async function* gen(): AsyncGenerator<SearchDoc> {
      yield doc(1, 'a.example', 'Title words', 'body text here');
    }
    const path = join(dir, 'async.db');
    const res = await buildSearchShard(path, gen(), { storeText: false });
    expect(res.docs).toBe(1);
    const s = openSearchShard(path);
    open.push(s);
    const h = s.search(parseSearchQuery('body'), { limit: 1 }).hits[0]!;
    expect(h.snippet).toBe('');
    expect(h.title).toBe('Title words');
  });
});
