import { availableParallelism } from 'node:os';
import { hasCode, loadConfig, type ConfigKey } from '@ccpipe/core';
import {
  AmqpBatchConsumer,
  AmqpConnection,
  ExtractionPool,
  UndiciRangeReader,
  giveUpAfterRefusedMs,
  logBrokerEvent,
  closeDuckDbParquetEngine,
  declareTopology,
  openObjectStore,
  runService,
  topologyNames,
  writeParquetPart,
} from '@ccpipe/adapters';
import { workerMetrics } from './metrics';
import { startWorker } from './run-worker';
import { StoreIdentity } from './store-identity';
import { qualityOptionsOf } from './process-record';
import { extractionPorts, pageThreadPath } from './page-pool';

const USER_AGENT = 'ccpipe/0.1 (+https://github.com/ccpipe/ccpipe)';

/**
 * `ccpipe worker`: config → logger → metrics → adapters → consume until SIGTERM/SIGINT, then stop taking batches,
 * finish in-flight ones (or requeue them after the grace period) and exit 0. Exits 1 on a fatal local failure
 * (disk full, …) or when the broker is gone for good; unacked batches return to the queue.
 */

/** How long a stopping worker waits for the batches in hand (docker-compose.yml's stop_grace_period must exceed it). */
export const WORKER_DRAIN_MS = 30_000;
export async function workerMain(flags: Partial<Record<ConfigKey, unknown>>, env: NodeJS.ProcessEnv, opts: { graceMs?: number } = {}): Promise<number> {
  const config = loadConfig(env, flags);
  // a quality setting that cannot work stops the worker at start, naming each problem (not at its first document)
  const quality = qualityOptionsOf(config);
  return runService(
    { service: 'worker', logLevel: config.logLevel, metrics: { host: config.metricsHost, port: config.metricsPort ?? 9001 }, onSignal: (log, sig) => log.info({ sig }, 'draining') },
    async ({ log, registry, signal, defer }) => {
      const metrics = workerMetrics(registry);
      const store = openObjectStore(config.data, config);
      defer(() => store.close());
      const reader = new UndiciRangeReader({ baseUrl: config.baseUrl, connections: config.connections, userAgent: USER_AGENT, expectGzip: true, observer: metrics.fetch });
      defer(() => reader.close());
      // the worker's own thread script: it takes a record's bytes and does WARC/HTTP, charset and extraction there
      const pool = new ExtractionPool({
        size: config.extractThreads ?? Math.max(1, availableParallelism()), timeoutMs: config.extractTimeoutMs, dom: config.dom,
        onTimeoutRetry: metrics.extractTimeoutRetry, workerPath: pageThreadPath(),
      });
      await pool.start();
      defer(() => pool.close());
      defer(() => closeDuckDbParquetEngine());

      let gaveUp: (err: unknown) => void = () => undefined;
      const brokerGone = new Promise<unknown>((resolve) => (gaveUp = resolve));
      const connection = new AmqpConnection({
        url: config.rabbitmqUrl,
        name: 'ccpipe-worker',
        giveUpAfterRefusedMs: giveUpAfterRefusedMs(config.brokerGiveUpMs),
        onEvent: (e) => {
          if (e.type === 'gave-up') gaveUp(e.error);
          logBrokerEvent(log, e);
        },
      });
      defer(() => connection.close());
      try {
        await connection.start(signal);
      } catch (err) {
        // stopped while the broker could not be reached (down, or refusing the login): nothing was taken, nothing to drain
        if (signal.aborted) return 0;
        // refused for --broker-give-up-ms: logged with what to check ('broker unusable: stopping')
        if (hasCode(err, 'CCP_ERR_QUEUE_REFUSED')) return 1;
        throw err;
      }
      const names = topologyNames(config.queuePrefix);
      const ch = await connection.createChannel();
      await declareTopology(ch, names);
      await ch.close();
      const consumer = new AmqpBatchConsumer({
        connection,
        names,
        prefetch: config.prefetch,
        onEvent: (e) => {
          if (e.type === 'gave-up') gaveUp(e.error);
          else if (e.type !== 'subscribed') log.warn({ event: e.type }, 'consumer');
        },
      });
      defer(() => consumer.close());

      const worker = await startWorker(
        consumer,
        {
          reader,
          store,
          ...extractionPorts(pool, () => metrics.extractSeconds.startTimer()),
          writePart: (rows) => writeParquetPart(rows, { engine: config.parquetEngine, includeText: config.includeText, rowGroupSize: config.rowGroupSize }),
          events: metrics.batch,
        },
        // a batch published for another data store is dead-lettered before anything is written (store-identity.ts)
        { concurrency: config.concurrency, includeText: config.includeText, extract: config.extract, quality, identity: new StoreIdentity(store) },
        {
          onBatchDone: (e) => {
            metrics.worker.onBatchDone?.(e);
            const fields = { batchId: e.batchId, rows: e.marker.rows, failed: e.marker.failed, skipped: e.skipped, redelivered: e.redelivered, ms: e.ms };
            // records that could not be indexed (by error code) must not read like a clean batch
            if (e.marker.failed > 0) log.warn({ ...fields, failures: e.marker.failures }, 'batch done, with records failed');
            else log.info(fields, 'batch done');
          },
          onBatchFailed: (e) => {
            metrics.worker.onBatchFailed?.(e);
            log.warn({ batchId: e.batchId, action: e.action, reason: e.reason, err: e.error }, 'batch failed');
          },
        },
      );
      log.info({ prefetch: config.prefetch, concurrency: config.concurrency, queue: names.queue }, 'consuming');

      const stopped = new Promise<'signal'>((resolve) => signal.addEventListener('abort', () => resolve('signal'), { once: true }));
      const why = await Promise.race([stopped, worker.crashed.then((err) => ({ crash: err })), brokerGone.then((err) => ({ broker: err }))]);
      await worker.drain(opts.graceMs ?? WORKER_DRAIN_MS);
      if (why === 'signal') {
        log.info('drained');
        return 0;
      }
      // a broker that refused for --broker-give-up-ms was logged with what to check when the connection gave up
      if ('broker' in why && hasCode(why.broker, 'CCP_ERR_QUEUE_REFUSED')) return 1;
      log.error({ err: 'crash' in why ? why.crash : why.broker }, 'worker stopping on a fatal failure');
      return 1;
    },
  );
}
