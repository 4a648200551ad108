import { Registry, collectDefaultMetrics } from 'prom-client';
import { CcpError } from '@ccpipe/core';
import { startMetricsServer } from '@ccpipe/adapters';
import { mergeMetrics, type MergeMetrics } from './merge-metrics';

/** The /metrics endpoint of a one-off `ccpipe merge` (see {@link serveOneOffMergeMetrics}). */
export interface OneOffMergeMetrics {
  metrics: MergeMetrics;
  /** The port actually bound (useful with port 0). */
  port: number;
  /** Stops serving; idempotent. */
  close(): Promise<void>;
}

/**
 * For a one-off `ccpipe merge` given `--metrics-port` (or CCPIPE_METRICS_PORT): the merger service's `ccpipe_merge_*`
 * metrics and Node's process metrics on its own registry, served on `GET /metrics` (and `/healthz`) while the merge
 * runs, so a long merge (a `--compact` or `--rescan` of a whole crawl) can be watched. Resolves to null when no port
 * is set (a one-off merge serves nothing by default).
 * @throws CcpError CCP_ERR_CONFIG naming the address when the port cannot be bound (before anything is merged).
 */
export async function serveOneOffMergeMetrics(opts: { host: string; port: number | undefined }): Promise<OneOffMergeMetrics | null> {
  if (opts.port === undefined) return null;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = mergeMetrics(registry);
  try {
    const server = await startMetricsServer(registry, { host: opts.host, port: opts.port });
    return { metrics, port: server.port, close: () => server.close() };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new CcpError('CCP_ERR_CONFIG', `cannot serve metrics on ${opts.host}:${opts.port} (${code}): choose another --metrics-port (CCPIPE_METRICS_PORT) or leave it out`, { cause: err });
  }
}
