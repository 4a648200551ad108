import { Registry } from 'prom-client';
import { workerMetrics } from './metrics';

describe('workerMetrics', () => {
  it('counts documents retried after an extraction timeout by outcome, each outcome present from the start', async () => {
    const registry = new Registry();
    const m = workerMetrics(registry);
    const read = async () => (await registry.getSingleMetric('ccpipe_worker_extraction_timeout_retries_total')!.get()).values
      .map((v) => [v.labels.outcome, v.value]);
    expect(await read()).toEqual([['ok', 0], ['timeout', 0], ['failed', 0]]);
    m.extractTimeoutRetry('ok');
    m.extractTimeoutRetry('ok');
    m.extractTimeoutRetry('timeout');
    expect(await read()).toEqual([['ok', 2], ['timeout', 1], ['failed', 0]]);
  });
});
