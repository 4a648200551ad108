import { createHash } from 'node:crypto';
import { Acl } from './acl';
import { MemoryIndexSource, buildMemoryView } from './memory-index-source';
import { ingestStatusOf, type IngestFact } from './ingest-status';
import { startApi, type ApiServer } from './server';
import { CRAWLS, DATASETS, cap40, cap44, canonicalSet, get, oracle, viewBoth } from './test-corpus';

const TOKEN_40 = 'tok-crawl-40-only-0123456789';
const TOKEN_ALL = 'tok-everything-abcdefghijkl';
const TOKEN_44_HASHED = 'tok-crawl-44-by-hash-xyz0123';
const sha = (s: string): string => createHash('sha256').update(s).digest('hex');
const ACL_JSON = JSON.stringify({
  v: 1,
  tokens: [
    { name: 'crawl40', token: TOKEN_40, datasets: ['CC-MAIN-2030-40'] },
    { name: 'all', token: TOKEN_ALL, datasets: '*' },
    { name: 'crawl44', sha256: sha(TOKEN_44_HASHED).toUpperCase(), datasets: [2] },
  ],
});
const bearer = (t: string): Record<string, string> => ({ authorization: `Bearer ${t}` });

describe('Acl.parse / authenticate', () => {
  it('authenticates bearer tokens given in clear or as SHA-256, nothing else', () => {
    const acl = Acl.parse(ACL_JSON);
    expect(acl.size).toBe(3);
    expect(acl.authenticate(`Bearer ${TOKEN_40}`)?.name).toBe('crawl40');
    expect(acl.authenticate(`bearer   ${TOKEN_44_HASHED}`)?.name).toBe('crawl44');
    for (const h of [undefined, '', TOKEN_40, `Basic ${TOKEN_40}`, `Bearer ${TOKEN_40}x`, `Bearer ${sha(TOKEN_44_HASHED)}`, 'Bearer']) {
      expect(acl.authenticate(h)).toBeNull();
    }
    const p = acl.authenticate(`Bearer ${TOKEN_40}`)!;
    expect([p.canSee(1, 'CC-MAIN-2030-40'), p.canSee(2, 'CC-MAIN-2030-44'), p.canSee(1, undefined)]).toEqual([true, false, false]);
  });

  it('rejects a bad file with CCP_ERR_API_ACL and never echoes a token', () => {
    const bad = [
      '{',
      JSON.stringify({ v: 2, tokens: [] }),
      JSON.stringify({ v: 1, tokens: [{ name: 'a', token: 'short', datasets: '*' }] }),
      JSON.stringify({ v: 1, tokens: [{ name: 'a', token: TOKEN_40, sha256: sha(TOKEN_40), datasets: '*' }] }),
      JSON.stringify({ v: 1, tokens: [{ name: 'a', token: TOKEN_40, datasets: '*' }, { name: 'b', sha256: sha(TOKEN_40), datasets: [1] }] }),
      JSON.stringify({ v: 1, tokens: [{ name: 'a', token: TOKEN_40, datasets: '*' }, { name: 'a', token: TOKEN_ALL, datasets: [1] }] }),
      JSON.stringify({ v: 1, tokens: [{ name: 'a', token: TOKEN_40, datasets: ['bad name!'] }] }),
    ];
    for (const text of bad) {
      let err: any;
      try {
        Acl.parse(text);
      } catch (e) {
        err = e;
      }
      expect(err?.code).toBe('CCP_ERR_API_ACL');
      expect(String(err.message)).not.toContain(TOKEN_40);
    }
  });
});

describe('dataset ACL over HTTP', () => {
  let server: ApiServer;
  beforeAll(async () => {
    const facts: IngestFact[] = CRAWLS.map((c, i) => ({ id: i + 1, name: c, crawl: c, checkpoint: { planLength: 4, nextPlanIndex: 4, batchesPublished: 2, recordsPublished: 100 * (i + 1), done: true } }));
    server = await startApi({
      source: new MemoryIndexSource(viewBoth), port: 0, acl: Acl.parse(ACL_JSON),
      statusProvider: async ({ view, canSee }) => ingestStatusOf(facts, view?.batchesMerged?.() ?? new Map(), canSee),
    });
  });
  afterAll(() => server.close());

  it('answers 401 without a valid token on every /v1 route; /healthz stays open', async () => {
    for (const p of ['/v1/datasets', '/v1/status', '/v1/domain/bulk-3.org', '/v1/domain/bulk-3.org/datasets/1/urls', '/v1/url?url=https%3A%2F%2Fbulk-3.org%2F']) {
      for (const h of [{}, bearer('wrong-token-0123456789abc')]) {
        const r = await get(server, p, h);
        expect([p, r.status, r.body.error.code, r.headers.get('www-authenticate')]).toEqual([p, 401, 'CCP_ERR_API_UNAUTHORIZED', 'Bearer']);
      }
    }
    expect((await get(server, '/healthz')).status).toBe(200);
  });

  it('hides the datasets a token cannot see everywhere, as if they did not exist', async () => {
    const ds = await get(server, '/v1/datasets', bearer(TOKEN_40));
    expect(ds.body.datasets.map((d: any) => d.name)).toEqual(['CC-MAIN-2030-40']);
    expect((await get(server, '/v1/datasets', bearer(TOKEN_ALL))).body.datasets.length).toBe(2);
    expect((await get(server, '/v1/datasets', bearer(TOKEN_44_HASHED))).body.datasets.map((d: any) => d.dataset_id)).toEqual([2]);

    const dom = await get(server, '/v1/domain/bulk-3.org', bearer(TOKEN_40));
    expect(dom.body.datasets).toMatchObject([{ dataset_id: 1, name: 'CC-MAIN-2030-40', url_count: canonicalSet(oracle.crawls[CRAWLS[0]]!.domains['bulk-3.org']!.urls).size }]);

    // a domain only crawl 44 holds: absent for the crawl-40 token, exactly like an unknown domain
    const only44 = Object.keys(oracle.crawls[CRAWLS[1]]!.domains).find((d) => !oracle.crawls[CRAWLS[0]]!.domains[d]);
    expect(only44).toBeDefined();
    const hidden = await get(server, `/v1/domain/${only44}`, bearer(TOKEN_40));
    const unknown = await get(server, '/v1/domain/never-indexed-domain.com', bearer(TOKEN_40));
    expect([hidden.status, hidden.body]).toEqual([404, unknown.body]);
    expect((await get(server, `/v1/domain/${only44}`, bearer(TOKEN_ALL))).status).toBe(200);

    // its /urls is 404, byte for byte the answer for a dataset that does not exist
    const urlsHidden = await get(server, '/v1/domain/bulk-3.org/datasets/2/urls', bearer(TOKEN_40));
    const urlsNone = await get(server, '/v1/domain/bulk-3.org/datasets/7/urls', bearer(TOKEN_40));
    expect([urlsHidden.status, urlsHidden.body]).toEqual([404, urlsNone.body]);
    expect((await get(server, '/v1/domain/bulk-3.org/datasets/2/urls', bearer(TOKEN_44_HASHED))).status).toBe(200);

    // /url keeps only visible captures; a URL seen only in a hidden dataset is 404
    const url44 = cap44.find((c) => !cap40.some((d) => d.url === c.url))!.url;
    expect((await get(server, `/v1/url?url=${encodeURIComponent(url44)}`, bearer(TOKEN_40))).status).toBe(404);
    const all = await get(server, `/v1/url?url=${encodeURIComponent(url44)}`, bearer(TOKEN_ALL));
    expect(all.body.captures.every((c: any) => c.dataset_id === 2)).toBe(true);
  });

  it('/v1/status shows a limited token the ingest of its datasets only (names, progress, sums)', async () => {
    const names = async (t: string) => ((await get(server, '/v1/status', bearer(t))).body.ingest.datasets as any[]).map((d) => d.name);
    expect(await names(TOKEN_ALL)).toEqual(CRAWLS);
    expect(await names(TOKEN_40)).toEqual(['CC-MAIN-2030-40']);
    expect(await names(TOKEN_44_HASHED)).toEqual([CRAWLS[1]]);
    const limited = await get(server, '/v1/status', bearer(TOKEN_40));
    expect([limited.body.ingest.recordsPublished, limited.body.ingest.blocksPlanned]).toEqual([100, 4]);
    expect(JSON.stringify(limited.body)).not.toContain(CRAWLS[1]);
  });
});

describe('page size', () => {
  it('defaults to 100 and caps at 1000', async () => {
    const captures = Array.from({ length: 1500 }, (_, i) => ({ ...cap40[0]!, url: `https://www.big.example.com/p/${i}` }));
    const { view } = buildMemoryView('big', DATASETS, captures);
    const server = await startApi({ source: new MemoryIndexSource(view), port: 0 });
    try {
      const d = await get(server, '/v1/domain/big.example.com/datasets/1/urls');
      expect([d.body.items.length, d.body.limit, d.body.next_offset, d.body.total]).toEqual([100, 100, 100, 1500]);
      const c = await get(server, '/v1/domain/big.example.com/datasets/1/urls?offset=200&limit=5000');
      expect([c.body.items.length, c.body.limit, c.body.next_offset]).toEqual([1000, 1000, 1200]);
      const last = await get(server, '/v1/domain/big.example.com/datasets/1/urls?offset=1200&limit=5000');
      expect([last.body.items.length, last.body.next_offset]).toEqual([300, null]);
      expect(new Set([...c.body.items, ...last.body.items].map((i: any) => i.url)).size).toBe(1300);
    } finally {
      await server.close();
    }
  });
});
