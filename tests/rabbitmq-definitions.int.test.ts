/**
 * rabbitmq/definitions.json loaded into the real local broker, the way the compose broker loads it at boot: queues,
 * exchanges and bindings are imported through the management API into a throwaway vhost (users are not imported: this
 * broker is shared, and rabbitmq/users.json only matters inside the compose network). Then the code's own topology
 * declaration must agree with what was imported, and a batch that keeps failing must end up in the DLQ.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import * as amqp from 'amqplib';
import { declareTopology, mergeTaskTopologyNames, topologyNames } from '@ccpipe/adapters';
import { REPO_ROOT } from './support/corpus';
import { inCi } from './support/ci';
import { waitFor } from './support/processes';

const MGMT = 'http://127.0.0.1:15672/api';
const AUTH = `Basic ${Buffer.from('guest:guest').toString('base64')}`;
const vhost = `ccpipe-defs-${randomBytes(4).toString('hex')}`;

async function mgmt(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${MGMT}${path}`, {
    method,
    headers: { authorization: AUTH, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function managementUp(): Promise<boolean> {
  try {
    return (await mgmt('GET', '/overview')).ok;
  } catch {
    return false;
  }
}

interface Definitions {
  vhosts: { name: string }[];
  exchanges: Record<string, unknown>[];
  queues: ({ name: string; arguments: Record<string, unknown> } & Record<string, unknown>)[];
  bindings: Record<string, unknown>[];
}

const defs = JSON.parse(readFileSync(join(REPO_ROOT, 'rabbitmq', 'definitions.json'), 'utf8')) as Definitions;
/** The vhost-scoped part of the file (the per-vhost import takes objects without their `vhost` field). */
const forVhost = (items: Record<string, unknown>[]) => items.map(({ vhost: _v, ...rest }) => rest);

let up = false;
beforeAll(async () => {
  up = await managementUp();
  if (!up && inCi()) throw new Error('the RabbitMQ management API is not reachable on 127.0.0.1:15672 (.ci/run enables rabbitmq_management)');
  if (!up) return;
  expect((await mgmt('PUT', `/vhosts/${encodeURIComponent(vhost)}`)).status).toBeLessThan(300);
  expect((await mgmt('PUT', `/permissions/${encodeURIComponent(vhost)}/guest`, { configure: '.*', write: '.*', read: '.*' })).status).toBeLessThan(300);
});

afterAll(async () => {
  if (up) await mgmt('DELETE', `/vhosts/${encodeURIComponent(vhost)}`);
});

it('imports into the live broker, agrees with the code topology, and dead-letters a batch after the delivery limit', async () => {
  if (!up) {
    console.warn('skipped: RabbitMQ management API not reachable (enable rabbitmq_management)');
    return;
  }
  const imported = await mgmt('POST', `/definitions/${encodeURIComponent(vhost)}`, {
    exchanges: forVhost(defs.exchanges), queues: forVhost(defs.queues), bindings: forVhost(defs.bindings),
  });
  expect(imported.status).toBeLessThan(300);

  const queues = (await (await mgmt('GET', `/queues/${encodeURIComponent(vhost)}`)).json()) as { name: string; arguments: Record<string, unknown>; type: string }[];
  expect(queues.map((q) => q.name).sort()).toEqual(defs.queues.map((q) => q.name).sort());
  for (const q of defs.queues) expect(queues.find((x) => x.name === q.name)?.arguments).toEqual(q.arguments);

  const names = topologyNames();
  const conn = await amqp.connect(`amqp://guest:guest@127.0.0.1:5672/${encodeURIComponent(vhost)}`);
  try {
    // What workers and the batcher declare at start must be a no-op on the imported objects (a mismatch is a 406
    // PRECONDITION_FAILED that closes the channel).
    const ch = await conn.createChannel();
    await declareTopology(ch, names);
    await declareTopology(ch, mergeTaskTopologyNames()); // the merge coordinator's and merge-workers' too

    // A batch every worker rejects is delivered deliveryLimit + 1 times, then dead-lettered into the DLQ.
    await ch.prefetch(1);
    ch.sendToQueue(names.queue, Buffer.from('poison'), { persistent: true, messageId: 'poison-1' });
    let deliveries = 0;
    await ch.consume(names.queue, (m) => {
      if (m === null) return;
      deliveries += 1;
      ch.nack(m, false, true);
    });
    const dead = await waitFor('message in the DLQ', async () => {
      const got = await ch.get(names.deadLetterQueue, { noAck: true });
      return got === false ? null : got;
    }, 30_000, 100) as amqp.GetMessage;
    expect(dead.content.toString()).toBe('poison');
    expect(dead.properties.messageId).toBe('poison-1');
    expect(deliveries).toBe(names.deliveryLimit + 1);
    await ch.close();
  } finally {
    await conn.close();
  }
}, 60_000);
