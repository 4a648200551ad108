import { Registry, collectDefaultMetrics } from 'prom-client';
import { createLogger, type Logger } from './logger';
import { startMetricsServer, type MetricsServer } from './metrics-server';
import { shutdownSignal } from './shutdown';

/** What a service's body gets from {@link runService}. */
export interface ServiceRuntime {
  log: Logger;
  /** The service's metric registry (never prom-client's global one). */
  registry: Registry;
  /** Aborts on the first SIGINT/SIGTERM. */
  signal: AbortSignal;
  /** Registers a resource to close when the service ends; closed in reverse order of registration. */
  defer(close: () => Promise<unknown>): void;
}

/**
 * The lifecycle every long-running service shares: root logger → metric registry → /metrics server (port 0 = any
 * free port; none when `metrics` is null) → signal handling → the body → close everything in reverse order, whatever happened. Resolves to the
 * body's exit code, or 1 when it threw (the error is logged under `err`).
 *
 * With `metrics.finalScrapeMs` > 0 the /metrics server outlives the body's resources until one scrape has read the
 * final values, at most that long, unless a signal stopped the service: a short-lived service (the batcher) exits
 * between two scrapes otherwise, and its last counts never reach Prometheus.
 */
export async function runService(
  opts: {
    service: string;
    logLevel: string;
    /** null when the service serves `registry` itself (the API does, on its own port). */
    metrics: { host: string; port: number; finalScrapeMs?: number } | null;
    onSignal?: (log: Logger, sig: NodeJS.Signals) => void;
  },
  body: (rt: ServiceRuntime) => Promise<number>,
): Promise<number> {
  const log = createLogger({ service: opts.service, level: opts.logLevel });
  const registry = new Registry();
  // Node's process metrics (CPU, resident memory, heap, event-loop lag, open handles) beside the service's own
  collectDefaultMetrics({ register: registry });
  const shutdown = shutdownSignal((sig) => (opts.onSignal ? opts.onSignal(log, sig) : log.info({ sig }, 'stopping')));
  const closers: (() => Promise<unknown>)[] = [];
  let metrics: MetricsServer | undefined;
  try {
    if (opts.metrics) {
      metrics = await startMetricsServer(registry, opts.metrics);
      log.info({ port: metrics.port }, 'metrics listening');
    }
    return await body({ log, registry, signal: shutdown.signal, defer: (c) => void closers.push(c) });
  } catch (err) {
    log.error({ err }, `${opts.service} failed`);
    return 1;
  } finally {
    for (const close of closers.reverse()) await close().catch((err: unknown) => log.warn({ err }, 'close failed'));
    // the signal handlers stay until here, so a SIGTERM (docker stop) also ends the wait for a final scrape
    if (metrics) await closeMetrics(metrics, opts.metrics?.finalScrapeMs ?? 0, shutdown.signal, log);
    shutdown.dispose();
    log.flush?.();
  }
}

/** Waits (at most `finalScrapeMs`, not once stopping) for a scrape of the final values, then closes the server. */
async function closeMetrics(metrics: MetricsServer, finalScrapeMs: number, signal: AbortSignal, log: Logger): Promise<void> {
  if (finalScrapeMs > 0 && !signal.aborted) {
    const started = Date.now();
    log.info({ timeoutMs: finalScrapeMs }, 'waiting for a scrape of the final metrics');
    const scraped = await metrics.nextScrape(finalScrapeMs, signal);
    if (scraped) log.info({ waitedMs: Date.now() - started }, 'final metrics scraped');
    else log.warn({ waitedMs: Date.now() - started, timeoutMs: finalScrapeMs }, signal.aborted ? 'stopped before a scrape of the final metrics' : 'no scrape of the final metrics before the timeout');
  }
  await metrics.close().catch((err: unknown) => log.warn({ err }, 'close failed'));
}
