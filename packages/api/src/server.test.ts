import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { createLogger } from '@ccpipe/adapters';
import { canonicalizeUrl, type IndexView } from '@ccpipe/core';
import { API_ROUTES } from './metrics';
import { MemoryIndexSource, buildMemoryView } from './memory-index-source';
import { startApi, type ApiServer } from './server';
import { CRAWLS, DATASETS, cap40, cap44, canonicalSet, get, oracle, viewBoth, viewOld } from './test-corpus';

describe('API over cc-mirror-dev (two crawls, default filter)', () => {
  const source = new MemoryIndexSource(viewBoth);
  const registry = new Registry();
  let server: ApiServer;
  beforeAll(async () => {
    // the provider tells which version it was asked about: /v1/status must not mix two versions
    server = await startApi({ source, port: 0, registry, statusProvider: async ({ view }) => ({ of: view?.version ?? null, done: true }) });
  });
  afterAll(() => server.close());

  it('GET /v1/domain names an IDN domain in Unicode beside its punycode, and only an IDN one', async () => {
    const plain = await get(server, '/v1/domain/bulk-3.co.uk');
    expect(plain.body).not.toHaveProperty('domain_unicode');
    const [c] = cap40;
    const idn = buildMemoryView('v1', DATASETS, [{ ...c!, url: 'https://www.bücher.de/a' }]).view;
    const s2 = await startApi({ source: new MemoryIndexSource(idn), port: 0 });
    try {
      const r = await get(s2, `/v1/domain/${encodeURIComponent('BÜCHER.de')}`);
      expect([r.body.domain, r.body.domain_unicode]).toEqual(['xn--bcher-kva.de', 'bücher.de']);
    } finally {
      await s2.close();
    }
  });

  it('GET /v1/datasets/{id}/domains lists the largest domains of a dataset, most URLs first', async () => {
    const counts = Object.entries(oracle.crawls[CRAWLS[0]]!.domains).map(([domain, d]) => ({ domain, url_count: canonicalSet(d.urls).size }));
    counts.sort((a, b) => b.url_count - a.url_count || (a.domain < b.domain ? -1 : 1));
    const r = await get(server, '/v1/datasets/1/domains?limit=5');
    expect([r.status, r.body.limit, r.body.items]).toEqual([200, 5, counts.slice(0, 5)]);
    expect((await get(server, '/v1/datasets/1/domains')).body.items).toHaveLength(Math.min(100, counts.length));
    expect((await get(server, '/v1/datasets/1/domains?limit=0')).body.error).toEqual({ code: 'CCP_ERR_API_BAD_REQUEST', message: expect.any(String), detail: { param: 'limit' } });
    expect((await get(server, '/v1/datasets/9/domains')).status).toBe(404);
  });

  it('GET /v1/domain gives every oracle domain with its datasets and exact URL counts', async () => {
    const domains = new Set(CRAWLS.flatMap((c) => Object.keys(oracle.crawls[c]!.domains)));
    expect(domains.size).toBeGreaterThan(100);
    for (const d of domains) {
      const expected = CRAWLS.map((c, i) => ({ id: i + 1, name: c, urls: oracle.crawls[c]!.domains[d]?.urls })).filter((x) => x.urls);
      const r = await get(server, `/v1/domain/${encodeURIComponent(d)}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('x-index-version')).toBe('v2');
      expect(r.body.domain).toBe(d);
      expect(r.body.version).toBe('v2');
      expect(r.body.domain64).toMatch(/^[0-9a-f]{2}:[0-9a-f]{6}:00:000000$/);
      expect(r.body.datasets).toMatchObject(expected.map((x) => ({ dataset_id: x.id, name: x.name, url_count: canonicalSet(x.urls as string[]).size })));
      for (const d of r.body.datasets) expect(d.status_classes['2xx'] + d.status_classes['3xx'] + d.status_classes['4xx'] + d.status_classes['5xx']).toBe(d.url_count);
    }
  });

  it('normalizes any host to its registered domain', async () => {
    for (const host of ['WWW.Bulk-3.CO.UK', 'www.bulk-3.co.uk.', 'bulk-3.co.uk:8080', 'bulk-3.co.uk:65535', 'www.bulk-3.co.uk.:443', 'a.b.bulk-3.co.uk', 'Bulk-3.Co.Uk', 'www。bulk-3．co．uk']) {
      const r = await get(server, `/v1/domain/${encodeURIComponent(host)}`);
      expect([r.status, r.body.domain]).toEqual([200, 'bulk-3.co.uk']);
    }
  });

  it('answers 400 for what is not a host with a registered domain, 404 for an unknown one', async () => {
    // a URL, a path, a query, credentials, a port that is not a number up to 65535, an empty label or a code point
    // WHATWG forbids in hosts is not a host
    const notHosts = ['bulk-3.co.uk:65536', 'bulk-3.co.uk:99999', '%5Bfe80%3A%3A1%5D:70000', 'bulk%7C3.co.uk', 'bulk%3C3.co.uk', 'bulk-3%5E.co.uk', 'bulk-3%2525.co.uk', 'bulk%013.co.uk', 'bulk-3.co.uk..', 'bulk-3.co.uk%E3%80%82%E3%80%82', 'bulk-3.co.uk%EF%BC%8E%EF%BC%8E%3A80', 'bulk-3.co.uk%3Aabc', 'bulk-3.co.uk%3Fx', 'bulk-3.co.uk%2F', 'bulk-3.co.uk%23x', 'u%40bulk-3.co.uk', 'http%3A%2F%2Fbulk-3.co.uk%2F'];
    for (const bad of ['co.uk', 'com', 'a%20b', '%ZZ', 'exa..com', 'localhost', '-', ...notHosts]) {
      const r = await get(server, `/v1/domain/${bad}`);
      expect([bad, r.status, r.body.error.code]).toEqual([bad, 400, 'CCP_ERR_API_BAD_DOMAIN']);
    }
    const long = await get(server, `/v1/domain/${'a'.repeat(400)}.com`);
    expect(long.status).toBe(400);
    for (const unknown of ['no-such-domain-in-the-corpus.com', 'b%C3%BCcher.de', '10.1.2.3', '%5B2001%3Adb8%3A%3A1%5D%3A8080', '2001%3Adb8%3A%3A1']) {
      const r = await get(server, `/v1/domain/${unknown}`);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: { code: 'CCP_ERR_API_DOMAIN_NOT_FOUND', message: expect.any(String) } });
      expect(JSON.stringify(r.body)).not.toContain('no-such-domain');
    }
  });

  it('pages through a domain: every URL exactly once, stable order, next_offset null at the end', async () => {
    for (const [crawl, id] of [[CRAWLS[0], 1], [CRAWLS[1], 2]] as const) {
      const want = canonicalSet(oracle.crawls[crawl]!.domains['bulk-3.org']!.urls);
      const pass = async (limit: number): Promise<string[]> => {
        const seen: string[] = [];
        let offset: number | null = 0;
        while (offset !== null) {
          const r = await get(server, `/v1/domain/www.bulk-3.org/datasets/${id}/urls?offset=${offset}&limit=${limit}`);
          expect(r.status).toBe(200);
          expect(r.body).toMatchObject({ domain: 'bulk-3.org', dataset_id: id, total: want.size });
          expect(r.body.items.length).toBe(Math.min(limit, want.size - offset));
          for (const it of r.body.items) {
            expect(it).toEqual({ url_id: expect.stringMatching(/^[0-9a-f]{16}$/), url: expect.any(String), ts: expect.stringMatching(/^2030-/), status: 200, title: null });
            seen.push(it.url);
          }
          offset = r.body.next_offset;
        }
        return seen;
      };
      const a = await pass(37);
      expect(a.length).toBe(want.size);
      expect(new Set(a)).toEqual(want);
      expect(await pass(100)).toEqual(a); // same order whatever the page size
    }
    const past = await get(server, '/v1/domain/bulk-3.org/datasets/1/urls?offset=100000');
    expect([past.status, past.body.items, past.body.next_offset]).toEqual([200, [], null]);
  });

  it('rejects bad paging parameters and a dataset the domain is not in', async () => {
    for (const q of ['limit=0', 'limit=000', 'limit=abc', 'limit=-5', 'limit=1e3', 'offset=-1', 'offset=1.5', 'limit=', 'offset=1e3']) {
      const r = await get(server, `/v1/domain/bulk-3.org/datasets/1/urls?${q}`);
      expect([q, r.status, r.body.error?.code]).toEqual([q, q === 'limit=' ? 200 : 400, q === 'limit=' ? undefined : 'CCP_ERR_API_BAD_REQUEST']);
    }
    // any positive limit is served as at most 1000, however many digits it has
    for (const limit of ['1001', '99999999999999999', '0001000', '1'.repeat(40), '9'.repeat(200)]) {
      const r = await get(server, `/v1/domain/bulk-3.org/datasets/1/urls?limit=${limit}`);
      expect([limit, r.status, r.body.limit]).toEqual([limit, 200, 1000]);
    }
    expect((await get(server, '/v1/domain/bulk-3.org/datasets/x/urls')).status).toBe(400);
    const missing = await get(server, '/v1/domain/bulk-3.org/datasets/9/urls');
    expect([missing.status, missing.body.error.code]).toEqual([404, 'CCP_ERR_API_DATASET_NOT_FOUND']);
  });

  it('GET /v1/url gives the captures of one URL across datasets, whatever its spelling', async () => {
    const both = cap40.find((c) => cap44.some((d) => canonicalizeUrl(d.url).url === canonicalizeUrl(c.url).url) && !c.url.includes('bulk-3'));
    expect(both).toBeDefined();
    const u = new URL(both!.url);
    const spelled = `${u.protocol}//${u.hostname.toUpperCase()}${u.pathname}${u.search}#frag`;
    const r = await get(server, `/v1/url?url=${encodeURIComponent(spelled)}`);
    expect(r.status).toBe(200);
    const canonical = canonicalizeUrl(both!.url).url;
    const cdx = [...cap40, ...cap44].filter((c) => canonicalizeUrl(c.url).url === canonical);
    expect(r.body.url).toBe(canonical);
    expect(r.body.url_id).toMatch(/^[0-9a-f]{16}$/);
    expect(r.body.captures.map((c: any) => [c.dataset_id, c.dataset, c.warc])).toEqual(
      cdx.sort((a, b) => a.datasetId - b.datasetId || (a.ts! < b.ts! ? -1 : 1)).map((c) => [c.datasetId, CRAWLS[c.datasetId - 1], c.warc]),
    );
    expect(r.body.captures[0]).toMatchObject({ status: 200, text_length: null, ts: expect.stringMatching(/^2030-/) });

    expect((await get(server, `/v1/url?url=${encodeURIComponent('https://bulk-3.org/never-captured')}`)).status).toBe(404);
    for (const bad of ['not%20a%20url', encodeURIComponent('ftp://bulk-3.org/x'), '']) {
      const b = await get(server, `/v1/url?url=${bad}`);
      expect([b.status, b.body.error.code]).toEqual([400, bad === '' ? 'CCP_ERR_API_BAD_REQUEST' : 'CCP_ERR_API_BAD_URL']);
    }
  });

  it('GET /v1/datasets lists both crawls with exact counts', async () => {
    const r = await get(server, '/v1/datasets');
    expect(r.status).toBe(200);
    expect(r.body.datasets).toEqual(CRAWLS.map((c, i) => {
      const doms = Object.values(oracle.crawls[c]!.domains);
      return {
        dataset_id: i + 1, name: c, crawl: c, kind: 'crawl', source: [c], url_count: doms.reduce((n, d) => n + canonicalSet(d.urls).size, 0), domain_count: doms.length,
        // the in-memory index has no ingest totals
        rows: null, rejects: null, updated_at: null,
      };
    }));
  });

  it('GET /v1/status, /healthz, unknown routes and methods', async () => {
    expect((await get(server, '/v1/status')).body).toEqual({ version: 'v2', ingest: { of: 'v2', done: true } });
    expect(await get(server, '/healthz')).toMatchObject({ status: 200, body: 'ok\n' });
    for (const p of ['/index.html', '/v1', '/v1/domain/', '/v1/domain/bulk-3.org/datasets/1', '/v2/datasets']) {
      const r = await get(server, p);
      expect([p, r.status, r.body.error.code]).toEqual([p, 404, 'CCP_ERR_API_NOT_FOUND']);
    }
    const post = await fetch(`${server.url}/v1/datasets`, { method: 'POST', body: '{}' });
    expect([post.status, post.headers.get('allow'), ((await post.json()) as any).error.code]).toEqual([405, 'GET, HEAD', 'CCP_ERR_API_METHOD']);
  });

  it('labels metrics by route template and status class only (no domains, no paths)', async () => {
    for (const d of ['metrics-probe-one.com', 'metrics-probe-two.org', 'co.uk']) await get(server, `/v1/domain/${d}`);
    await get(server, '/some/raw/path-probe');
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const routes = new Set([...text.matchAll(/ccpipe_api_request_duration_seconds_count\{route="([^"]*)",status_class="([^"]*)"\}/g)].map((m) => `${m[1]} ${m[2]}`));
    expect(routes.has('/v1/domain/:domain 4xx')).toBe(true);
    expect(routes.has('/v1/domain/:domain 2xx')).toBe(true);
    expect(routes.has('unmatched 4xx')).toBe(true);
    for (const r of routes) {
      const [route, cls] = r.split(' ');
      expect(API_ROUTES).toContain(route);
      expect(cls).toMatch(/^[2-5]xx$/);
    }
    expect(text).not.toMatch(/probe|bulk-3|co\.uk/);
  });
});

describe('static hook and HEAD', () => {
  it('hands unmatched paths to the static handler (explorer page) and answers HEAD without a body', async () => {
    const registry = new Registry();
    const server = await startApi({
      source: new MemoryIndexSource(viewOld),
      port: 0,
      registry,
      staticHandler: (_req, res, path) => {
        if (path !== '/') return false;
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>explorer</title>');
        return true;
      },
    });
    try {
      expect(await get(server, '/')).toMatchObject({ status: 200, body: '<!doctype html><title>explorer</title>' });
      expect((await get(server, '/app.js')).status).toBe(404);
      const head = await fetch(`${server.url}/v1/domain/bulk-3.org`, { method: 'HEAD' });
      expect([head.status, head.headers.get('x-index-version'), Number(head.headers.get('content-length')) > 0, await head.text()]).toEqual([200, 'v1', true, '']);
      expect(await registry.metrics()).toContain('ccpipe_api_request_duration_seconds_count{route="static",status_class="2xx"} 1');
      // a second server on the same registry (restart in one process) shares the histogram
      const again = await startApi({ source: new MemoryIndexSource(viewOld), port: 0, registry });
      await get(again, '/healthz');
      await again.close();
      expect(await registry.metrics()).toContain('ccpipe_api_request_duration_seconds_count{route="/healthz",status_class="2xx"} 1');
    } finally {
      await server.close();
    }
  });
});

describe('failures', () => {
  it('answers 500 CCP_ERR_API_INTERNAL for a failing view or static handler, and logs the route, never the path', async () => {
    const lines: string[] = [];
    const destination = new Writable({ write: (chunk, _enc, cb) => void (lines.push(String(chunk)), cb()) });
    const broken: IndexView = {
      version: 'v9', domain: (d) => viewOld.domain(d), datasets: () => viewOld.datasets(), captures: async () => [],
      pages: async () => ({ items: [], total: 0, next: null }),
      urls: async () => {
        throw new Error('disk on fire');
      },
    };
    const server = await startApi({
      source: new MemoryIndexSource(broken), port: 0, logger: createLogger({ service: 'api', level: 'info', destination }),
      staticHandler: () => {
        throw new Error('no assets');
      },
    });
    try {
      const r = await get(server, '/v1/domain/bulk-3.org/datasets/1/urls?limit=7');
      expect([r.status, r.body.error.code, r.headers.get('x-index-version')]).toEqual([500, 'CCP_ERR_API_INTERNAL', 'v9']);
      // an unknown parameter is the caller's mistake: 400 naming it, not logged
      const u = await get(server, '/v1/domain/bulk-3.org/datasets/1/urls?secret-probe=1');
      expect([u.status, u.body.error.code, u.body.error.detail]).toEqual([400, 'CCP_ERR_API_BAD_REQUEST', { param: 'secret-probe' }]);
      const s = await get(server, '/explorer/secret-probe.js');
      expect([s.status, s.body.error.code]).toEqual([500, 'CCP_ERR_API_INTERNAL']);
      await get(server, '/v1/domain/secret-probe.com');
      await new Promise((res) => setTimeout(res, 50));
      const logged = lines.join('');
      expect(logged).toContain('"route":"/v1/domain/:domain/datasets/:dataset_id/urls"');
      expect(logged).toContain('disk on fire');
      expect(logged).not.toContain('secret-probe');
    } finally {
      await server.close();
    }
  });
});

describe('before the first version and at the HTTP parser', () => {
  it('answers 503 CCP_ERR_API_NO_INDEX without logging it as a failure, and an oversized request line as a JSON 431', async () => {
    const lines: string[] = [];
    const destination = new Writable({ write: (chunk, _enc, cb) => void (lines.push(String(chunk)), cb()) });
    const server = await startApi({ source: new MemoryIndexSource(null), port: 0, logger: createLogger({ service: 'api', level: 'info', destination }) });
    try {
      const r = await get(server, '/v1/domain/bulk-3.org');
      expect([r.status, r.body.error.code]).toEqual([503, 'CCP_ERR_API_NO_INDEX']);
      const big = await fetch(`http://127.0.0.1:${server.port}/v1/domain/${'a'.repeat(20_000)}.com`);
      expect([big.status, big.headers.get('content-type'), await big.json()]).toEqual([431, 'application/json; charset=utf-8', { error: { code: 'CCP_ERR_API_TOO_LARGE', message: expect.any(String) } }]);
      // the server still answers after it
      expect((await get(server, '/healthz')).status).toBe(200);
      await new Promise((res) => setTimeout(res, 50));
      expect(lines.join('')).not.toContain('request failed');
    } finally {
      await server.close();
    }
  });
});

describe('version pinning', () => {
  it('answers a slow request from the version it started with while the manifest flips', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let entered: () => void = () => undefined;
    const inUrls = new Promise<void>((r) => (entered = r));
    // the old view, with a urls() that waits until the flip has happened
    const slowOld: IndexView = {
      version: viewOld.version,
      domain: (d) => viewOld.domain(d),
      datasets: () => viewOld.datasets(),
      captures: (u) => viewOld.captures(u),
      pages: (d, q) => viewOld.pages(d, q),
      urls: async (...a) => {
        entered();
        await gate;
        return viewOld.urls(...a);
      },
    };
    const source = new MemoryIndexSource(slowOld);
    const server = await startApi({ source, port: 0 });
    try {
      const pending = get(server, '/v1/domain/bulk-3.org/datasets/1/urls?limit=1000');
      await inUrls;
      // the flip, mid-request, to a version whose dataset 1 holds half the captures
      const viewNew = buildMemoryView('v3', DATASETS, cap40.filter((_, i) => i % 2 === 0)).view;
      source.set(viewNew);
      const after = await get(server, '/v1/domain/bulk-3.org');
      expect(after.headers.get('x-index-version')).toBe('v3');
      const newTotal = (await viewNew.urls('bulk-3.org', 1, 0, 1)).total;
      expect(after.body.datasets[0].url_count).toBe(newTotal);
      release();
      const r = await pending;
      expect(r.headers.get('x-index-version')).toBe('v1');
      const oldItems = (await viewOld.urls('bulk-3.org', 1, 0, 1000)).items;
      expect(r.body.items.map((i: any) => i.url)).toEqual(oldItems.map((i) => i.url));
      expect(r.body.total).toBe(oldItems.length);
      expect(newTotal).toBeLessThan(oldItems.length); // so a response mixing in v3 would have shown
    } finally {
      release();
      await server.close();
    }
  });

  it('pages through a pinned version (X-Index-Version request header) across a flip; a version no longer kept is 410', async () => {
    const source = new MemoryIndexSource(viewOld, 2);
    const server = await startApi({ source, port: 0, statusProvider: async ({ view }) => ({ of: view?.version ?? null }) });
    try {
      const first = await get(server, '/v1/domain/bulk-3.org/datasets/1/urls?limit=5');
      const pin = first.headers.get('x-index-version')!;
      expect(pin).toBe('v1');
      const seen: string[] = first.body.items.map((i: any) => i.url);
      source.set(buildMemoryView('v3', DATASETS, cap40.filter((_, i) => i % 2 === 0)).view); // the flip, mid-walk
      let offset: number | null = first.body.next_offset;
      while (offset !== null) {
        const r = await get(server, `/v1/domain/bulk-3.org/datasets/1/urls?limit=5&offset=${offset}`, { 'x-index-version': pin });
        expect([r.status, r.headers.get('x-index-version'), r.body.total]).toEqual([200, 'v1', first.body.total]);
        seen.push(...r.body.items.map((i: any) => i.url));
        offset = r.body.next_offset;
      }
      const all = (await viewOld.urls('bulk-3.org', 1, 0, 10_000)).items.map((i) => i.url);
      expect(seen).toEqual(all); // exactly the old version's URLs, in its order
      // unpinned requests see the new version
      const now = await get(server, '/v1/domain/bulk-3.org/datasets/1/urls?limit=5');
      expect([now.headers.get('x-index-version'), now.body.total < first.body.total]).toEqual(['v3', true]);
      // /v1/status answers from one version too: the pinned one, its ingest progress included
      expect((await get(server, '/v1/status', { 'x-index-version': pin })).body).toEqual({ version: 'v1', ingest: { of: 'v1' } });
      expect((await get(server, '/v1/status')).body).toEqual({ version: 'v3', ingest: { of: 'v3' } });
      // once v1 is no longer kept: 410 with a code, not silently another version
      source.set(buildMemoryView('v4', DATASETS, cap40).view);
      const gone = await get(server, '/v1/domain/bulk-3.org/datasets/1/urls?limit=5', { 'x-index-version': pin });
      expect([gone.status, gone.body.error.code, gone.headers.get('x-index-version')]).toEqual([410, 'CCP_ERR_API_VERSION_GONE', null]);
      const bad = await get(server, '/v1/domain/bulk-3.org', { 'x-index-version': 'v1/../x' });
      expect([bad.status, bad.body.error.code]).toEqual([400, 'CCP_ERR_API_BAD_REQUEST']);
    } finally {
      await server.close();
    }
  });

  it('/v1/status names a newer version the source could not load, beside the one it serves', async () => {
    const failure = { version: 'v3', code: 'CCP_ERR_INDEX_CRC', at: '2030-01-01T00:00:00.000Z', retryAt: '2030-01-01T00:00:10.000Z' };
    const source = Object.assign(new MemoryIndexSource(viewOld), { loadFailure: () => failure });
    const server = await startApi({ source, port: 0 });
    try {
      expect((await get(server, '/v1/status')).body).toEqual({
        version: 'v1', ingest: null,
        load_failure: { version: 'v3', code: 'CCP_ERR_INDEX_CRC', at: '2030-01-01T00:00:00.000Z', retry_at: '2030-01-01T00:00:10.000Z' },
      });
    } finally {
      await server.close();
    }
  });

  it('answers 503 before the first version and /v1/status with version null', async () => {
    const source = new MemoryIndexSource(null);
    const server = await startApi({ source, port: 0 });
    try {
      const r = await get(server, '/v1/domain/bulk-3.org');
      expect([r.status, r.body.error.code, r.headers.get('x-index-version')]).toEqual([503, 'CCP_ERR_API_NO_INDEX', null]);
      expect((await get(server, '/v1/status')).body).toEqual({ version: null, ingest: null });
      source.set(viewOld);
      expect((await get(server, '/v1/domain/bulk-3.org')).status).toBe(200);
    } finally {
      await server.close();
      await server.close();
    }
  });
});
