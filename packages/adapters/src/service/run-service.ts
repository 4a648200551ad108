import { Registry, collectDefaultMetrics } from 'prom-client';
import { createLogger, type Logger } from './logger';
import { startMetricsServer } from './metrics-server';
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
 */
export async function runService(
  opts: {
    service: string;
    logLevel: string;
    /** null when the service serves `registry` itself (the API does, on its own port). */
    metrics: { host: string; port: number } | null;
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
  try {
    if (opts.metrics) {
      const metrics = await startMetricsServer(registry, opts.metrics);
      closers.push(() => metrics.close());
      log.info({ port: metrics.port }, 'metrics listening');
    }
    return await body({ log, registry, signal: shutdown.signal, defer: (c) => void closers.push(c) });
  } catch (err) {
    log.error({ err }, `${opts.service} failed`);
    return 1;
  } finally {
    shutdown.dispose();
    for (const close of closers.reverse()) await close().catch((err: unknown) => log.warn({ err }, 'close failed'));
    log.flush?.();
  }
}
