import { Counter, Gauge, type Registry } from 'prom-client';
import type { RangeReaderObserver } from '@ccpipe/adapters';
import type { BatcherEvents } from './batcher';

/** The batcher's metrics on `registry`, and the hooks that feed them. Labels are closed sets. */
export function batcherMetrics(registry: Registry): { events: BatcherEvents; fetchObserver: RangeReaderObserver; planned: Gauge; checkpoint: Gauge; mode: Gauge } {
  const registers = [registry];
  const blocks = new Counter({ name: 'ccpipe_batcher_blocks_fetched_total', help: 'CDX blocks fetched and parsed', registers });
  const read = new Counter({ name: 'ccpipe_batcher_cdx_records_read_total', help: 'CDX lines read', registers });
  const kept = new Counter({ name: 'ccpipe_batcher_cdx_records_kept_total', help: 'CDX records kept by the filter', registers });
  const dropped = new Counter({ name: 'ccpipe_batcher_cdx_records_dropped_total', help: 'CDX records dropped, by reason', labelNames: ['reason'], registers });
  const published = new Counter({ name: 'ccpipe_batcher_batches_published_total', help: 'batches sent to the broker', registers });
  const confirmed = new Counter({ name: 'ccpipe_batcher_batches_confirmed_total', help: 'batches confirmed by the broker', registers });
  const returned = new Counter({ name: 'ccpipe_batcher_batches_returned_total', help: 'batches returned unroutable by the broker', registers });
  const retries = new Counter({ name: 'ccpipe_batcher_publish_retries_total', help: 'batch publishes retried, by error code', labelNames: ['code'], registers });
  const bytes = new Counter({ name: 'ccpipe_batcher_bytes_fetched_total', help: 'bytes received from the index server', registers });
  const requests = new Counter({ name: 'ccpipe_batcher_http_requests_total', help: 'HTTP requests sent (attempts)', registers });
  const httpRetries = new Counter({ name: 'ccpipe_batcher_http_retries_total', help: 'HTTP attempts retried, by status class', labelNames: ['status_class'], registers });
  const slowDowns = new Counter({ name: 'ccpipe_batcher_http_slowdowns_total', help: 'overload answers (503/429) from the server', registers });
  const failedBlocks = new Counter({ name: 'ccpipe_batcher_blocks_failed_total', help: 'CDX blocks skipped because they cannot be had for good, by error code', labelNames: ['code'], registers });
  const planned = new Gauge({ name: 'ccpipe_batcher_blocks_planned', help: 'blocks in this run plan', registers });
  const mode = new Gauge({ name: 'ccpipe_batcher_mode', help: 'the read mode of this run (1 for the mode in use: ranges or bulk)', labelNames: ['mode'], registers });
  const checkpoint = new Gauge({ name: 'ccpipe_batcher_checkpoint_blocks', help: 'plan blocks confirmed in order (checkpoint)', registers });
  return {
    planned,
    mode,
    checkpoint,
    events: {
      onBlock: (e) => {
        blocks.inc();
        read.inc(e.records);
        kept.inc(e.kept);
        for (const [reason, n] of Object.entries(e.dropped)) dropped.inc({ reason }, n);
      },
      onBatchPublished: () => published.inc(),
      onBatchConfirmed: () => confirmed.inc(),
      onPublishRetry: (code) => {
        retries.inc({ code });
        if (code === 'CCP_ERR_QUEUE_RETURNED') returned.inc();
      },
      onCheckpoint: (n) => checkpoint.set(n),
      onBlockFailed: (e) => failedBlocks.inc({ code: e.code }),
    },
    fetchObserver: {
      onRequest: () => requests.inc(),
      onRetry: (e) => httpRetries.inc({ status_class: e.statusClass }),
      onBytes: (n) => bytes.inc(n),
      onSlowDown: () => slowDowns.inc(),
    },
  };
}
