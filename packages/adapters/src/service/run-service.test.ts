import { runService } from './run-service';

describe('runService', () => {
  it("serves Node's process metrics beside the service's own on its metrics port", async () => {
    let text = '';
    const code = await runService({ service: 'test', logLevel: 'silent', metrics: { host: '127.0.0.1', port: 0 } }, async ({ registry }) => {
      text = await registry.metrics();
      return 0;
    });
    expect(code).toBe(0);
    for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(text).toContain(name);
    }
  });
});

describe('runService: final scrape', () => {
  it('closes the metrics server at once when stopped by a signal, whatever finalScrapeMs says', async () => {
    const t = Date.now();
    const code = await runService({ service: 'test', logLevel: 'silent', metrics: { host: '127.0.0.1', port: 0, finalScrapeMs: 30_000 } }, async () => {
      process.emit('SIGTERM', 'SIGTERM');
      return 130;
    });
    expect(code).toBe(130);
    expect(Date.now() - t).toBeLessThan(5_000);
  });
});
