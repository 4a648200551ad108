import { Counter, Histogram, type Registry } from 'prom-client';
import type { ExtractionPoolOptions, RangeReaderObserver } from '@ccpipe/adapters';
import type { BatchEvents } from './process-batch';
import type { WorkerEvents } from './run-worker';

/** The worker's metrics on `registry`, and the hooks that feed them. Labels are closed sets, never URLs or hosts. */
export function workerMetrics(registry: Registry): {
  batch: BatchEvents;
  worker: WorkerEvents;
  fetch: RangeReaderObserver;
  extractSeconds: Histogram;
  /** For ExtractionPool's `onTimeoutRetry`: how each document retried after a timeout ended. */
  extractTimeoutRetry: NonNullable<ExtractionPoolOptions['onTimeoutRetry']>;
} {
  const registers = [registry];
  const batchesDone = new Counter({ name: 'ccpipe_worker_batches_done_total', help: 'batches completed (marker written)', registers });
  const batchesSkipped = new Counter({ name: 'ccpipe_worker_batches_skipped_total', help: 'batches already complete on delivery (marker found)', registers });
  const redelivered = new Counter({ name: 'ccpipe_worker_batches_redelivered_total', help: 'deliveries that were redeliveries', registers });
  const deadLettered = new Counter({ name: 'ccpipe_worker_batches_dead_lettered_total', help: 'batches sent to the DLQ, by reason', labelNames: ['reason'], registers });
  const requeued = new Counter({ name: 'ccpipe_worker_batches_requeued_total', help: 'batches returned to the queue, by reason', labelNames: ['reason'], registers });
  const indexed = new Counter({ name: 'ccpipe_worker_records_indexed_total', help: 'records written to a part without failure', registers });
  const failed = new Counter({ name: 'ccpipe_worker_records_failed_total', help: 'records that failed, by reason', labelNames: ['reason'], registers });
  const dropped = new Counter({
    name: 'ccpipe_worker_documents_dropped_total', help: 'documents a quality filter dropped, by filter (kept as rows only with --keep-dropped)', labelNames: ['filter'], registers,
  });
  const bytes = new Counter({ name: 'ccpipe_worker_bytes_fetched_total', help: 'WARC bytes received', registers });
  const requests = new Counter({ name: 'ccpipe_worker_http_requests_total', help: 'HTTP requests sent (attempts)', registers });
  const retries = new Counter({ name: 'ccpipe_worker_http_retries_total', help: 'HTTP attempts retried, by status class', labelNames: ['status_class'], registers });
  const slowDowns = new Counter({ name: 'ccpipe_worker_http_slowdowns_total', help: 'overload answers (503/429) from the server', registers });
  // requests and bytes per kept record, by how records are read: rate(requests) / rate(records) per mode
  const sourceRecords = new Counter({ name: 'ccpipe_worker_source_records_total', help: 'kept records handled, by read mode (ranges: a request each; bulk: cut from a WARC file stream)', labelNames: ['mode'], registers });
  const sourceRequests = new Counter({ name: 'ccpipe_worker_source_requests_total', help: 'requests for WARC bytes, by read mode (retried attempts not counted)', labelNames: ['mode'], registers });
  const sourceBytes = new Counter({ name: 'ccpipe_worker_source_bytes_total', help: 'WARC bytes read for kept records, by read mode', labelNames: ['mode'], registers });
  for (const mode of ['ranges', 'bulk'] as const) for (const c of [sourceRecords, sourceRequests, sourceBytes]) c.inc({ mode }, 0);
  const rows = new Counter({ name: 'ccpipe_worker_parquet_rows_written_total', help: 'rows written to Parquet parts', registers });
  const partBytes = new Counter({ name: 'ccpipe_worker_parquet_bytes_written_total', help: 'bytes of Parquet parts written', registers });
  const batchSeconds = new Histogram({ name: 'ccpipe_worker_batch_seconds', help: 'time to process one batch', buckets: [0.5, 1, 2, 5, 10, 20, 40, 80, 160, 320], registers });
  const extractSeconds = new Histogram({ name: 'ccpipe_worker_extraction_seconds', help: 'time to extract one page', buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers });
  const timeoutRetries = new Counter({
    name: 'ccpipe_worker_extraction_timeout_retries_total',
    help: 'documents tried again after running past the extraction time limit, by outcome (ok, timeout, failed)',
    labelNames: ['outcome'],
    registers,
  });
  // every outcome from the start, so a rate over a series that has not happened yet reads 0, not "no data"
  for (const outcome of ['ok', 'timeout', 'failed'] as const) timeoutRetries.inc({ outcome }, 0);
  return {
    extractSeconds,
    extractTimeoutRetry: (outcome) => timeoutRetries.inc({ outcome }),
    batch: {
      onRecord: (e) => {
        sourceRecords.inc({ mode: e.mode });
        if (e.mode === 'ranges' && e.bytes > 0) {
          sourceRequests.inc({ mode: 'ranges' });
          sourceBytes.inc({ mode: 'ranges' }, e.bytes);
        }
        if (e.dropped !== undefined) dropped.inc({ filter: e.dropped });
        if (!e.ok) failed.inc({ reason: e.reason ?? 'unknown' });
        else if (e.row !== false) indexed.inc();
      },
      onSourceRead: (e) => {
        if (e.requests > 0) sourceRequests.inc({ mode: 'bulk' }, e.requests);
        if (e.bytes > 0) sourceBytes.inc({ mode: 'bulk' }, e.bytes);
      },
      onPartWritten: (e) => {
        rows.inc(e.rows);
        partBytes.inc(e.bytes);
      },
    },
    worker: {
      onBatchDone: (e) => {
        if (e.redelivered) redelivered.inc();
        if (e.skipped) batchesSkipped.inc();
        else {
          batchesDone.inc();
          batchSeconds.observe(e.ms / 1000);
        }
      },
      onBatchFailed: (e) => {
        if (e.action === 'dead-letter') deadLettered.inc({ reason: e.reason });
        else requeued.inc({ reason: e.reason });
      },
    },
    fetch: {
      onRequest: () => requests.inc(),
      onRetry: (e) => retries.inc({ status_class: e.statusClass }),
      onBytes: (n) => bytes.inc(n),
      onSlowDown: () => slowDowns.inc(),
    },
  };
}
