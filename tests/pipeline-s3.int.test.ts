/**
 * The whole pipeline as separate processes with the lake on an S3-compatible store: `ccpipe batcher` per crawl, two
 * `ccpipe worker`s over the real RabbitMQ, `ccpipe merge` after each crawl (keeping the lake in a `--merge-cache-dir`),
 * `ccpipe status` and `ccpipe api`, every one started with
 * `--data s3://bucket/prefix` against a real s3rver on loopback (credentials from AWS_ACCESS_KEY_ID /
 * AWS_SECRET_ACCESS_KEY, endpoint from CCPIPE_S3_ENDPOINT), so nothing is shared through a local directory. The
 * HTTP API's answers are compared with oracle.json for every (domain, crawl).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
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
const cleanups: (() => Promise<void>)[] = [];
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
  for (const c of cleanups) await c();
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

/** The `<key>~<crc32>-<size>` names under a merge cache dir (MergeCache's layout), sorted. */
async function cachedKeys(dir: string): Promise<string[]> {
  const root = join(dir, 'ccpipe-merge-cache');
  return (await readdir(root, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/')).sort();
}

/** What a merge cache should hold after `version` was merged: its lake files and its index shard files. */
async function versionFilesToCache(version: string): Promise<string[]> {
  const read = async <T>(key: string): Promise<T> => JSON.parse(Buffer.from((await store!.get(key))!).toString('utf8')) as T;
  const name = (key: string, size: number, crc: number): string => `${key}~${(crc >>> 0).toString(16).padStart(8, '0')}-${size}`;
  const files = await read<{ key: string; bytes: number; crc32: number }[]>(`index/${version}/files.json`);
  const toc = await read<{ files: Record<string, { size: number; crc32: number }> }>(`index/${version}/version.json`);
  const shards = Object.entries(toc.files).filter(([n]) => n.endsWith('.bin'));
  expect(shards.length).toBeGreaterThanOrEqual(3);
  return [...files.map((f) => name(f.key, f.bytes, f.crc32)), ...shards.map(([n, e]) => name(`index/${version}/${n}`, e.size, e.crc32))].sort();
}

async function markersInBucket(): Promise<number> {
  let n = 0;
  for await (const o of store!.list(layout.batchesPrefix())) if (layout.isBatchMarker(o.key)) n++;
  return n;
}

/** Entries in the merger's inbox (a worker writes one after each marker; a merge deletes those it folded in). */
async function inboxEntriesInBucket(): Promise<number> {
  let n = 0;
  for await (const o of store!.list(layout.inboxPrefix())) if (layout.markerOfInboxEntry(o.key) !== null) n++;
  return n;
}


describe('batcher → RabbitMQ → 2 workers → merge → api, as separate processes, lake on S3', () => {
  it('answers every (domain, crawl) of the oracle with its datasets, exact counts and URL set', async () => {
    const common = ['--data', DATA, '--base-url', mirror!.url, '--queue-prefix', prefix, '--metrics-port', '0'];
    const cacheDir = await mkdtemp(join(tmpdir(), 'ccpipe-s3-merge-cache-'));
    cleanups.push(() => rm(cacheDir, { recursive: true, force: true }));
    const workers = [0, 1].map(() => start(['worker', '--extract-threads', '1', ...common]));
    // one merge per crawl, both keeping the lake and index in a cache dir: the second reads the first's files there
    let batches = 0;
    let merged: { published: boolean; version: string | null; batches: number } | undefined;
    for (const crawl of DEV_CRAWLS) {
      const b = start(['batcher', '--crawl', crawl, '--batch-size', '50', ...common]);
      expect([(await b.exited).code, b.text.join('').slice(-2000)]).toEqual([0, expect.anything()]);
      const crawlBatches = logLine(b, 'batcher done')!['batches'] as number;
      batches += crawlBatches;
      await waitFor('every batch done', async () => (await markersInBucket()) === batches && (await inboxEntriesInBucket()) === crawlBatches, 900_000, 1000);
      const merge = start(['merge', '--data', DATA, '--merge-cache-dir', cacheDir]);
      expect([(await merge.exited).code, merge.text.join('').slice(-2000)]).toEqual([0, expect.anything()]);
      // its one stdout line is the MergeResult
      merged = merge.logs.find((l) => 'published' in l) as typeof merged;
      expect(merged).toMatchObject({ published: true, batches: crawlBatches, withoutInbox: 0 });
      // the entries of the batches it folded in are gone from the bucket
      expect(await inboxEntriesInBucket()).toBe(0);
      // the cache holds exactly the new version's lake files and shard files, each under its size and CRC32
      expect(await cachedKeys(cacheDir)).toEqual(await versionFilesToCache(merged!.version!));
    }
    expect(batches).toBeGreaterThan(2);
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) expect((await w.exited).code).toBe(0);
    const manifest = JSON.parse(Buffer.from((await store!.get('index/manifest.json'))!).toString('utf8')) as { current: string };
    expect(manifest.current).toBe(merged!.version);

    const status = start(['status', '--data', DATA, '--queue-prefix', prefix]);
    expect((await status.exited).code).toBe(0);
    // pretty-printed JSON on stdout (stderr may hold an SDK warning)
    const st = JSON.parse(status.stdout) as { batches: { done: number }; index: { current: string } };
    expect(st.batches.done).toBe(batches);
    expect(st.index.current).toBe(manifest.current);

    const api = start(['api', '--data', DATA, '--api-port', '0', '--api-host', '127.0.0.1']);
    const listening = (await waitFor('api listening', () => logLine(api, 'api listening'), 60_000))!;
    const base = `http://127.0.0.1:${String(listening['port'])}`;

    await expectApiMatchesOracle(base, { version: manifest.current });
    // full-text search over S3: the shards are downloaded whole on first use (CRC-checked), then searched in place
    const search = async (q: string): Promise<{ total: number; items: { url: string; snippet: string }[] }> => {
      const res = await fetch(`${base}/v1/search?q=${encodeURIComponent(q)}&limit=5`);
      expect(res.status).toBe(200);
      return (await res.json()) as { total: number; items: { url: string; snippet: string }[] };
    };
    const hits = await search('the');
    expect(hits.total).toBeGreaterThan(100);
    expect(hits.items[0]!.snippet).toContain('<mark>');
    expect((await search('the')).items).toEqual(hits.items);
    api.child.kill('SIGTERM');
    expect((await api.exited).code).toBe(0);
  }, 1_200_000);
});
