/**
 * Ingestion end to end with real parts: the built `ccpipe` binary as separate processes, the real RabbitMQ on
 * 127.0.0.1, a real mirror server over ../shared/corpus/cc-mirror-dev, real files, Parquet read back by hyparquet.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { batchId, emptyDatasetRegistry, ensureDatasetIn, layout, parseDatasetRegistry, serializeDatasetRegistry, withStoreId, type Batch } from '@ccpipe/core';
import { AmqpBatchPublisher, AmqpConnection, deadLetterInfo, declareTopology, deleteTopology, topologyNames } from '@ccpipe/adapters';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { CC_MIRROR_DEV, loadOracle, oracleUrlForm } from './support/corpus';
import { readParquetRows } from './support/parquet';
import { killAll, logLine, markersIn, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';

const RABBITMQ = 'amqp://guest:guest@127.0.0.1:5672';
const CRAWL = 'CC-MAIN-2030-40';
const oracle = loadOracle();

interface Run {
  prefix: string;
  data: string;
  procs: CcpipeProcess[];
}
const runs: Run[] = [];
const servers: { close(): Promise<void> }[] = [];

async function newRun(): Promise<Run> {
  const run = { prefix: `ccpipe-it-${randomBytes(4).toString('hex')}`, data: await mkdtemp(join(tmpdir(), 'ccpipe-it-')), procs: [] };
  runs.push(run);
  return run;
}

afterAll(async () => {
  for (const run of runs) await killAll(run.procs);
  const conn = new AmqpConnection({ url: RABBITMQ, reconnect: { maxAttempts: 3 } });
  await conn.start();
  const ch = await conn.createChannel();
  for (const run of runs) await deleteTopology(ch, topologyNames(run.prefix)).catch(() => undefined);
  await ch.close().catch(() => undefined);
  await conn.close();
  for (const s of servers) await s.close();
  for (const run of runs) await rm(run.data, { recursive: true, force: true });
});

async function mirror(faults?: { slowDownEvery?: number }): Promise<MirrorServer> {
  const m = await serveMirror({ dir: CC_MIRROR_DEV, port: 0, ...(faults ? { faults } : {}) });
  servers.push(m);
  return m;
}

const common = (run: Run, baseUrl: string): string[] => ['--data', run.data, '--base-url', baseUrl, '--queue-prefix', run.prefix, '--metrics-port', '0'];

function batcher(run: Run, baseUrl: string, extra: string[] = []): CcpipeProcess {
  const p = spawnCcpipe(['batcher', '--crawl', CRAWL, '--batch-size', '40', ...common(run, baseUrl), ...extra]);
  run.procs.push(p);
  return p;
}

function worker(run: Run, baseUrl: string): CcpipeProcess {
  const p = spawnCcpipe(['worker', '--extract-threads', '1', '--prefetch', '2', ...common(run, baseUrl)]);
  run.procs.push(p);
  return p;
}

/** Runs the batcher to completion; returns its summary log line. */
async function runBatcher(run: Run, baseUrl: string, extra: string[] = []): Promise<Record<string, unknown>> {
  const b = batcher(run, baseUrl, extra);
  const { code } = await b.exited;
  expect({ code, out: b.text.join('') }).toMatchObject({ code: 0 });
  return logLine(b, 'batcher done')!;
}

/** Every row of every part of the run, read by hyparquet. */
async function allRows(run: Run): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const marker of await markersIn(run.data)) {
    const m = JSON.parse(await readFile(marker, 'utf8')) as { part: string | null };
    if (m.part) rows.push(...(await readParquetRows(await readFile(join(run.data, m.part)))));
  }
  return rows;
}

async function metricsOf(p: CcpipeProcess): Promise<string> {
  const port = Number(logLine(p, 'metrics listening')!['port']);
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

/** Each kept capture exactly once: unique (url, timestamp, WARC location), and the oracle's URL set. */
function expectExactlyOnce(rows: Record<string, unknown>[], kept: number): void {
  expect(rows).toHaveLength(kept);
  const keys = new Set(rows.map((r) => `${String(r['raw_url'])} ${String(r['ts'])} ${String(r['warc_filename'])}:${String(r['warc_offset'])}`));
  expect(keys.size).toBe(rows.length);
}

describe('batcher + 2 workers over RabbitMQ and a mirror server', () => {
  it('index every kept capture exactly once; read = kept + dropped by reason; workers drain on SIGTERM', async () => {
    const run = await newRun();
    const m = await mirror();
    const summary = await runBatcher(run, m.url);
    const want = oracle.crawls[CRAWL]!;
    expect(summary['records']).toBe(want.cdx_lines);
    expect(summary['kept']).toBe(want.kept_captures);
    const dropped = summary['dropped'] as Record<string, number>;
    expect((summary['kept'] as number) + Object.values(dropped).reduce((a, b) => a + b, 0)).toBe(want.cdx_lines);

    const workers = [worker(run, m.url), worker(run, m.url)];
    await waitFor('every batch done', async () => (await markersIn(run.data)).length === summary['batches'], 600_000, 500);
    const metrics = await Promise.all(workers.map(metricsOf));
    // Both workers took part.
    for (const text of metrics) expect(text).toMatch(/ccpipe_worker_batches_done_total [1-9]/);
    for (const w of workers) w.child.kill('SIGTERM');
    for (const w of workers) expect((await w.exited).code).toBe(0);

    const rows = await allRows(run);
    expectExactlyOnce(rows, want.kept_captures);
    expect(new Set(rows.map((r) => oracleUrlForm(String(r['raw_url']))))).toEqual(new Set(Object.values(want.domains).flatMap((d) => d.urls)));
    expect(rows.filter((r) => typeof r['text'] === 'string' && (r['text'] as string).length > 0).length).toBeGreaterThan(want.kept_captures * 0.9);
  }, 900_000);

  it('a worker killed with SIGKILL mid-run loses nothing and doubles nothing', async () => {
    const run = await newRun();
    const m = await mirror();
    const summary = await runBatcher(run, m.url, ['--max-blocks', '8']);
    const first = worker(run, m.url);
    await waitFor('a first batch done', async () => (await markersIn(run.data)).length >= 1, 300_000);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const done = (await markersIn(run.data)).length;
    expect(done).toBeLessThan(summary['batches'] as number);
    const second = worker(run, m.url);
    await waitFor('every batch done', async () => (await markersIn(run.data)).length === summary['batches'], 600_000, 500);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    expectExactlyOnce(await allRows(run), summary['kept'] as number);
  }, 900_000);

  it('503 SlowDown on every 3rd request slows the run but loses nothing', async () => {
    const run = await newRun();
    const m = await mirror({ slowDownEvery: 3 });
    const summary = await runBatcher(run, m.url, ['--max-blocks', '6']);
    const w = worker(run, m.url);
    await waitFor('every batch done', async () => (await markersIn(run.data)).length === summary['batches'], 600_000, 500);
    const text = await metricsOf(w);
    expect(text).toMatch(/ccpipe_worker_http_retries_total\{status_class="5xx"\} [1-9]/);
    expect(text).toMatch(/ccpipe_worker_http_slowdowns_total [1-9]/);
    w.child.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
    const rows = await allRows(run);
    expectExactlyOnce(rows, summary['kept'] as number);
  }, 900_000);

  it('an SSRF filename in a batch never reaches another host; the batch completes with the failure recorded', async () => {
    const run = await newRun();
    const m = await mirror();
    let hits = 0;
    const other: Server = createServer((_req, res) => {
      hits++;
      res.end('secret');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
    servers.push({ close: () => new Promise<void>((r) => other.close(() => r())) });
    const port = (other.address() as AddressInfo).port;
    const conn = new AmqpConnection({ url: RABBITMQ, reconnect: { maxAttempts: 3 } });
    await conn.start();
    const names = topologyNames(run.prefix);
    const ch = await conn.createChannel();
    await declareTopology(ch, names);
    await ch.close();
    const publisher = new AmqpBatchPublisher({ connection: conn, names });
    const base = { url: 'https://example.com/', ts: '20301110120000', languages: ['eng'], offset: 0, length: 100 };
    const evil: Batch = {
      v: 1, id: batchId(CRAWL, 99_999, 0), crawl: CRAWL, dataset: CRAWL, datasetId: 1, blockNo: 99_999, seq: 0,
      records: [
        { ...base, filename: `http://127.0.0.1:${port}/x.warc.gz` },
        { ...base, filename: `//127.0.0.1:${port}/x.warc.gz` },
        { ...base, filename: 'crawl-data/../../../etc/passwd' },
        { ...base, filename: 'crawl-data/%2e%2e/x.warc.gz' },
      ],
    };
    // published by hand for the worker's store: its registry names the dataset as a batcher would have
    await writeFile(join(run.data, layout.datasetRegistry()), serializeDatasetRegistry(ensureDatasetIn(emptyDatasetRegistry(), CRAWL, CRAWL, '2030-01-01T00:00:00Z').registry));
    await publisher.publish(evil);
    await publisher.close();
    await conn.close();
    const w = worker(run, m.url);
    const marker: string = await waitFor('the batch done', async () => (await markersIn(run.data))[0] ?? '', 300_000);
    w.child.kill('SIGTERM');
    await w.exited;
    const body = JSON.parse(await readFile(marker, 'utf8')) as { rows: number; failed: number; failures: Record<string, number> };
    expect(body).toMatchObject({ rows: 0, failed: 4, failures: { CCP_ERR_SSRF: 4 } });
    expect(hits).toBe(0);
    expect(dirname(marker)).toContain('dataset_id=1');
  }, 600_000);

  it('a worker over another data store than its batcher dead-letters every batch and writes nothing (issue #22 repro)', async () => {
    // the worker's store: CC-MAIN-2030-44 is its dataset 1; the batcher's own store gets CC-MAIN-2030-40 as its dataset 1
    const workerStore = await newRun();
    const batcherStore = { ...(await newRun()), prefix: workerStore.prefix };
    runs.push(batcherStore);
    const theirs = withStoreId(ensureDatasetIn(emptyDatasetRegistry(), 'CC-MAIN-2030-44', 'CC-MAIN-2030-44', '2030-01-01T00:00:00Z').registry, () => 'worker-store-0001').registry;
    await writeFile(join(workerStore.data, layout.datasetRegistry()), serializeDatasetRegistry(theirs));
    const m = await mirror();
    const summary = await runBatcher(batcherStore, m.url, ['--max-blocks', '2']);
    const batches = summary['batches'] as number;
    expect(batches).toBeGreaterThan(0);
    const published = parseDatasetRegistry(await readFile(join(batcherStore.data, layout.datasetRegistry())));
    expect(published.datasets.map((d) => [d.id, d.name])).toEqual([[1, CRAWL]]);
    expect(published.storeId).toMatch(/^[0-9a-f-]{36}$/);
    const w = worker(workerStore, m.url);
    const conn = new AmqpConnection({ url: RABBITMQ, reconnect: { maxAttempts: 3 } });
    await conn.start();
    const ch = await conn.createChannel();
    try {
      const names = topologyNames(workerStore.prefix);
      await waitFor('every batch dead-lettered', async () => (await ch.checkQueue(names.deadLetterQueue)).messageCount === batches, 300_000, 250);
      const reasons = new Set<string>();
      for (let msg = await ch.get(names.deadLetterQueue, { noAck: true }); msg; msg = await ch.get(names.deadLetterQueue, { noAck: true })) {
        reasons.add(deadLetterInfo(msg.properties.headers as Record<string, unknown>).reason);
      }
      expect([...reasons]).toEqual(['CCP_ERR_BATCH_FOREIGN_STORE']);
    } finally {
      await ch.close().catch(() => undefined);
      await conn.close();
    }
    w.child.kill('SIGTERM');
    expect((await w.exited).code).toBe(0);
    // the worker said why, and filed nothing under its dataset 1
    const failed = w.logs.filter((l) => l['msg'] === 'batch failed');
    expect(failed.map((l) => [l['action'], l['reason']])).toEqual(Array(batches).fill(['dead-letter', 'CCP_ERR_BATCH_FOREIGN_STORE']));
    expect(JSON.stringify(failed[0])).toContain('the batch was published for data store');
    expect(await markersIn(workerStore.data)).toEqual([]);
  }, 600_000);
});
