/**
 * The whole pipeline as separate processes with the lake on an S3-compatible store: `ccpipe batcher` per crawl, two
 * `ccpipe worker`s over the real RabbitMQ, `ccpipe merge`, `ccpipe status` and `ccpipe api`, every one started with
 * `--data s3://bucket/prefix` against a real s3rver on loopback (credentials from AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY, endpoint from CCPIPE_S3_ENDPOINT), so nothing is shared through a local directory. The
 * HTTP API's answers are compared with oracle.json for every (domain, crawl).
 */
import { randomBytes } from 'node:crypto';
import { layout } from '@ccpipe/core';
import { AmqpConnection, S3ObjectStore, deleteTopology, topologyNames } from '@ccpipe/adapters';
import { S3RVER_CREDENTIALS, startS3TestServer, type S3TestServer } from '@ccpipe/adapters/store/s3-test-server';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { DEV_CRAWLS, CC_MIRROR_DEV } from './support/corpus';
import { expectApiMatchesOracle } from './support/api-oracle';
import { killAll, logLine, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';

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

    await expectApiMatchesOracle(base, { version: manifest.current });
    api.child.kill('SIGTERM');
    expect((await api.exited).code).toBe(0);
  }, 1_200_000);
});
