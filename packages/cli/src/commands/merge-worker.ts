import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { Counter, type Registry } from 'prom-client';
import { hasCode, loadConfig, type Config, type ConfigKey, type ObjectStore } from '@ccpipe/core';
import {
  AmqpBatchConsumer,
  AmqpBatchPublisher,
  AmqpConnection,
  declareTopology,
  giveUpAfterRefusedMs,
  localStoreDir,
  logBrokerEvent,
  mergeTaskTopologyNames,
  openObjectStore,
  runService,
  type Logger,
} from '@ccpipe/adapters';
import { queueTaskRunner, startMergeWorker, type MergeTaskRunner } from '@ccpipe/index';
import { STORE_KEYS, addConfigFlags, configFlagsOf } from './config-flags';

const MERGE_WORKER: ConfigKey[] = [...STORE_KEYS, 'logLevel', 'rabbitmqUrl', 'brokerGiveUpMs', 'queuePrefix', 'metricsPort', 'metricsHost'];

/**
 * A merge-worker task's DuckDB memory limit by default. Above the merger's 256MB: a stage task (a slice of ≈ 500k new
 * rows written out by lake group) took 38 % less time with 1GB on the 5M-row bench (stage phase medians of 3 alternated
 * runs, 24.9 s against 40.1 s: docs/merge-tasks.md). A
 * merge-worker is a process of its own, one task at a time; `--memory-limit` sets it.
 */
export const MERGE_WORKER_MEMORY_LIMIT = '1GB';

/** The merge-worker's /metrics port by default (batcher 9000, worker 9001, merger 9002). */
export const MERGE_WORKER_METRICS_PORT = 9003;

/**
 * `ccpipe merge-worker`: runs the lake-writing tasks of distributed merges (`ccpipe merge --distribute`,
 * docs/merge-tasks.md) from the `<prefix>.merge-tasks` queue, one at a time, until SIGTERM (the task in hand finishes
 * first). Scale it like workers. Each task gets a DuckDB of its own (one thread, `--memory-limit`, default
 * {@link MERGE_WORKER_MEMORY_LIMIT}).
 */
export function registerMergeWorkerCommand(program: Command): void {
  addConfigFlags(program.command('merge-worker').description('run the lake-writing tasks of distributed merges (ccpipe merge --distribute) from the merge-task queue'), MERGE_WORKER)
    .option('--memory-limit <size>', `DuckDB memory limit per task, e.g. '512MB' (default ${MERGE_WORKER_MEMORY_LIMIT}; it spills to --tmp-dir beyond it)`)
    .option('--tmp-dir <dir>', 'where a task keeps its local copies and spill (default: the system temp dir)')
    .action(async (opts: Record<string, unknown>) => {
      const config = loadConfig(process.env, configFlagsOf(opts, MERGE_WORKER));
      process.exitCode = await mergeWorkerMain(config, { ...(typeof opts['memoryLimit'] === 'string' && { memoryLimit: opts['memoryLimit'] }), tmpDir: typeof opts['tmpDir'] === 'string' ? opts['tmpDir'] : tmpdir() });
    });
}

/** The merge-worker's metrics on `registry` (closed-set labels). */
export function mergeWorkerMetrics(registry: Registry): { tasks: Counter } {
  const tasks = new Counter({ name: 'ccpipe_merge_worker_tasks_total', help: 'merge tasks handled, by outcome (done, requeue, dead-letter)', labelNames: ['outcome'], registers: [registry] });
  for (const outcome of ['done', 'requeue', 'dead-letter']) tasks.inc({ outcome }, 0);
  return { tasks };
}

/** The service: config → logger → metrics → broker → consume until a signal. Resolves to the exit code. */
export function mergeWorkerMain(config: Config, opts: { memoryLimit?: string; tmpDir: string }): Promise<number> {
  return runService(
    { service: 'merge-worker', logLevel: config.logLevel, metrics: { host: config.metricsHost, port: config.metricsPort ?? MERGE_WORKER_METRICS_PORT }, onSignal: (log, sig) => log.info({ sig }, 'draining') },
    async ({ log, registry, signal, defer }) => {
      const { tasks } = mergeWorkerMetrics(registry);
      const store = openObjectStore(config.data, config);
      defer(() => store.close());
      const connection = await brokerConnection(config, log, 'ccpipe-merge-worker', signal);
      if (typeof connection === 'number') return connection;
      defer(() => connection.close());
      const names = mergeTaskTopologyNames(config.queuePrefix);
      const ch = await connection.createChannel();
      await declareTopology(ch, names);
      await ch.close();
      const consumer = new AmqpBatchConsumer({ connection, names, prefetch: 1, onEvent: (e) => e.type !== 'subscribed' && log.warn({ event: e.type }, 'consumer') });
      const dataDir = localStoreDir(config.data);
      const own = join(opts.tmpDir, `ccpipe-merge-worker-${process.pid}`);
      defer(() => rm(own, { recursive: true, force: true })); // each task removes its own folder; this one goes at exit
      const worker = await startMergeWorker(consumer, store, { tmpDir: own, ...(dataDir !== undefined && { dataDir }), memoryLimit: opts.memoryLimit ?? MERGE_WORKER_MEMORY_LIMIT }, {
        onTaskDone: (e) => {
          tasks.inc({ outcome: 'done' });
          log.info(e, 'merge task done');
        },
        onTaskFailed: (e) => {
          tasks.inc({ outcome: e.action });
          log.warn({ task: e.task, action: e.action, code: e.code, err: e.error }, 'merge task failed');
        },
      });
      log.info({ queue: names.queue }, 'consuming');
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      await worker.drain();
      log.info('drained');
      return 0;
    },
  );
}

/** A started broker connection, or the exit code when the broker cannot be had (130 on a signal, 1 refused). */
async function brokerConnection(config: Config, log: Logger, name: string, signal: AbortSignal): Promise<AmqpConnection | number> {
  const connection = new AmqpConnection({ url: config.rabbitmqUrl, name, giveUpAfterRefusedMs: giveUpAfterRefusedMs(config.brokerGiveUpMs), onEvent: (e) => logBrokerEvent(log, e) });
  try {
    await connection.start(signal);
    return connection;
  } catch (err) {
    await connection.close().catch(() => undefined);
    if (signal.aborted) return 130;
    if (hasCode(err, 'CCP_ERR_QUEUE_REFUSED')) return 1;
    throw err;
  }
}

/**
 * The task runner of `ccpipe merge --distribute`: per merge, a broker connection that publishes the merge's tasks on
 * the merge-task queue; the results come back through the data store (merge-task-queue.ts).
 */
export function distributedTaskRunner(config: Config, store: ObjectStore, log: Logger): MergeTaskRunner {
  return {
    run: async (list, signal) => {
      const connection = new AmqpConnection({ url: config.rabbitmqUrl, name: 'ccpipe-merge', reconnect: { maxAttempts: 5 }, onEvent: (e) => logBrokerEvent(log, e) });
      await connection.start(signal);
      try {
        const names = mergeTaskTopologyNames(config.queuePrefix);
        const ch = await connection.createChannel();
        await declareTopology(ch, names);
        await ch.close();
        log.info({ queue: names.queue }, 'publishing merge tasks for the merge-workers as they are made');
        return await queueTaskRunner({
          store,
          publisher: () => new AmqpBatchPublisher({ connection, names, confirmTimeoutMs: 30_000 }),
          onResult: (_r, done, of) => log.debug({ done, of }, 'merge task reported'),
        }).run(list, signal);
      } finally {
        await connection.close();
      }
    },
  };
}
