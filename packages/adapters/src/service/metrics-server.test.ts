import { Counter, Registry } from 'prom-client';
import { startMetricsServer } from './metrics-server';

describe('metrics server', () => {
  it('serves the registry on /metrics from a free port, and closes idempotently', async () => {
    const registry = new Registry();
    const c = new Counter({ name: 'ccpipe_test_things_total', help: 'things', labelNames: ['reason'], registers: [registry] });
    c.inc({ reason: 'status' }, 3);
    const server = await startMetricsServer(registry, { host: '127.0.0.1', port: 0 });
    try {
      expect(server.port).toBeGreaterThan(0);
      const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('ccpipe_test_things_total{reason="status"} 3');
      expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${server.port}/nope`)).status).toBe(404);
    } finally {
      await server.close();
      await server.close();
    }
  });
});

describe('metrics server: nextScrape', () => {
  it('resolves true once a GET /metrics rendered after the call is sent; HEAD and /healthz do not count', async () => {
    const registry = new Registry();
    const server = await startMetricsServer(registry, { host: '127.0.0.1', port: 0 });
    try {
      const base = `http://127.0.0.1:${server.port}`;
      await fetch(`${base}/metrics`).then((r) => r.text());
      let scraped: boolean | undefined;
      const waiting = server.nextScrape(10_000).then((s) => (scraped = s));
      await fetch(`${base}/metrics`, { method: 'HEAD' });
      await fetch(`${base}/healthz`).then((r) => r.text());
      await new Promise((r) => setTimeout(r, 50));
      expect(scraped).toBeUndefined();
      await fetch(`${base}/metrics`).then((r) => r.text());
      expect(await waiting).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('resolves false after the timeout, or when the signal aborts', async () => {
    const server = await startMetricsServer(new Registry(), { host: '127.0.0.1', port: 0 });
    try {
      expect(await server.nextScrape(50)).toBe(false);
      const ctl = new AbortController();
      const waiting = server.nextScrape(10_000, ctl.signal);
      ctl.abort();
      expect(await waiting).toBe(false);
      expect(await server.nextScrape(10_000, AbortSignal.abort())).toBe(false);
    } finally {
      await server.close();
    }
  });
});
