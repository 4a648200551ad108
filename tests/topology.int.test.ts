/**
 * The docker-compose topology as local processes: RabbitMQ (the local broker), Prometheus (Debian's binary, scraping
 * with a config generated from prometheus.yml's jobs), a mirror over cc-mirror-dev, `ccpipe batcher` per crawl, two
 * `ccpipe worker`s, the merger service (`ccpipe merge --every`) and `ccpipe api`. Prometheus's HTTP API must show
 * every job's targets up and the pipeline's counters moved; the HTTP API must answer the oracle's counts.
 *
 * The batcher is short-lived (it exits when its crawl is published), so a gate between it and the mirror holds the
 * request for its crawl's last CDX block until Prometheus has scraped it up with batches published: deterministic,
 * with no timing assumption.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { canonicalizeUrl } from '@ccpipe/core';
import { AmqpConnection, deleteTopology, mergeTaskTopologyNames, topologyNames } from '@ccpipe/adapters';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { CC_MIRROR_DEV, DEV_CRAWLS, REPO_ROOT, loadOracle } from './support/corpus';
import { inCi } from './support/ci';
import { killAll, logLine, markersIn, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';
import { freePort, hasPrometheus, jobNamesOf, localScrapeConfig, startPrometheus, type LocalPrometheus } from './support/prometheus';

const run = hasPrometheus() || inCi() ? describe : describe.skip;
if (!hasPrometheus() && !inCi()) console.warn('/usr/bin/prometheus is not installed: skipping the topology test (CI installs it)');

const BROKER = 'amqp://guest:guest@127.0.0.1:5672';
const RABBIT_METRICS = '127.0.0.1:15692';
const prefix = `ccpipe-topo-${randomBytes(4).toString('hex')}`;
const procs: CcpipeProcess[] = [];
let data = '';
let mirror: MirrorServer | undefined;
let gate: Gate | undefined;
let prometheus: LocalPrometheus | undefined;

/** An HTTP proxy to the mirror that holds the requests `hold` matches until `release()`. */
interface Gate {
  url: string;
  /** Requests seen held so far. */
  held(): number;
  release(): void;
  close(): Promise<void>;
}

async function startGate(target: string, hold: (path: string, range: string | undefined) => boolean): Promise<Gate> {
  const upstream = new URL(target);
  let released = false;
  let held = 0;
  const waiting: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const forward = (): void => {
      const up = request(
        { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
    };
    if (!released && hold((req.url ?? '').split('?')[0]!, req.headers.range)) {
      held++;
      waiting.push(forward);
    } else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held: () => held,
    release: () => {
      released = true;
      for (const f of waiting.splice(0)) f();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The last block of a crawl's cluster.idx as the batcher requests it: shard path and Range start. */
function lastBlockOf(crawl: string): { path: string; range: string } {
  const lines = readFileSync(join(CC_MIRROR_DEV, 'cc-index', 'collections', crawl, 'indexes', 'cluster.idx'), 'utf8').trimEnd().split('\n');
  const [, shard, offset] = lines.at(-1)!.split('\t');
  return { path: `/cc-index/collections/${crawl}/indexes/${shard!}`, range: `bytes=${offset!}-` };
}

/** Queue consumers, from the management API. */
async function consumersOf(queue: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:15672/api/queues/%2F/${encodeURIComponent(queue)}`, {
    headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` },
  });
  return res.ok ? ((await res.json()) as { consumers?: number }).consumers ?? 0 : 0;
}

const start = (args: string[]): CcpipeProcess => {
  const p = spawnCcpipe(args);
  procs.push(p);
  return p;
};

afterAll(async () => {
  await killAll(procs);
  await prometheus?.close();
  await gate?.close();
  await mirror?.close();
  const conn = new AmqpConnection({ url: BROKER, reconnect: { maxAttempts: 3 } });
  await conn.start();
  const ch = await conn.createChannel();
  await deleteTopology(ch, topologyNames(prefix)).catch(() => undefined);
  await deleteTopology(ch, mergeTaskTopologyNames(prefix)).catch(() => undefined);
  await ch.close().catch(() => undefined);
  await conn.close();
  if (data) await rm(data, { recursive: true, force: true });
}, 60_000);

run('the compose topology as local processes, watched by a real Prometheus', () => {
  it('has every target up, moves the pipeline counters on both workers, and serves the oracle counts', async () => {
    data = await mkdtemp(join(tmpdir(), 'ccpipe-topology-'));
    mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
    const [crawlA, crawlB] = DEV_CRAWLS;
    const last = lastBlockOf(crawlA);
    gate = await startGate(mirror.url, (path, range) => path === last.path && range?.startsWith(last.range) === true);

    const port = { batcher: await freePort(), workers: [await freePort(), await freePort()], merger: await freePort(), mergeWorker: await freePort(), api: await freePort() };
    const local = (p: number): string => `127.0.0.1:${p}`;
    const scrape: Record<string, string[]> = {
      batcher: [local(port.batcher)],
      worker: port.workers.map(local),
      merger: [local(port.merger)],
      'merge-worker': [local(port.mergeWorker)],
      api: [local(port.api)],
      rabbitmq: [RABBIT_METRICS],
      'rabbitmq-queues': [RABBIT_METRICS],
    };
    prometheus = await startPrometheus(localScrapeConfig(readFileSync(join(REPO_ROOT, 'prometheus.yml'), 'utf8'), scrape));
    const targetCount = Object.values(scrape).reduce((n, t) => n + t.length, 0);

    const common = ['--data', data, '--queue-prefix', prefix, '--metrics-host', '127.0.0.1'];
    const workers = port.workers.map((p) => start(['worker', '--extract-threads', '1', '--base-url', mirror!.url, '--metrics-port', String(p), ...common]));
    // as compose runs it: the merger's merges written by a merge-worker (docs/merge-tasks.md)
    const merger = start(['merge', '--every', '1', '--data', data, '--metrics-port', String(port.merger), '--metrics-host', '127.0.0.1', '--distribute', 'true', '--queue-prefix', prefix]);
    start(['merge-worker', '--data', data, '--metrics-port', String(port.mergeWorker), ...common]);
    const api = start(['api', '--data', data, '--api-port', String(port.api), '--api-host', '127.0.0.1']);
    const names = topologyNames(prefix);
    // Both workers consume before anything is published, so each gets deliveries (prefetch bounds what one holds).
    await waitFor('two consumers on the work queue', async () => (await consumersOf(names.queue)) === 2, 60_000);

    // ranges mode: the gate holds the batcher at its last CDX block (a bulk batcher reads a CDX file in one request)
    const batcherArgs = (crawl: string, baseUrl: string): string[] => ['batcher', '--crawl', crawl, '--mode', 'ranges', '--batch-size', '20', '--base-url', baseUrl, '--metrics-port', String(port.batcher), ...common];
    const batcherA = start(batcherArgs(crawlA, gate.url));
    const jobs = jobNamesOf(readFileSync(join(REPO_ROOT, 'prometheus.yml'), 'utf8'));
    // While the batcher waits on its last block (held by the gate: it can publish earlier blocks' batches and be
    // scraped before it asks for that one): every job's targets up, and batches already published.
    const targets = await waitFor(
      'the batcher held at its last block, every target up, and the batcher scraped after publishing',
      async () => {
        if (gate!.held() === 0) return null;
        const t = await prometheus!.targets();
        const published = await prometheus!.query(`ccpipe_batcher_batches_published_total{job="batcher"}`);
        return t.length === targetCount && t.every((x) => x.health === 'up') && (published[0]?.value ?? 0) > 0 ? t : null;
      },
      120_000,
      500,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify((await prometheus!.targets()).map((x) => [x.scrapePool, x.health, x.lastError]))}`);
    });
    expect([...new Set(targets!.map((t) => t.labels['job']))].sort()).toEqual([...jobs].sort());
    expect(targets!.filter((t) => t.labels['job'] === 'worker').map((t) => t.labels['instance']).sort()).toEqual(port.workers.map(local).sort());
    gate.release();
    expect((await batcherA.exited).code).toBe(0);
    const batcherB = start(batcherArgs(crawlB, mirror.url));
    expect((await batcherB.exited).code).toBe(0);
    const batches = [batcherA, batcherB].reduce((n, b) => n + (logLine(b, 'batcher done')!['batches'] as number), 0);
    expect(batches).toBeGreaterThan(2);

    await waitFor('every batch done', async () => (await markersIn(data)).length === batches, 900_000, 500);
    // Merges run one after another, so once their batch counts add up to every batch, the last published one has them all.
    const mergeDone = (): Record<string, unknown>[] => merger.logs.filter((l) => l['msg'] === 'merge done');
    await waitFor('every batch merged', () => mergeDone().reduce((n, l) => n + (l['batches'] as number), 0) === batches, 300_000, 500);
    const version = mergeDone().filter((l) => l['published'] === true).at(-1)!['version'] as string;

    const series = async (expr: string): Promise<number[]> => (await prometheus!.query(expr)).map((s) => s.value);
    const sum = async (expr: string): Promise<number> => (await series(expr)).reduce((a, b) => a + b, 0);
    await waitFor(
      'the last counters scraped',
      async () => (await sum('ccpipe_worker_batches_done_total')) === batches && (await sum('ccpipe_merge_batches_merged_total')) === batches,
      60_000,
      500,
    );
    // each worker did some of the work, and together all of it
    const perWorker = await prometheus.query('ccpipe_worker_records_indexed_total');
    expect(perWorker.map((s) => s.metric['instance']).sort()).toEqual(port.workers.map(local).sort());
    for (const s of perWorker) expect(s.value).toBeGreaterThan(0);
    for (const v of await series('ccpipe_worker_batches_done_total')) expect(v).toBeGreaterThan(0);
    expect(await sum('ccpipe_worker_records_indexed_total')).toBe(await sum('ccpipe_worker_parquet_rows_written_total'));
    expect(await sum('max_over_time(ccpipe_batcher_batches_published_total[10m])')).toBeGreaterThan(0);
    expect(await sum('ccpipe_merge_runs_total{outcome="published"}')).toBeGreaterThan(0);
    expect(await sum('ccpipe_merge_runs_total{outcome="failed"}')).toBe(0);
    await waitFor('merge tasks done scraped', async () => (await sum('ccpipe_merge_worker_tasks_total{outcome="done"}')) > 0, 60_000, 500);
    expect(await sum('ccpipe_merge_worker_tasks_total{outcome="dead-letter"}')).toBe(0);
    expect(await sum('ccpipe_merge_duration_seconds_count{outcome="published"}')).toBe(await sum('ccpipe_merge_runs_total{outcome="published"}'));
    expect(await series('ccpipe_merge_index_version')).toEqual([Number(version.slice(1))]);
    expect(await series('ccpipe_merge_index_urls')).toEqual([mergeDone().at(-1)!['urls']]);
    // the per-queue job sees this test's work queue, drained
    await waitFor('the work queue drained in rabbitmq-queues', async () => (await series(`rabbitmq_detailed_queue_messages{job="rabbitmq-queues",queue="${names.queue}"}`))[0] === 0, 30_000, 500);

    // Every dashboard query is valid PromQL for this Prometheus; the merger's panels have data.
    const dashboard = JSON.parse(readFileSync(join(REPO_ROOT, 'grafana', 'dashboards', 'ccpipe.json'), 'utf8')) as {
      panels: { title?: string; targets?: { expr: string }[] }[];
    };
    const panelExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ title: p.title ?? '', expr: t.expr.replace(/\$__rate_interval/g, '30s') })));
    expect(panelExprs.length).toBeGreaterThan(30);
    for (const { expr } of panelExprs) await expect(prometheus.query(expr).then(() => expr)).resolves.toBe(expr);
    const mergePanels = panelExprs.filter((e) => e.expr.includes('ccpipe_merge_'));
    expect(mergePanels.length).toBeGreaterThan(5);
    for (const { title, expr } of mergePanels) expect({ title, expr, samples: (await prometheus.query(expr)).length > 0 }).toEqual({ title, expr, samples: true });

    // The API follows the manifest to the last version; its answers match the oracle's counts for every (domain, crawl).
    const base = `http://${local(port.api)}`;
    await waitFor('the api on the last version', async () => (await fetch(`${base}/v1/datasets`)).headers.get('x-index-version') === version, 30_000);
    // …and says so to Prometheus, beside the merger's version (the dashboard's "oldest version an API serves")
    await waitFor('the api version scraped', async () => (await series('ccpipe_api_index_version')).join() === String(Number(version.slice(1))), 60_000, 500);
    expect(await sum('ccpipe_api_index_load_failures_total')).toBe(0);
    const datasets = (await (await fetch(`${base}/v1/datasets`)).json()) as { datasets: { dataset_id: number; name: string }[] };
    const crawlOf = new Map(datasets.datasets.map((d) => [d.dataset_id, d.name]));
    expect([...crawlOf.values()].sort()).toEqual([...DEV_CRAWLS]);
    const oracle = loadOracle();
    const want = new Map<string, Record<string, number>>();
    for (const crawl of DEV_CRAWLS) {
      for (const [domain, d] of Object.entries(oracle.crawls[crawl]!.domains)) {
        want.set(domain, { ...want.get(domain), [crawl]: new Set(d.urls.map((u) => canonicalizeUrl(u).url)).size });
      }
    }
    const got = new Map<string, Record<string, number>>();
    for (const domain of want.keys()) {
      const res = await fetch(`${base}/v1/domain/${encodeURIComponent(domain)}`);
      expect(res.headers.get('x-index-version')).toBe(version);
      const body = (await res.json()) as { datasets: { dataset_id: number; url_count: number }[] };
      got.set(domain, Object.fromEntries(body.datasets.map((d) => [crawlOf.get(d.dataset_id)!, d.url_count])));
    }
    expect(got).toEqual(want);
    expect(api.child.exitCode).toBeNull();

    // SIGTERM: the merger finishes what it is doing and exits 0 (the service lifecycle), like docker stop.
    merger.child.kill('SIGTERM');
    expect((await merger.exited).code).toBe(0);
    expect(logLine(merger, 'merger stopped')).toMatchObject({ failed: 0 });
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) expect((await w.exited).code).toBe(0);
  }, 1_200_000);
});
