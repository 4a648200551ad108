import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A running /metrics endpoint. */
export interface MetricsServer {
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  /**
   * Resolves true once a `GET /metrics` whose body was rendered after this call has been sent whole — a scrape that
   * read the values as they are now — and false after `timeoutMs` or when `signal` aborts. Never rejects.
   */
  nextScrape(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Serves `registry` on `GET /metrics` (Prometheus text format) and `GET /healthz`. Port 0 picks a free port, so
 * several workers on one host never collide. `close()` is idempotent.
 */
export async function startMetricsServer(registry: Registry, opts: { host: string; port: number }): Promise<MetricsServer> {
  // scrapes are numbered when their body is rendered; a waiter is owed any scrape numbered after its call
  let rendered = 0;
  const waiters = new Set<{ after: number; done: () => void }>();
  const sent = (n: number): void => {
    for (const w of waiters) if (n > w.after) w.done();
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/metrics') {
      const n = ++rendered;
      registry.metrics().then(
        (body) => {
          if (req.method === 'GET') res.once('finish', () => sent(n));
          res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : body);
        },
        () => res.writeHead(500).end(),
      );
    } else if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  let closing: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    nextScrape: (timeoutMs, signal) =>
      new Promise<boolean>((resolve) => {
        const settle = (scraped: boolean): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          waiters.delete(waiter);
          resolve(scraped);
        };
        const onAbort = (): void => settle(false);
        const waiter = { after: rendered, done: () => settle(true) };
        const timer = setTimeout(() => settle(false), timeoutMs);
        if (signal?.aborted) return settle(false);
        signal?.addEventListener('abort', onAbort, { once: true });
        waiters.add(waiter);
      }),
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
