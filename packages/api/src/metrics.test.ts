import { Registry } from 'prom-client';
import { IndexFormatError } from '@ccpipe/index';
import { indexMetrics } from './metrics';

describe('indexMetrics', () => {
  it('reads the served version at each scrape (0 = none) and counts failed loads by a closed set of codes', async () => {
    const registry = new Registry();
    let served: string | null = null;
    const m = indexMetrics(registry, async () => served);
    const value = async (name: string, labels: Record<string, string> = {}): Promise<number | undefined> =>
      (await registry.getSingleMetric(name)!.get()).values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;
    expect(await value('ccpipe_api_index_version')).toBe(0);
    served = 'v000042';
    expect(await value('ccpipe_api_index_version')).toBe(42);
    // every code is exported from the start (a rate over a series that did not exist yet reads nothing)
    expect(await value('ccpipe_api_index_load_failures_total', { code: 'CCP_ERR_INDEX_CRC' })).toBe(0);
    m.loadFailed(new IndexFormatError('CCP_ERR_INDEX_CRC', 'index file CRC32 mismatch'));
    m.loadFailed(new IndexFormatError('CCP_ERR_INDEX_CRC', 'index file CRC32 mismatch'));
    m.loadFailed(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    m.loadFailed('not an error');
    expect(await value('ccpipe_api_index_load_failures_total', { code: 'CCP_ERR_INDEX_CRC' })).toBe(2);
    expect(await value('ccpipe_api_index_load_failures_total', { code: 'other' })).toBe(2);
    const codes = (await registry.getSingleMetric('ccpipe_api_index_load_failures_total')!.get()).values.map((v) => v.labels['code']);
    expect(codes.sort()).toEqual(['CCP_ERR_INDEX_CRC', 'CCP_ERR_INDEX_FORMAT', 'CCP_ERR_INDEX_MISSING', 'CCP_ERR_STORE_ACCESS', 'CCP_ERR_STORE_IO', 'other']);
    // a second call on the same registry (a restart in one process) shares the series and reads its own source
    indexMetrics(registry, async () => 'v000043');
    expect(await value('ccpipe_api_index_version')).toBe(43);
    expect(await value('ccpipe_api_index_load_failures_total', { code: 'CCP_ERR_INDEX_CRC' })).toBe(2);
  });
});
