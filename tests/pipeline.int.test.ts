/**
 * The whole pipeline as separate processes, as an operator runs it: `ccpipe batcher` per crawl and two `ccpipe worker`s
 * over the real RabbitMQ and a mirror server over cc-mirror-dev, then `ccpipe merge`, then `ccpipe api`; the answers
 * of the HTTP API are compared with oracle.json for every (domain, crawl).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { canonicalizeUrl } from '@ccpipe/core';
import { AmqpConnection, deleteTopology, topologyNames } from '@ccpipe/adapters';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { DEV_CRAWLS, CC_MIRROR_DEV, loadOracle } from './support/corpus';
import { killAll, logLine, markersIn, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';

const oracle = loadOracle();
const prefix = `ccpipe-pipe-${randomBytes(4).toString('hex')}`;
const procs: CcpipeProcess[] = [];
let data = '';
let mirror: MirrorServer | undefined;

beforeAll(async () => {
  data = await mkdtemp(join(tmpdir(), 'ccpipe-pipeline-'));
  mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
});

afterAll(async () => {
  await killAll(procs);
  const conn = new AmqpConnection({ url: 'amqp://guest:guest@127.0.0.1:5672', reconnect: { maxAttempts: 3 } });
  await conn.start();
  const ch = await conn.createChannel();
  await deleteTopology(ch, topologyNames(prefix)).catch(() => undefined);
  await ch.close().catch(() => undefined);
  await conn.close();
  await mirror?.close();
  await rm(data, { recursive: true, force: true });
});

const canon = (u: string): string => canonicalizeUrl(u).url;
const start = (args: string[]): CcpipeProcess => {
  const p = spawnCcpipe(args);
  procs.push(p);
  return p;
};

async function getJson(url: string): Promise<{ status: number; version: string | null; body: any }> {
  const res = await fetch(url);
  return { status: res.status, version: res.headers.get('x-index-version'), body: await res.json() };
}

describe('batcher → RabbitMQ → 2 workers → merge → api, as separate processes', () => {
  it('answers every (domain, crawl) of the oracle with its datasets, exact counts and URL set', async () => {
    const common = ['--data', data, '--base-url', mirror!.url, '--queue-prefix', prefix, '--metrics-port', '0'];
    let batches = 0;
    for (const crawl of DEV_CRAWLS) {
      const b = start(['batcher', '--crawl', crawl, '--batch-size', '50', ...common]);
      expect((await b.exited).code).toBe(0);
      batches += logLine(b, 'batcher done')!['batches'] as number;
    }
    const workers = [0, 1].map(() => start(['worker', '--extract-threads', '1', ...common]));
    await waitFor('every batch done', async () => (await markersIn(data)).length === batches, 900_000, 500);
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) expect((await w.exited).code).toBe(0);

    const merge = start(['merge', '--data', data]);
    expect((await merge.exited).code).toBe(0);

    const api = start(['api', '--data', data, '--api-port', '0', '--api-host', '127.0.0.1']);
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
    let version: string | null = null;
    for (const [domain, crawls] of byDomain) {
      const r = await getJson(`${base}/v1/domain/${encodeURIComponent(domain)}`);
      expect(r.status).toBe(200);
      version ??= r.version;
      expect(r.version).toBe(version);
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
    expect((await getJson(`${base}/v1/domain/${encodeURIComponent('exa..com')}`)).status).toBe(400);
    api.child.kill('SIGTERM');
    expect((await api.exited).code).toBe(0);
  }, 1_200_000);
});
