import type { Command } from 'commander';
import { kindOf, layout, loadConfig, parseDatasetRegistry, type ConfigKey, type ObjectStore, type QueueDepth } from '@ccpipe/core';
import { AmqpConnection, amqpQueueDepth, openObjectStore, topologyNames } from '@ccpipe/adapters';
import { ingestTotals, readManifest } from '@ccpipe/index';
import { readIngestFacts, readModeOf } from '@ccpipe/api';
import { STORE_KEYS, addConfigFlags, configFlagsOf } from './config-flags';

const STATUS: ConfigKey[] = [...STORE_KEYS, 'rabbitmqUrl', 'queuePrefix'];

/** How a crawl's batcher reads it (docs/bulk.md), from its checkpoint: the mode, and what was asked and why. */
export type DatasetRead = ReturnType<typeof readModeOf>;

/** The pipeline as an operator sees it. */
export interface PipelineStatus {
  /**
   * The work queue's depth, or why it could not be read: `unreachable` when the broker itself could not be used (down,
   * refusing the login, a wrong address), so `ccpipe status` exits 1; absent for a queue nobody declared yet.
   */
  queue: (QueueDepth & { name: string }) | { name: string; error: string; unreachable?: true };
  /** Totals, `byDataset` (batches per dataset id, as before) and `datasets` (batches, rows and failed records per dataset id). */
  batches: {
    done: number; rows: number; failedRecords: number; byDataset: Record<string, number>;
    datasets: Record<string, { batches: number; rows: number; failedRecords: number; failedByReason?: Record<string, number>; droppedByFilter?: Record<string, number> }>;
  };
  index: { current: string | null; versions: string[] };
  datasets: { id: number; name: string; crawl: string | null; kind: 'crawl' | 'import'; sources?: string[]; read?: DatasetRead }[];
}

/**
 * Completed batches (markers) in the store, in total and per dataset: the current index version's totals plus the
 * markers it does not hold yet (`ingestTotals`), so a whole crawl's batches are not read one by one.
 */
async function batchesOf(store: ObjectStore): Promise<PipelineStatus['batches']> {
  const out: PipelineStatus['batches'] = { done: 0, rows: 0, failedRecords: 0, byDataset: {}, datasets: {} };
  for (const t of await ingestTotals(store)) {
    out.done += t.batches;
    out.rows += t.rows;
    out.failedRecords += t.failed;
    out.byDataset[String(t.datasetId)] = t.batches;
    out.datasets[String(t.datasetId)] = { batches: t.batches, rows: t.rows, failedRecords: t.failed, ...(t.failures !== undefined && { failedByReason: t.failures }), ...(t.dropped !== undefined && { droppedByFilter: t.dropped }) };
  }
  return out;
}

/**
 * Reads the pipeline state: queue depth and DLQ from the broker (an unreachable broker is reported in `queue`, and
 * the rest is still read),
 * completed batches from the data store, the index version from its manifest, the dataset registry.
 */
export async function pipelineStatus(opts: { store: ObjectStore; rabbitmqUrl: string; queuePrefix: string }): Promise<PipelineStatus> {
  const names = topologyNames(opts.queuePrefix);
  let queue: PipelineStatus['queue'];
  const conn = new AmqpConnection({ url: opts.rabbitmqUrl, name: 'ccpipe-status', reconnect: { maxAttempts: 1 }, connectTimeoutMs: 5000 });
  try {
    await conn.start();
    queue = { name: names.queue, ...(await amqpQueueDepth(conn, names)) };
  } catch (err) {
    // 'broker unreachable' alone reads the same for a broker that is down and one refusing the login: say why
    const firstLine = (e: unknown): string => (e instanceof Error ? e.message.split('\n')[0]! : String(e));
    const cause = err instanceof Error && err.cause !== undefined ? `: ${firstLine(err.cause)}` : '';
    const message = firstLine(err) + cause;
    // the broker answers 404 NOT_FOUND for a queue nobody declared: no batcher or worker ran with this prefix
    // (`ccpipe run` queues in process), which is a state to report, not a broker failure
    queue = /\b404\b|NOT.FOUND/.test(message)
      ? { name: names.queue, error: `no queue ${names.queue} on the broker: no batcher or worker has run with this --queue-prefix (ccpipe run uses none)` }
      : { name: names.queue, error: message, unreachable: true };
  } finally {
    await conn.close().catch(() => undefined);
  }
  const manifest = await readManifest(opts.store);
  const reg = await opts.store.get(layout.datasetRegistry());
  // the batcher checkpoints, as /v1/status reads them
  const checkpoints = new Map((await readIngestFacts(opts.store)).map((f) => [f.id, f.checkpoint]));
  return {
    queue,
    batches: await batchesOf(opts.store),
    index: { current: manifest.current, versions: manifest.versions.map((v) => v.version) },
    datasets: reg ? parseDatasetRegistry(reg).datasets.map((d) => {
      const cp = kindOf(d) === 'crawl' ? checkpoints.get(d.id) : undefined;
      return { id: d.id, name: d.name, crawl: d.crawl, kind: kindOf(d), ...(d.sources !== undefined && { sources: d.sources }), ...(cp !== undefined && { read: readModeOf(cp) }) };
    }) : [],
  };
}

/** `ccpipe status`: one JSON object with the pipeline state, for an operator or a script. */
export function registerStatusCommand(program: Command, io: { write(line: string): void } = { write: (l) => process.stdout.write(l) }): void {
  addConfigFlags(program.command('status').description('print the pipeline state: queue depth and DLQ, batches done, index version, datasets'), STATUS).action(
    async (opts: Record<string, unknown>) => {
      const config = loadConfig(process.env, configFlagsOf(opts, STATUS));
      const store = openObjectStore(config.data, config);
      const status = await pipelineStatus({ store, rabbitmqUrl: config.rabbitmqUrl, queuePrefix: config.queuePrefix }).finally(() => store.close());
      io.write(JSON.stringify(status, null, 2) + '\n');
      // the rest of the state is still printed, but a script or a healthcheck must see that the broker is not usable
      if ('unreachable' in status.queue) {
        process.stderr.write(`ccpipe: the broker could not be used: ${status.queue.error}\n`);
        process.exitCode = 1;
      }
    },
  );
}
