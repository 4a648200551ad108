/**
 * The whole pipeline as separate processes with the lake on an S3-compatible store: `ccpipe batcher` per crawl, two
 * `ccpipe worker`s over the real RabbitMQ, `ccpipe merge`, `ccpipe status` and `ccpipe api`, every one started with
 * `--data s3://bucket/prefix` against a real s3rver on loopback (credentials from AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY, endpoint from CCPIPE_S3_ENDPOINT), so nothing is shared through a local directory. The
 * HTTP API's answers are compared with oracle.json for every (domain, crawl).
 */
import { randomBytes } from 'node:crypto';
import { canonicalizeUrl, layout } from '@ccpipe/core';
import { AmqpConnection, S3ObjectStore, deleteTopology, topologyNames } from '@ccpipe/adapters';
import { S3RVER_CREDENTIALS, startS3TestServer, type S3TestServer } from '@ccpipe/adapters/store/s3-test-server';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { DEV_CRAWLS, CC_MIRROR_DEV, loadOracle } from './support/corpus';
import { killAll, logLine, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';

const oracle = loadOracle();
const prefix = `ccpipe-s3-${randomBytes(4).toString('hex')}`;
const BUCKET = 'ccpipe-lake';
const LAKE_PREFIX = `runs/${prefix}`;
const DATA = `s3://${BUCKET}/${LAKE_PREFIX}`;
const procs: CcpipeProcess[] = [];
let mirror: MirrorServer | undefined;
let s3: S3TestServer | undefined;
let store: S3ObjectStore | undefined;
let env: Record<string, string> = {};

beforeAll(async () => {
  s3 = await startS3TestServer();
  await s3.createBucket(BUCKET);
  store = new S3ObjectStore({ bucket: BUCKET, prefix: LAKE_PREFIX, endpoint: s3.endpoint, credentials: S3RVER_CREDENTIALS });
  env = { CCPIPE_S3_ENDPOINT: s3.endpoint, AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey, CCPIPE_S3_REGION: 'us-east-1' };
  mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
}, 60_000);

afterAll(async () => {
  await killAll(procs);
  const conn = new AmqpConnection({ url: 'amqp://guest:guest@127.0.0.1:5672', reconnect: { maxAttempts: 3 } });
  await conn.start();
  const ch = await conn.createChannel();
  await deleteTopology(ch, topologyNames(prefix)).catch(() => undefined);
  await ch.close().catch(() => undefined);
  await conn.close();
  await mirror?.close();
  await store?.close();
  await s3?.close();
});

const canon = (u: string): string => canonicalizeUrl(u).url;
const start = (args: string[]): CcpipeProcess => {
  const p = spawnCcpipe(args, env);
  procs.push(p);
  return p;
};

async function markersInBucket(): Promise<number> {
  let n = 0;
  for await (const o of store!.list(layout.batchesPrefix())) if (layout.isBatchMarker(o.key)) n++;
  return n;
}

async function getJson(url: string): Promise<{ status: number; version: string | null; body: any }> {
  const res = await fetch(url);
  return { status: res.status, version: res.headers.get('x-index-version'), body: await res.json() };
}

describe('batcher → RabbitMQ → 2 workers → merge → api, as separate processes, lake on S3', () => {
  it('answers every (domain, crawl) of the oracle with its datasets, exact counts and URL set', async () => {
    const common = ['--data', DATA, '--base-url', mirror!.url, '--queue-prefix', prefix, '--metrics-port', '0'];
    let batches = 0;
    for (const crawl of DEV_CRAWLS) {
      const b = start(['batcher', '--crawl', crawl, '--batch-size', '50', ...common]);
      expect([(await b.exited).code, b.text.join('').slice(-2000)]).toEqual([0, expect.anything()]);
      batches += logLine(b, 'batcher done')!['batches'] as number;
    }
    expect(batches).toBeGreaterThan(2);
    const workers = [0, 1].map(() => start(['worker', '--extract-threads', '1', ...common]));
    await waitFor('every batch done', async () => (await markersInBucket()) === batches, 900_000, 1000);
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) expect((await w.exited).code).toBe(0);

    const merge = start(['merge', '--data', DATA]);
    expect([(await merge.exited).code, merge.text.join('').slice(-2000)]).toEqual([0, expect.anything()]);
    // its one stdout line is the MergeResult
    const merged = merge.logs.find((l) => 'published' in l) as { published: boolean; version: string | null; batches: number } | undefined;
    expect(merged).toMatchObject({ published: true, batches });
    const manifest = JSON.parse(Buffer.from((await store!.get('index/manifest.json'))!).toString('utf8')) as { current: string };
    expect(manifest.current).toBe(merged!.version);

    const status = start(['status', '--data', DATA, '--queue-prefix', prefix]);
    expect((await status.exited).code).toBe(0);
    // pretty-printed JSON on stdout: from the `{` line to the `}` line (stderr may hold an SDK warning)
    const open = status.text.indexOf('{');
    const st = JSON.parse(status.text.slice(open, status.text.indexOf('}', open) + 1).join('\n')) as { batches: { done: number }; index: { current: string } };
    expect(st.batches.done).toBe(batches);
    expect(st.index.current).toBe(manifest.current);

    const api = start(['api', '--data', DATA, '--api-port', '0', '--api-host', '127.0.0.1']);
    const listening = (await waitFor('api listening', () => logLine(api, 'api listening'), 60_000))!;
    const base = `http://127.0.0.1:${String(listening['port'])}`;

    const datasets = await getJson(`${base}/v1/datasets`);
    const idOf = new Map<string, number>((datasets.body.datasets as { dataset_id: number; name: string }[]).map((d) => [d.name, d.dataset_id]));
    expect([...idOf.keys()].sort()).toEqual([...DEV_CRAWLS]);

    // domain → {crawl → oracle entry}
    const byDomain = new Map<string, Map<string, { count: number; urls: string[] }>>();
    for (const crawl of DEV_CRAWLS) {
      for (const [domain, d] of Object.entries(oracle.crawls[crawl]!.domains)) {
        if (!byDomain.has(domain)) byDomain.set(domain, new Map());
        byDomain.get(domain)!.set(crawl, d);
      }
    }
    for (const [domain, crawls] of byDomain) {
      const r = await getJson(`${base}/v1/domain/${encodeURIComponent(domain)}`);
      expect(r.status).toBe(200);
      expect(r.version).toBe(manifest.current);
      const got = new Map<number, number>((r.body.datasets as { dataset_id: number; url_count: number }[]).map((d) => [d.dataset_id, d.url_count]));
      for (const [crawl, want] of crawls) {
        const id = idOf.get(crawl)!;
        const wantUrls = new Set(want.urls.map(canon));
        expect({ domain, crawl, count: got.get(id) }).toEqual({ domain, crawl, count: wantUrls.size });
        const seen: string[] = [];
        for (let offset: number | null = 0; offset !== null; ) {
          const page = await getJson(`${base}/v1/domain/${encodeURIComponent(domain)}/datasets/${id}/urls?offset=${offset}&limit=40`);
          expect(page.status).toBe(200);
          seen.push(...(page.body.items as { url: string }[]).map((i) => i.url));
          offset = page.body.next_offset as number | null;
        }
        expect(seen).toHaveLength(new Set(seen).size);
        expect(new Set(seen.map(canon))).toEqual(wantUrls);
      }
      expect(got.size).toBe(crawls.size);
    }
    expect((await getJson(`${base}/v1/domain/not-in-the-index.example`)).status).toBe(404);
    api.child.kill('SIGTERM');
    expect((await api.exited).code).toBe(0);
  }, 1_200_000);
});
