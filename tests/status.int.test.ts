/** `ccpipe status` (the built binary) against the real RabbitMQ and a data store the real worker code wrote. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { emptyDatasetRegistry, ensureDatasetIn, extractDocument, layout, serializeDatasetRegistry } from '@ccpipe/core';
import { AmqpBatchPublisher, AmqpConnection, FsObjectStore, closeDuckDbParquetEngine, declareTopology, deleteTopology, topologyNames, writeParquetPart } from '@ccpipe/adapters';
import { processBatch } from '@ccpipe/worker';
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
  for (const b of done) {
    const { marker } = await processBatch(
      b,
      { reader: devReader(), store, extract: async (html, url) => extractDocument(html, { url }), writePart: (r) => writeParquetPart(r) },
      { concurrency: 4, includeText: false },
    );
    rows += marker.rows;
  }
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
  expect(status['batches']).toEqual({ done: done.length, rows, failedRecords: 0, byDataset: { '1': done.length } });
  expect(status['index']).toEqual({ current: null, versions: [] });
  expect(status['datasets']).toEqual([{ id: 1, name: crawl, crawl }]);
});

it('reports an unreachable broker instead of failing', async () => {
  const p = spawnCcpipe(['status', '--data', data, '--rabbitmq', 'amqp://guest:guest@127.0.0.1:1']);
  expect((await p.exited).code).toBe(0);
  const status = JSON.parse(p.stdout) as Record<string, any>;
  expect(status['queue']['error']).toEqual(expect.any(String));
});

it('reports a queue nobody declared (no batcher or worker ran with that prefix, as after ccpipe run) as such', async () => {
  const unused = `${prefix}-never`;
  const p = spawnCcpipe(['status', '--data', data, '--queue-prefix', unused]);
  expect((await p.exited).code).toBe(0);
  const status = JSON.parse(p.stdout) as Record<string, any>;
  expect(status['queue']).toEqual({ name: `${unused}.batches`, error: expect.stringMatching(/^no queue .*\.batches on the broker: no batcher or worker has run with this --queue-prefix/) });
});

