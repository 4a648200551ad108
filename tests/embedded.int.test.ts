/**
 * `ccpipe run` end to end: the built CLI as a separate process running batcher, worker, merger and API in one
 * process over the in-process queue, against a real mirror server over ../shared/corpus/cc-mirror-dev (both crawls)
 * and over the bundled sample crawl. Every (domain, crawl) of oracle.json is checked through the HTTP API.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalizeUrl } from '@ccpipe/core';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { S3ObjectStore } from '@ccpipe/adapters';
import { S3RVER_CREDENTIALS, startS3TestServer } from '@ccpipe/adapters/store/s3-test-server';
import { CC_MIRROR_DEV, DEV_CRAWLS, loadOracle } from './support/corpus';
import { killAll, logLine, markersIn, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';

const oracle = loadOracle();
const procs: CcpipeProcess[] = [];
const dirs: string[] = [];
let mirror: MirrorServer | null = null;

/** Starts `ccpipe run ARGS…` (the built binary). */
function startRun(args: string[], env: Record<string, string> = {}): CcpipeProcess {
  const p = spawnCcpipe(['run', ...args], env);
  procs.push(p);
  return p;
}

async function newDataDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'ccpipe-run-'));
  dirs.push(d);
  return d;
}

/** Waits for the printed `API listening on URL` line. */
async function apiUrlOf(p: CcpipeProcess, timeoutMs: number): Promise<string> {
  return waitFor<string>(
    'the API address',
    () => {
      if (p.child.exitCode !== null) throw new Error(`ccpipe run exited ${p.child.exitCode}: ${p.text.join('').slice(-3000)}`);
      const line = p.text.find((l) => l.startsWith('API listening on '));
      return line === undefined ? '' : line.slice('API listening on '.length).trim();
    },
    timeoutMs,
  );
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Every URL of (domain, dataset), following next_offset with a small page size so paging is exercised. */
async function allUrls(api: string, domain: string, datasetId: number): Promise<{ urls: string[]; total: number }> {
  const urls: string[] = [];
  let offset: number | null = 0;
  let total = -1;
  while (offset !== null) {
    const { status, body } = await getJson(`${api}/v1/domain/${encodeURIComponent(domain)}/datasets/${datasetId}/urls?offset=${offset}&limit=7`);
    expect(status).toBe(200);
    total = body['total'] as number;
    urls.push(...(body['items'] as { url: string }[]).map((i) => i.url));
    offset = body['next_offset'] as number | null;
  }
  return { urls, total };
}

const canonical = (u: string): string => canonicalizeUrl(u).url;

beforeAll(async () => {
  mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
});

afterAll(async () => {
  await killAll(procs);
  await mirror?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('ccpipe run over cc-mirror-dev (both crawls)', () => {
  // one data dir for the describe: the re-run test runs over what the first one ingested (alone, it ingests first)
  let data = '';
  beforeAll(async () => {
    data = await newDataDir();
  });
  const args = (): string[] => ['--data', data, '--port', '0', '--base-url', mirror!.url, '--crawl', DEV_CRAWLS.join(','), '--extract-threads', '1', '--batch-size', '60'];

  it('serves, for every (domain, crawl) of the oracle, the same datasets, counts and URL set; stops cleanly on SIGTERM', async () => {
    const p = startRun(args());
    const api = await apiUrlOf(p, 600_000);

    const ds = (await getJson(`${api}/v1/datasets`)).body['datasets'] as { dataset_id: number; name: string }[];
    const idOf = new Map(ds.map((d) => [d.name, d.dataset_id]));
    expect([...idOf.keys()].sort()).toEqual([...DEV_CRAWLS]);

    // domain → crawl → canonical URL set, from the oracle.
    const want = new Map<string, Map<string, Set<string>>>();
    for (const crawl of DEV_CRAWLS) {
      for (const [domain, d] of Object.entries(oracle.crawls[crawl]!.domains)) {
        if (!want.has(domain)) want.set(domain, new Map());
        want.get(domain)!.set(crawl, new Set(d.urls.map(canonical)));
      }
    }
    for (const [domain, byCrawl] of want) {
      const { status, body } = await getJson(`${api}/v1/domain/${encodeURIComponent(domain)}`);
      expect({ domain, status }).toEqual({ domain, status: 200 });
      const got = body['datasets'] as { dataset_id: number; url_count: number }[];
      const expected = [...byCrawl].map(([crawl, urls]) => ({ dataset_id: idOf.get(crawl)!, url_count: urls.size })).sort((a, b) => a.dataset_id - b.dataset_id);
      expect({ domain, datasets: got.map((g) => ({ dataset_id: g.dataset_id, url_count: g.url_count })) }).toEqual({ domain, datasets: expected });
      for (const [crawl, urls] of byCrawl) {
        // The oracle's URL spellings are distinct after canonicalization too, so its counts are the API's.
        expect({ domain, crawl, n: urls.size }).toEqual({ domain, crawl, n: oracle.crawls[crawl]!.domains[domain]!.count });
        const page = await allUrls(api, domain, idOf.get(crawl)!);
        expect(page.urls.length).toBe(page.total);
        expect(new Set(page.urls).size).toBe(page.urls.length);
        expect({ domain, crawl, urls: new Set(page.urls.map(canonical)) }).toEqual({ domain, crawl, urls });
      }
    }
    expect(want.size).toBeGreaterThan(150);

    p.child.kill('SIGTERM');
    expect((await p.exited).code).toBe(0);
  }, 900_000);

  it('a re-run over the same data directory skips both crawls and merges again; other settings are refused', async () => {
    const p = startRun(args());
    const api = await apiUrlOf(p, 300_000);
    expect(p.logs.filter((l) => l['msg'] === 'crawl already ingested').map((l) => l['crawl']).sort()).toEqual([...DEV_CRAWLS]);
    expect(logLine(p, 'merged')).toMatchObject({ published: false });
    // its status gives the datasets' totals from their checkpoints (this process read nothing), not zeros
    const ingest = (await getJson(`${api}/v1/status`)).body['ingest'] as Record<string, unknown>;
    const blocks = DEV_CRAWLS.reduce((n, c) => n + oracle.crawls[c]!.blocks, 0);
    const kept = DEV_CRAWLS.reduce((n, c) => n + oracle.crawls[c]!.kept_captures, 0);
    expect(ingest).toMatchObject({ done: true, blocksPlanned: blocks, blocksRead: blocks, recordsPublished: kept, thisRun: { records: 0, batchesPublished: 0, rows: 0 } });
    expect(ingest['batchesMerged']).toBe(ingest['batchesPublished']);
    p.child.kill('SIGTERM');
    expect((await p.exited).code).toBe(0);
    // A different batch size would put other records under batch ids already done: refused, nothing changed.
    const q = startRun([...args().slice(0, -2), '--batch-size', '61', '--exit-after-merge']);
    expect((await q.exited).code).toBe(1);
    expect(q.logs.find((l) => l['msg'] === 'run failed')?.['err']).toMatchObject({ code: 'CCP_ERR_CHECKPOINT_MISMATCH' });
  }, 300_000);
});

describe('ccpipe run --max-blocks', () => {
  it('samples the first N blocks of the crawl: plans, reads and indexes those only', async () => {
    const crawl = DEV_CRAWLS[0];
    const p = startRun(['--data', await newDataDir(), '--port', '0', '--base-url', mirror!.url, '--crawl', crawl, '--max-blocks', '3', '--extract-threads', '1', '--exit-after-merge']);
    expect((await p.exited).code).toBe(0);
    expect(logLine(p, 'plan ready')).toMatchObject({ crawl, planned: 3, resumeAt: 0 });
    const merged = logLine(p, 'merged')!;
    // three blocks of ≈ 50 CDX lines: some captures, far fewer than the crawl's
    expect(merged['rowsIn']).toBeGreaterThan(0);
    expect(merged['rowsIn']).toBeLessThan(oracle.crawls[crawl]!.kept_captures / 4);
  }, 300_000);
});

describe('ccpipe run --metrics-port', () => {
  it("serves the batcher's and the worker's metrics from the start, and on the API's /metrics once it is up", async () => {
    const crawl = DEV_CRAWLS[0];
    const p = startRun(['--data', await newDataDir(), '--port', '0', '--metrics-port', '0', '--metrics-host', '127.0.0.1', '--base-url', mirror!.url, '--crawl', crawl, '--max-blocks', '3', '--extract-threads', '1']);
    const api = await apiUrlOf(p, 240_000);
    const listening = p.logs.findIndex((l) => l['msg'] === 'metrics listening');
    expect(listening).toBeGreaterThanOrEqual(0);
    expect(listening).toBeLessThan(p.logs.findIndex((l) => l['msg'] === 'plan ready')); // before anything is read
    const done = logLine(p, 'ingest done')!;
    for (const url of [`http://127.0.0.1:${p.logs[listening]!['port'] as number}/metrics`, `${api}/metrics`]) {
      const metrics = await (await fetch(url)).text();
      expect(metrics).toMatch(/^ccpipe_batcher_blocks_planned 3$/m);
      expect(metrics).toMatch(/^ccpipe_batcher_checkpoint_blocks 3$/m);
      expect(metrics).toMatch(new RegExp(`^ccpipe_batcher_cdx_records_kept_total ${done['kept'] as number}$`, 'm'));
      expect(metrics).toMatch(new RegExp(`^ccpipe_worker_batches_done_total ${done['batchesDone'] as number}$`, 'm'));
      expect(metrics).toMatch(new RegExp(`^ccpipe_worker_parquet_rows_written_total ${done['rows'] as number}$`, 'm'));
      expect(metrics).toMatch(/^ccpipe_batcher_http_requests_total [1-9]\d*$/m); // CDX blocks, apart from …
      expect(metrics).toMatch(/^ccpipe_worker_http_requests_total [1-9]\d*$/m); // … the WARC records
      expect(metrics).toMatch(/^process_resident_memory_bytes \d+/m);
    }
    p.child.kill('SIGTERM');
    expect((await p.exited).code).toBe(0);
  }, 300_000);
});

describe('ccpipe run stopped after its ingest', () => {
  it('a signal during the merge exits 130 without serving', async () => {
    const p = startRun(['--data', await newDataDir(), '--port', '0', '--base-url', mirror!.url, '--crawl', DEV_CRAWLS[0], '--max-blocks', '3', '--extract-threads', '1']);
    let seen = '';
    p.child.stdout!.on('data', (chunk: string) => {
      seen += chunk;
      if (seen.includes('"msg":"ingest done"')) p.child.kill('SIGINT');
    });
    expect((await p.exited).code).toBe(130);
    expect(p.text.some((l) => l.startsWith('API listening on '))).toBe(false);
  }, 300_000);
});

describe('ccpipe run with its port taken', () => {
  it('fails before it ingests anything, naming the port', async () => {
    const busy = createServer();
    const port = await new Promise<number>((resolve) => busy.listen(0, '127.0.0.1', () => resolve((busy.address() as AddressInfo).port)));
    try {
      const p = startRun(['--data', await newDataDir(), '--port', String(port), '--host', '127.0.0.1', '--base-url', mirror!.url, '--crawl', DEV_CRAWLS[0]]);
      expect((await p.exited).code).toBe(1);
      expect(p.logs.find((l) => l['msg'] === 'run failed')?.['err']).toMatchObject({ code: 'CCP_ERR_CONFIG', message: expect.stringContaining(String(port)) });
      expect(logLine(p, 'plan ready')).toBeUndefined();
    } finally {
      busy.close();
    }
  }, 120_000);
});

describe('ccpipe run interrupted', () => {
  it('SIGINT mid-ingest exits 130 keeping the checkpoint; the re-run resumes there and indexes every kept capture once', async () => {
    const crawl = DEV_CRAWLS[0];
    const data = await newDataDir();
    const args = ['--data', data, '--port', '0', '--base-url', mirror!.url, '--crawl', crawl, '--extract-threads', '1', '--batch-size', '40', '--exit-after-merge'];
    const first = startRun(args);
    await waitFor('a few batches done', async () => (await markersIn(data)).length >= 4, 300_000, 100);
    first.child.kill('SIGINT');
    expect((await first.exited).code).toBe(130);
    expect(logLine(first, 'merged')).toBeUndefined();

    const second = startRun(args);
    expect((await second.exited).code).toBe(0);
    expect(logLine(second, 'plan ready')!['resumeAt']).toBeGreaterThan(0);
    const want = oracle.crawls[crawl]!;
    // Every kept capture reached the index exactly once; distinct URLs and domains as the oracle counts them.
    const urls = Object.values(want.domains).reduce((n, d) => n + d.count, 0);
    expect(logLine(second, 'merged')).toMatchObject({ rowsIn: want.kept_captures, urls, domains: Object.keys(want.domains).length });
    // the checkpoint carried the first run's counts over: records published over both runs are the kept captures
    const cp = JSON.parse(await readFile(join(data, 'batcher', crawl, 'checkpoint.json'), 'utf8')) as { done: boolean; recordsPublished?: number };
    expect(cp).toMatchObject({ done: true, recordsPublished: want.kept_captures });
  }, 900_000);
});

describe('ccpipe run over the bundled sample crawl', () => {
  it('builds the sample mirror, ingests both sample crawls and answers the printed example queries', async () => {
    const data = await newDataDir();
    const p = startRun(['--data', data, '--port', '0', '--extract-threads', '1']);
    const api = await apiUrlOf(p, 600_000);
    expect(logLine(p, 'sample mirror ready')).toMatchObject({ built: true });
    const curls = p.text.filter((l) => l.trim().startsWith('curl -s ')).map((l) => l.trim().replace(/^curl -s /, '').replace(/^'|'$/g, ''));
    expect(curls.length).toBeGreaterThanOrEqual(4);
    for (const u of curls) expect({ u, status: (await fetch(u)).status }).toEqual({ u, status: 200 });

    const books = (await getJson(`${api}/v1/domain/maple-street-books.com`)).body['datasets'] as { dataset_id: number; url_count: number }[];
    expect(books).toHaveLength(2);
    // the API serves once the run has ingested and merged: its status says so
    const status = (await getJson(`${api}/v1/status`)).body;
    expect(status).toMatchObject({ version: 'v000001', ingest: { done: true, blocksPlanned: 15, blocksRead: 15, thisRun: { blocksRead: 15, batchesFailed: 0 } } });
    // its /metrics has the index metrics `ccpipe api` exports, not only request durations
    const metrics = await (await fetch(`${api}/metrics`)).text();
    expect(metrics).toMatch(/^ccpipe_api_index_version 1$/m);
    expect(metrics).toMatch(/^ccpipe_api_lake_cache_bytes \d+/m);
    // Private-section hosts and multi-level suffixes group under their ICANN registered domain; the IDN by punycode.
    for (const d of ['github.io', 'harbourside-gazette.co.uk', 'xn--bcherstube-am-see-22b.de', 'bücherstube-am-see.de']) {
      expect({ d, status: (await fetch(`${api}/v1/domain/${encodeURIComponent(d)}`)).status }).toEqual({ d, status: 200 });
    }
    // Only in the second crawl.
    const museum = (await getJson(`${api}/v1/domain/old-mill-museum.org.uk`)).body['datasets'] as unknown[];
    expect(museum).toHaveLength(1);
    p.child.kill('SIGINT');
    expect((await p.exited).code).toBe(0);
  }, 600_000);
});


describe('ccpipe run with the lake on S3 (s3rver on loopback)', () => {
  it('ingests, merges and serves from s3://bucket/prefix: oracle counts for every (domain, crawl), one domain paged whole', async () => {
    const s3 = await startS3TestServer();
    try {
      await s3.createBucket('ccpipe-run');
      const p = startRun(['--data', 's3://ccpipe-run/lake', '--port', '0', '--base-url', mirror!.url, '--crawl', DEV_CRAWLS.join(','), '--extract-threads', '1'], {
        CCPIPE_S3_ENDPOINT: s3.endpoint, AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      });
      const api = await apiUrlOf(p, 600_000);
      const ds = (await getJson(`${api}/v1/datasets`)).body['datasets'] as { dataset_id: number; name: string }[];
      const idOf = new Map(ds.map((d) => [d.name, d.dataset_id]));
      let checked = 0;
      for (const crawl of DEV_CRAWLS) {
        for (const [domain, d] of Object.entries(oracle.crawls[crawl]!.domains)) {
          const got = (await getJson(`${api}/v1/domain/${encodeURIComponent(domain)}`)).body['datasets'] as { dataset_id: number; url_count: number }[];
          expect({ domain, crawl, n: got.find((g) => g.dataset_id === idOf.get(crawl))?.url_count }).toEqual({ domain, crawl, n: d.count });
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(150);
      // The biggest domain of the first crawl, paged whole: its rows come from lake row groups read by ranged GETs.
      const [domain, d] = Object.entries(oracle.crawls[DEV_CRAWLS[0]]!.domains).sort((a, b) => b[1].count - a[1].count)[0]!;
      const page = await allUrls(api, domain, idOf.get(DEV_CRAWLS[0])!);
      expect(new Set(page.urls.map(canonical))).toEqual(new Set(d.urls.map(canonical)));
      p.child.kill('SIGTERM');
      expect((await p.exited).code).toBe(0);
      // Everything went to the bucket: the manifest names the version the run served.
      const store = new S3ObjectStore({ bucket: 'ccpipe-run', prefix: 'lake', endpoint: s3.endpoint, credentials: S3RVER_CREDENTIALS });
      const manifest = await store.get('index/manifest.json');
      expect(manifest).not.toBeNull();
      expect(JSON.parse(Buffer.from(manifest!).toString('utf8')).current).toBe(logLine(p, 'merged')?.['version']);
      await store.close();
    } finally {
      await s3.close();
    }
  }, 900_000);
});
