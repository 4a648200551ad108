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
