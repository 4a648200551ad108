import { DEFAULT_DELIVERY_LIMIT, topologyNames, workQueueArguments } from './topology';

describe('topologyNames', () => {
  it('derives the three names from the prefix, production by default', () => {
    expect(topologyNames()).toEqual({ queue: 'ccpipe.batches', deadLetterExchange: 'ccpipe.batches.dlx', deadLetterQueue: 'ccpipe.batches.dlq', deliveryLimit: DEFAULT_DELIVERY_LIMIT });
    expect(topologyNames('ccpipe-test-0a1b').deadLetterQueue).toBe('ccpipe-test-0a1b.batches.dlq');
    expect(workQueueArguments(topologyNames('p', 3))).toEqual({ 'x-queue-type': 'quorum', 'x-delivery-limit': 3, 'x-dead-letter-exchange': 'p.batches.dlx' });
  });
  it('refuses prefixes that are not safe queue names and negative limits', () => {
    for (const bad of ['', 'a b', 'a/b', 'x'.repeat(201)]) expect(() => topologyNames(bad)).toThrow(RangeError);
    expect(() => topologyNames('ok', -1)).toThrow(RangeError);
  });
});
