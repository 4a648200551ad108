import { compileFilter, loadConfig, registeredDomainOf, type CdxRecord } from '@ccpipe/core';
import { MemoryObjectStore } from '@ccpipe/adapters';
import { loadCheckpoint, runFingerprint, saveCheckpoint } from './checkpoint';
import { filterSpecOf } from './main';

/** The fingerprint batcherMain records for a dataset of CC-MAIN-2024-30 under `env`, batch size and plan left as default. */
const fingerprintOf = (env: Record<string, string>): string =>
  runFingerprint({ crawl: 'CC-MAIN-2024-30', filter: filterSpecOf(loadConfig(env)), batchSize: 500, targets: null, maxBlocks: null });

const NEW_RULES: Record<string, string> = {
  CCPIPE_FILTER_MIMES_DETECTED: 'text/html',
  CCPIPE_FILTER_URL_REGEX_EXCLUDE: '/tag/',
  CCPIPE_FILTER_DOMAINS_ALLOW: 'example.com',
  CCPIPE_FILTER_DOMAINS_DENY: 'spam.example',
};

describe('filterSpecOf: the filter rules of the config, as the dataset fingerprint records them', () => {
  it('leaves the fingerprint of a dataset begun before the detected-mime, exclusion and domain rules as it was', () => {
    // values computed by the batcher before these rules had flags: such datasets must resume, not be refused
    expect(fingerprintOf({})).toBe('8685f24a1e3a1dbd');
    expect(fingerprintOf({ CCPIPE_FILTER_MIMES: 'text/html', CCPIPE_FILTER_URL_REGEX: '^https://' })).toBe('d2841efad52a8cc2');
  });

  it.each(Object.entries(NEW_RULES))('makes %s part of the recorded settings: resuming a dataset with it changed is refused', async (env, value) => {
    const store = new MemoryObjectStore();
    const before = fingerprintOf({});
    await saveCheckpoint(store, {
      v: 1, crawl: 'CC-MAIN-2024-30', dataset: 'd', fingerprint: before, nextPlanIndex: 3, planLength: 10, batchesPublished: 4, done: false, updatedAt: '2030-01-01T00:00:00Z',
    });
    const after = fingerprintOf({ [env]: value });
    expect(after).not.toBe(before);
    await expect(loadCheckpoint(store, 'd', after)).rejects.toMatchObject({ code: 'CCP_ERR_CHECKPOINT_MISMATCH' });
    await expect(loadCheckpoint(store, 'd', after, { reset: true })).rejects.toMatchObject({ code: 'CCP_ERR_CHECKPOINT_MISMATCH' }); // it published batches
    expect(await loadCheckpoint(store, 'd', before)).toMatchObject({ nextPlanIndex: 3 });
  });

  it('does not depend on the order the domains are listed in', () => {
    expect(fingerprintOf({ CCPIPE_FILTER_DOMAINS_DENY: 'b.example,a.example' })).toBe(fingerprintOf({ CCPIPE_FILTER_DOMAINS_DENY: 'a.example, b.example' }));
  });

  it('compiles into a filter that applies each rule and names it as the drop reason', () => {
    const filter = compileFilter(filterSpecOf(loadConfig({ ...NEW_RULES, CCPIPE_FILTER_DOMAINS_ALLOW: 'example.com,spam.example' })), { registeredDomainOf });
    const rec = (url: string, mimeDetected = 'text/html'): CdxRecord => ({
      surt: '', timestamp: '20240101000000', url, mime: 'text/html', mimeDetected, status: '200', length: 1, offset: 0, filename: 'w.warc.gz', languages: ['eng'],
    });
    expect(filter(rec('https://www.example.com/a'))).toEqual({ keep: true });
    expect(filter(rec('https://www.example.com/a', 'application/pdf'))).toEqual({ keep: false, reason: 'mime_detected' });
    expect(filter(rec('https://www.example.com/tag/x'))).toEqual({ keep: false, reason: 'url_pattern' });
    expect(filter(rec('https://shop.spam.example/'))).toEqual({ keep: false, reason: 'domain_deny' });
    expect(filter(rec('https://other.example/'))).toEqual({ keep: false, reason: 'domain_allow' });
  });
});
