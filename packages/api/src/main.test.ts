import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { apiMain } from './main';
import { MemoryIndexSource } from './memory-index-source';
import { viewOld } from './test-corpus';

describe('apiMain', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccpipe-api-main-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('serves the source with the ACL file, then closes server and source and resolves 0', async () => {
    const acl = join(dir, 'acl.json');
    await writeFile(acl, JSON.stringify({ v: 1, tokens: [{ name: 'ops', token: 'a-long-enough-token-123', datasets: '*' }] }));
    const source = new MemoryIndexSource(viewOld);
    let stop: () => void = () => undefined;
    let listening: (url: string) => void = () => undefined;
    const url = new Promise<string>((r) => (listening = r));
    const exit = apiMain({ logLevel: 'silent', data: dir }, {}, { openSource: async () => source, port: 0, host: '127.0.0.1', aclFile: acl, stop: new Promise<void>((r) => (stop = r)), onListening: listening });
    const base = await url;
    expect((await fetch(`${base}/v1/domain/bulk-3.org`)).status).toBe(401);
    const ok = await fetch(`${base}/v1/domain/bulk-3.org`, { headers: { authorization: 'Bearer a-long-enough-token-123' } });
    expect([ok.status, ok.headers.get('x-index-version')]).toEqual([200, 'v1']);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('ccpipe_api_request_duration_seconds_count{route="/v1/domain/:domain",status_class="2xx"} 1');
    expect(metrics).toContain('\nccpipe_api_index_version 1\n'); // the version served (v1)
    stop();
    expect(await exit).toBe(0);
    expect(await source.current()).toBeNull(); // closed
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it("exposes the lake reader's counters on /metrics, read at each scrape", async () => {
    const stats = { bytes: 4096, entries: 2, hits: 5, misses: 3, evictions: 1, locatorFallbacks: 0, damagedChunks: 0 };
    const source = Object.assign(new MemoryIndexSource(viewOld), { cacheStats: () => stats });
    let stop: () => void = () => undefined;
    let listening: (url: string) => void = () => undefined;
    const url = new Promise<string>((r) => (listening = r));
    const exit = apiMain({ logLevel: 'silent', data: dir }, {}, { openSource: async () => source, port: 0, host: '127.0.0.1', stop: new Promise<void>((r) => (stop = r)), onListening: listening });
    const base = await url;
    let text = await (await fetch(`${base}/metrics`)).text();
    for (const line of ['ccpipe_api_lake_cache_bytes 4096', 'ccpipe_api_lake_cache_hits_total 5', 'ccpipe_api_lake_cache_misses_total 3', 'ccpipe_api_lake_cache_evictions_total 1', 'ccpipe_api_lake_locator_fallbacks_total 0', 'ccpipe_api_lake_damaged_chunks_total 0']) {
      expect(text).toContain(`\n${line}\n`);
    }
    stats.hits = 9;
    stats.locatorFallbacks = 2;
    stats.damagedChunks = 1;
    text = await (await fetch(`${base}/metrics`)).text();
    expect(text).toContain('\nccpipe_api_lake_cache_hits_total 9\n');
    expect(text).toContain('\nccpipe_api_lake_locator_fallbacks_total 2\n');
    expect(text).toContain('\nccpipe_api_lake_damaged_chunks_total 1\n');
    stop();
    expect(await exit).toBe(0);
  });

  it('a stop while the first version still loads ends it: the source is closed, nothing listens, 0', async () => {
    let closed = false;
    const source = {
      current: () => new Promise<never>(() => undefined), // a load that takes long (a whole index copied from S3)
      at: async () => null,
      close: async () => {
        closed = true;
      },
    };
    let stop: () => void = () => undefined;
    let listened = false;
    const exit = apiMain({ logLevel: 'silent', data: dir }, {}, {
      openSource: async () => source, port: 0, host: '127.0.0.1', stop: new Promise<void>((r) => (stop = r)), onListening: () => (listened = true),
    });
    await new Promise((r) => setTimeout(r, 50));
    stop();
    expect(await exit).toBe(0);
    expect([closed, listened]).toEqual([true, false]);
  });

  it('resolves 1 when the ACL file is bad or the source cannot be opened', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{"v":1,"tokens":[]}');
    const openSource = async () => new MemoryIndexSource(viewOld);
    expect(await apiMain({ logLevel: 'silent', data: dir }, {}, { openSource, port: 0, aclFile: bad })).toBe(1);
    expect(await apiMain({ logLevel: 'silent', data: dir }, {}, { openSource, port: 0, aclFile: join(dir, 'missing.json') })).toBe(1);
    expect(await apiMain({ logLevel: 'silent', data: dir }, {}, { openSource: () => Promise.reject(new Error('no index')), port: 0 })).toBe(1);
  });
});
