import { deadLetterHeaders, deadLetterInfo } from './dead-letter';

describe('dead-letter headers', () => {
  it('round-trip our reason, delivery count and source queue, dropping broker x- headers', () => {
    const h = deadLetterHeaders({ 'x-delivery-count': 3, 'x-death': [], traceparent: 't' }, 'CCP_ERR_BATCH_FORMAT', 3, 'ccpipe.batches');
    expect(h).toEqual({ traceparent: 't', 'ccpipe-dead-letter-reason': 'CCP_ERR_BATCH_FORMAT', 'ccpipe-delivery-count': 3, 'ccpipe-source-queue': 'ccpipe.batches' });
    expect(deadLetterInfo(h)).toEqual({ reason: 'CCP_ERR_BATCH_FORMAT', deliveryCount: 3, sourceQueue: 'ccpipe.batches' });
  });

  it('fall back to the broker headers RabbitMQ 3.10 wrote on a delivery-limit dead letter', () => {
    // Headers as RabbitMQ 3.10.8 delivered them from the DLQ after x-delivery-limit fired (seen in the integration test).
    const broker = {
      'x-death': [{ count: 1, reason: 'delivery_limit', queue: 'ccpipe.batches', exchange: '', 'routing-keys': ['ccpipe.batches'] }],
      'x-delivery-count': 0,
      'x-first-death-exchange': '',
      'x-first-death-queue': 'ccpipe.batches',
      'x-first-death-reason': 'delivery_limit',
    };
    expect(deadLetterInfo(broker)).toEqual({ reason: 'delivery_limit', deliveryCount: null, sourceQueue: 'ccpipe.batches' });
    expect(deadLetterInfo({ 'x-death': [{ reason: 'rejected', queue: 'q' }] })).toMatchObject({ reason: 'rejected', sourceQueue: 'q' });
    expect(deadLetterInfo(undefined)).toEqual({ reason: 'unknown', deliveryCount: null, sourceQueue: null });
  });
});
