import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileFilter, loadConfig, registeredDomainOf, type CdxRecord } from '@ccpipe/core';
import { MemoryObjectStore } from '@ccpipe/adapters';
import { loadCheckpoint, runFingerprint, saveCheckpoint } from './checkpoint';
import { batcherMain, filterSpecOf } from './main';

/** The fingerprint batcherMain records for a dataset of CC-MAIN-2024-30 under `env`, batch size and plan left as default. */
const fingerprintOf = (env: Record<string, string>): string =>
  runFingerprint({ crawl: 'CC-MAIN-2024-30', filter: filterSpecOf(loadConfig(env)), batchSize: 500, targets: null, maxBlocks: null });

const NEW_RULES: Record<string, string> = {
  CCPIPE_FILTER_MIMES_DETECTED: 'text/html',
  CCPIPE_FILTER_URL_REGEX_EXCLUDE: '/tag/',
  CCPIPE_FILTER_DOMAINS_ALLOW: 'example.com',
  CCPIPE_FILTER_DOMAINS_DENY: 'spam.example',
};

describe('filterSpecOf: the filter rules of the config, as the dataset fingerprint records them', () => {
  it('leaves the fingerprint of a dataset begun before the detected-mime, exclusion and domain rules as it was', () => {
    // values computed by the batcher before these rules had flags: such datasets must resume, not be refused
    expect(fingerprintOf({})).toBe('8685f24a1e3a1dbd');
    expect(fingerprintOf({ CCPIPE_FILTER_MIMES: 'text/html', CCPIPE_FILTER_URL_REGEX: '^https://' })).toBe('d2841efad52a8cc2');
  });

  it.each(Object.entries(NEW_RULES))('makes %s part of the recorded settings: resuming a dataset with it changed is refused', async (env, value) => {
    const store = new MemoryObjectStore();
    const before = fingerprintOf({});
    await saveCheckpoint(store, {
      v: 1, crawl: 'CC-MAIN-2024-30', dataset: 'd', fingerprint: before, nextPlanIndex: 3, planLength: 10, batchesPublished: 4, done: false, updatedAt: '2030-01-01T00:00:00Z',
    });
    const after = fingerprintOf({ [env]: value });
    expect(after).not.toBe(before);
    await expect(loadCheckpoint(store, 'd', after)).rejects.toMatchObject({ code: 'CCP_ERR_CHECKPOINT_MISMATCH' });
    await expect(loadCheckpoint(store, 'd', after, { reset: true })).rejects.toMatchObject({ code: 'CCP_ERR_CHECKPOINT_MISMATCH' }); // it published batches
    expect(await loadCheckpoint(store, 'd', before)).toMatchObject({ nextPlanIndex: 3 });
  });

  it('does not depend on the order the domains are listed in', () => {
    expect(fingerprintOf({ CCPIPE_FILTER_DOMAINS_DENY: 'b.example,a.example' })).toBe(fingerprintOf({ CCPIPE_FILTER_DOMAINS_DENY: 'a.example, b.example' }));
  });

  it('compiles into a filter that applies each rule and names it as the drop reason', () => {
    const filter = compileFilter(filterSpecOf(loadConfig({ ...NEW_RULES, CCPIPE_FILTER_DOMAINS_ALLOW: 'example.com,spam.example' })), { registeredDomainOf });
    const rec = (url: string, mimeDetected = 'text/html'): CdxRecord => ({
      surt: '', timestamp: '20240101000000', url, mime: 'text/html', mimeDetected, status: '200', length: 1, offset: 0, filename: 'w.warc.gz', languages: ['eng'],
    });
    expect(filter(rec('https://www.example.com/a'))).toEqual({ keep: true });
    expect(filter(rec('https://www.example.com/a', 'application/pdf'))).toEqual({ keep: false, reason: 'mime_detected' });
    expect(filter(rec('https://www.example.com/tag/x'))).toEqual({ keep: false, reason: 'url_pattern' });
    expect(filter(rec('https://shop.spam.example/'))).toEqual({ keep: false, reason: 'domain_deny' });
    expect(filter(rec('https://other.example/'))).toEqual({ keep: false, reason: 'domain_allow' });
  });
});

/** A port free right now on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The batcher's lifecycle around its metrics. A crawl whose local cluster.idx is empty plans no block, so the run is
 * complete at once and needs no broker: what is left to see is how long /metrics outlives the run.
 */
describe('batcherMain metrics after the run', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'ccpipe-batcher-main-'));
    await mkdir(join(root, 'idx', 'CC-MAIN-2030-40'), { recursive: true });
    await writeFile(join(root, 'idx', 'CC-MAIN-2030-40', 'cluster.idx'), '');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  const run = (port: number, finalScrapeMs?: number): Promise<number> =>
    batcherMain(
      {
        crawl: 'CC-MAIN-2030-40', data: join(root, 'data'), clusterIdxDir: join(root, 'idx'), baseUrl: 'http://127.0.0.1:9',
        metricsHost: '127.0.0.1', metricsPort: port, logLevel: 'silent',
        ...(finalScrapeMs === undefined ? {} : { metricsFinalScrapeMs: finalScrapeMs }),
      },
      {},
    );
  const get = (port: number, path: string): Promise<Response | null> => fetch(`http://127.0.0.1:${port}${path}`).catch(() => null);

  it('keeps serving /metrics after the run until a scrape has read the final values, then exits 0', async () => {
    const port = await freePort();
    let code: number | undefined;
    const done = run(port, 30_000).then((c) => (code = c));
    // the run itself takes milliseconds; /metrics is still up well after it, and nothing has scraped yet
    await sleep(1_000);
    expect(code).toBeUndefined();
    expect((await get(port, '/healthz'))?.status).toBe(200);
    // one scrape of the final values ends the wait (a scrape racing the run's end is not taken as final: scrape on)
    const started = Date.now();
    const bodies: string[] = [];
    while (code === undefined && Date.now() - started < 10_000) {
      const res = await get(port, '/metrics');
      if (res) bodies.push(await res.text());
      await sleep(100);
    }
    expect(code).toBe(0);
    expect(bodies.at(-1)).toMatch(/^ccpipe_batcher_blocks_planned 0$/m);
    await done;
    expect(await get(port, '/healthz')).toBeNull();
  }, 20_000);

  it('exits after the timeout when nothing scrapes, and at once by default', async () => {
    const port = await freePort();
    let t = Date.now();
    expect(await run(port, 500)).toBe(0);
    expect(Date.now() - t).toBeGreaterThanOrEqual(450);
    expect(await get(port, '/healthz')).toBeNull();
    t = Date.now();
    expect(await run(port)).toBe(0);
    expect(Date.now() - t).toBeLessThan(450);
  }, 20_000);
});
