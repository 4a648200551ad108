/** `ccpipe status` (the built binary) against the real RabbitMQ and a data store the real worker code wrote. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { batchKey, emptyDatasetRegistry, ensureDatasetIn, extractDocument, layout, serializeDatasetRegistry } from '@ccpipe/core';
import { AmqpBatchPublisher, AmqpConnection, FsObjectStore, closeDuckDbParquetEngine, declareTopology, deleteTopology, topologyNames, writeParquetPart } from '@ccpipe/adapters';
import { processBatch } from '@ccpipe/worker';
import { runMerge } from '@ccpipe/index';
import { DEV_CRAWLS } from './support/corpus';
import { devBatches, devReader } from './support/dev-batches';
import { spawnCcpipe } from './support/processes';

const prefix = `ccpipe-status-${randomBytes(4).toString('hex')}`;
let data = '';
const conn = new AmqpConnection({ url: 'amqp://guest:guest@127.0.0.1:5672', reconnect: { maxAttempts: 3 } });

beforeAll(async () => {
  data = await mkdtemp(join(tmpdir(), 'ccpipe-status-'));
  await conn.start();
});

afterAll(async () => {
  const ch = await conn.createChannel();
  await deleteTopology(ch, topologyNames(prefix)).catch(() => undefined);
  await ch.close().catch(() => undefined);
  await conn.close();
  await closeDuckDbParquetEngine();
  await rm(data, { recursive: true, force: true });
});

it('reports queue depth, DLQ, completed batches, index version and datasets', async () => {
  const store = new FsObjectStore({ root: data });
  const crawl = DEV_CRAWLS[0];
  await store.put(layout.datasetRegistry(), serializeDatasetRegistry(ensureDatasetIn(emptyDatasetRegistry(), crawl, crawl, '2030-11-10T00:00:00Z').registry));
  const batches = await devBatches(crawl, { datasetId: 1, maxBlocks: 3 });
  const done = batches.slice(0, 2);
  let rows = 0;
  let failed = 0;
  const byReason: Record<string, number> = {};
  const process = async (b: (typeof batches)[number]): Promise<void> => {
    const { marker } = await processBatch(
      b,
      { reader: devReader(), store, extract: async (html, url) => extractDocument(html, { url }), writePart: (r) => writeParquetPart(r) },
      { concurrency: 4, includeText: false },
    );
    rows += marker.rows;
    failed += marker.failed;
    for (const [r, n] of Object.entries(marker.failures)) byReason[r] = (byReason[r] ?? 0) + n;
  };
  for (const b of done) await process(b);
  const names = topologyNames(prefix);
  const ch = await conn.createChannel();
  await declareTopology(ch, names);
  await ch.close();
  const publisher = new AmqpBatchPublisher({ connection: conn, names });
  for (const b of batches) await publisher.publish(b);
  await publisher.close();

  const p = spawnCcpipe(['status', '--data', data, '--queue-prefix', prefix]);
  expect((await p.exited).code).toBe(0);
  const status = JSON.parse(p.stdout) as Record<string, any>;
  expect(status['queue']).toEqual({ name: names.queue, ready: batches.length, unacked: null, deadLettered: 0 });
  expect(status['batches']).toEqual({ done: done.length, rows, failedRecords: failed, byDataset: { '1': done.length }, datasets: { '1': { batches: done.length, rows, failedRecords: failed, ...(failed > 0 && { failedByReason: { ...byReason } }) } } });
  expect(status['index']).toEqual({ current: null, versions: [] });
  expect(status['datasets']).toEqual([{ id: 1, name: crawl, crawl, kind: 'crawl' }]);

  // merged batches are counted from the index version's totals, and only newer markers are read: a merged marker
  // that cannot be read any more changes nothing
  expect(await runMerge({ store, dataDir: data, rowGroupSize: 2048, keepVersions: 3, graceMs: 60_000 })).toMatchObject({ version: 'v000001', batches: done.length });
  await store.put(layout.batchMarker(1, batchKey(done[0]!.id)), Buffer.from('not json'));
  await process(batches[2]!);
  const again = spawnCcpipe(['status', '--data', data, '--queue-prefix', prefix]);
  expect((await again.exited).code).toBe(0);
  const after = JSON.parse(again.stdout) as Record<string, any>;
  expect(after['batches']).toEqual({ done: 3, rows, failedRecords: failed, byDataset: { '1': 3 }, datasets: { '1': { batches: 3, rows, failedRecords: failed, ...(failed > 0 && { failedByReason: byReason }) } } });
  expect(after['index']).toEqual({ current: 'v000001', versions: ['v000001'] });
});

it('reports an unreachable broker, and one refusing the login, with the rest of the state, and exits 1, each with its reason', async () => {
  const down = spawnCcpipe(['status', '--data', data, '--rabbitmq', 'amqp://guest:guest@127.0.0.1:1']);
  expect((await down.exited).code).toBe(1);
  const downStatus = JSON.parse(down.stdout) as Record<string, any>;
  expect(downStatus['queue']).toMatchObject({ unreachable: true, error: expect.stringMatching(/^broker unreachable: .*ECONNREFUSED/) });
  expect(downStatus['batches']).toMatchObject({ done: 3 }); // the store's part is still read
  expect(down.text.join('')).toMatch(/ccpipe: the broker could not be used: broker unreachable: connect ECONNREFUSED 127\.0\.0\.1:1\n/);
  const refused = spawnCcpipe(['status', '--data', data, '--rabbitmq', 'amqp://guest:not-the-password@127.0.0.1:5672']);
  expect((await refused.exited).code).toBe(1);
  const error = (JSON.parse(refused.stdout) as Record<string, any>)['queue']['error'] as string;
  expect(error).toMatch(/^broker unreachable: .*ACCESS.REFUSED/);
  expect(error).not.toContain('not-the-password');
  expect(refused.text.join('')).not.toContain('not-the-password');
});

it('reports a queue nobody declared (no batcher or worker ran with that prefix, as after ccpipe run) as such', async () => {
  const unused = `${prefix}-never`;
  const p = spawnCcpipe(['status', '--data', data, '--queue-prefix', unused]);
  expect((await p.exited).code).toBe(0);
  const status = JSON.parse(p.stdout) as Record<string, any>;
  expect(status['queue']).toEqual({ name: `${unused}.batches`, error: expect.stringMatching(/^no queue .*\.batches on the broker: no batcher or worker has run with this --queue-prefix/) });
});

