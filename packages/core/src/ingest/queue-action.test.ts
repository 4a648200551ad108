import { CcpError } from '../errors';
import { BatchFormatError } from './batch';
import { queueActionFor } from './queue-action';

describe('queueActionFor', () => {
  it('acks success', () => expect(queueActionFor({ ok: true })).toEqual({ action: 'ack' }));

  it('dead-letters batches that can never succeed', () => {
    expect(queueActionFor({ ok: false, error: new BatchFormatError('bad') })).toEqual({
      action: 'dead-letter',
      reason: 'CCP_ERR_BATCH_FORMAT',
    });
  });

  it('requeues retryable and unexpected failures (the delivery limit bounds them)', () => {
    const transient = new CcpError('CCP_ERR_STORE_UNAVAILABLE', 'store down', { retryable: true });
    expect(queueActionFor({ ok: false, error: transient }).action).toBe('requeue');
    expect(queueActionFor({ ok: false, error: new TypeError('bug') })).toEqual({ action: 'requeue', reason: 'CCP_ERR_UNEXPECTED' });
  });

  it('crashes on local system failures', () => {
    const enospc = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    expect(queueActionFor({ ok: false, error: enospc })).toEqual({ action: 'crash', reason: 'ENOSPC' });
    // As the directory store reports it: a retryable store error wrapping the system error.
    const wrapped = new CcpError('CCP_ERR_STORE_IO', 'object store put failed (ENOSPC)', { retryable: true, cause: enospc });
    expect(queueActionFor({ ok: false, error: wrapped })).toEqual({ action: 'crash', reason: 'ENOSPC' });
    // a quota is a full disk too (also when the part writer wraps it)
    const quota = new CcpError('CCP_ERR_PARQUET_WRITE', 'duckdb failed to write the part', { cause: Object.assign(new Error('disk quota exceeded'), { code: 'EDQUOT' }) });
    expect(queueActionFor({ ok: false, error: quota })).toEqual({ action: 'crash', reason: 'EDQUOT' });
  });

  it('crashes when the store refuses access (every batch would fail alike) but requeues other store errors', () => {
    const denied = new CcpError('CCP_ERR_STORE_ACCESS', 'bucket does not exist');
    expect(queueActionFor({ ok: false, error: denied })).toEqual({ action: 'crash', reason: 'CCP_ERR_STORE_ACCESS' });
    const eio = new CcpError('CCP_ERR_STORE_IO', 'object store get failed (ECONNRESET)', { retryable: true, cause: Object.assign(new Error('reset'), { code: 'ECONNRESET' }) });
    expect(queueActionFor({ ok: false, error: eio })).toEqual({ action: 'requeue', reason: 'CCP_ERR_STORE_IO' });
  });

  it('crashes when this machine cannot write a part or run extraction; requeues a batch whose records could not be fetched for now', () => {
    for (const code of ['CCP_ERR_PARQUET_LOCAL', 'CCP_ERR_EXTRACT_UNAVAILABLE']) {
      expect(queueActionFor({ ok: false, error: new CcpError(code, 'x', { retryable: true }) })).toEqual({ action: 'crash', reason: code });
    }
    const transient = new CcpError('CCP_ERR_BATCH_TRANSIENT', 'records could not be fetched for now', { retryable: true });
    expect(queueActionFor({ ok: false, error: transient })).toEqual({ action: 'requeue', reason: 'CCP_ERR_BATCH_TRANSIENT' });
    // a bad row of the part is still the batch's own fault
    expect(queueActionFor({ ok: false, error: new CcpError('CCP_ERR_PARQUET_ROW', 'x', { retryable: false }) })).toEqual({ action: 'dead-letter', reason: 'CCP_ERR_PARQUET_ROW' });
  });
});
