import type { Channel } from 'amqplib';

/** Names of the queue objects for one prefix (`ccpipe` in production, `ccpipe-test-<random>` in tests). */
export interface QueueTopologyNames {
  /** Work queue: durable quorum queue the batcher publishes to and workers consume from. */
  readonly queue: string;
  /** Fanout exchange the work queue dead-letters into. */
  readonly deadLetterExchange: string;
  /** Durable quorum queue bound to the dead-letter exchange. */
  readonly deadLetterQueue: string;
  /** Returns exhausting this many redeliveries send a message to the DLQ (see {@link DEFAULT_DELIVERY_LIMIT}). */
  readonly deliveryLimit: number;
}

/**
 * The delivery limit of rabbitmq/definitions.json. RabbitMQ 3.10 has no default and counts crash and
 * channel-close returns too, so it is set explicitly and high enough that a few worker kills do not
 * dead-letter a good batch. With limit L a message is delivered at most L + 1 times.
 */
export const DEFAULT_DELIVERY_LIMIT = 10;

/** The production prefix, matching rabbitmq/definitions.json. */
export const DEFAULT_QUEUE_PREFIX = 'ccpipe';

/**
 * Names for `prefix`: `<prefix>.batches`, `<prefix>.batches.dlx`, `<prefix>.batches.dlq`.
 * Throws RangeError on a prefix that is empty, over 200 bytes or has characters outside [A-Za-z0-9._-].
 */
export function topologyNames(prefix: string = DEFAULT_QUEUE_PREFIX, deliveryLimit: number = DEFAULT_DELIVERY_LIMIT): QueueTopologyNames {
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(prefix)) throw new RangeError('queue prefix must match [A-Za-z0-9._-]{1,200}');
  if (!Number.isInteger(deliveryLimit) || deliveryLimit < 0) throw new RangeError('deliveryLimit must be an integer ≥ 0');
  const queue = `${prefix}.batches`;
  return { queue, deadLetterExchange: `${queue}.dlx`, deadLetterQueue: `${queue}.dlq`, deliveryLimit };
}

/**
 * Names of the merge-task queue (merge across machines, docs/merge-tasks.md): `<prefix>.merge-tasks`, its `.dlx` and
 * `.dlq`; quorum, with a delivery limit, like the batches'. Throws RangeError on a bad prefix.
 */
export function mergeTaskTopologyNames(prefix: string = DEFAULT_QUEUE_PREFIX, deliveryLimit: number = DEFAULT_DELIVERY_LIMIT): QueueTopologyNames {
  const batches = topologyNames(prefix, deliveryLimit);
  const queue = `${prefix}.merge-tasks`;
  return { ...batches, queue, deadLetterExchange: `${queue}.dlx`, deadLetterQueue: `${queue}.dlq` };
}

/** The arguments of the work queue, exactly as in rabbitmq/definitions.json for the default names. */
export function workQueueArguments(names: QueueTopologyNames): Record<string, unknown> {
  return {
    'x-queue-type': 'quorum',
    'x-delivery-limit': names.deliveryLimit,
    'x-dead-letter-exchange': names.deadLetterExchange,
  };
}

/** The arguments of the dead-letter queue. */
export function deadLetterQueueArguments(): Record<string, unknown> {
  return { 'x-queue-type': 'quorum' };
}

/**
 * Declares the exchange, both queues and the binding. Idempotent: declaring again with the same arguments is a
 * no-op on the broker. Rejects (and the broker closes `channel`, 406 PRECONDITION_FAILED) when a queue already
 * exists with different arguments — so use a throwaway channel if you want to survive that.
 */
export async function declareTopology(channel: Channel, names: QueueTopologyNames): Promise<void> {
  await channel.assertExchange(names.deadLetterExchange, 'fanout', { durable: true, autoDelete: false, internal: false });
  await channel.assertQueue(names.deadLetterQueue, { durable: true, autoDelete: false, arguments: deadLetterQueueArguments() });
  await channel.assertQueue(names.queue, { durable: true, autoDelete: false, arguments: workQueueArguments(names) });
  await channel.bindQueue(names.deadLetterQueue, names.deadLetterExchange, '');
}

/** Deletes what {@link declareTopology} made, messages included. For tests and teardown; never for production names. */
export async function deleteTopology(channel: Channel, names: QueueTopologyNames): Promise<void> {
  await channel.deleteQueue(names.queue);
  await channel.deleteQueue(names.deadLetterQueue);
  await channel.deleteExchange(names.deadLetterExchange);
}
