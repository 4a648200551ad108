import { CcpError, errorCode, hasCode } from './errors';

describe('CcpError', () => {
  it('carries a stable code, retryable flag and cause', () => {
    const cause = new Error('socket hang up');
    const err = new CcpError('CCP_ERR_FETCH', 'range read failed', { retryable: true, cause });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('CcpError');
    expect(err.code).toBe('CCP_ERR_FETCH');
    expect(err.retryable).toBe(true);
    expect(err.cause).toBe(cause);
    expect(hasCode(err, 'CCP_ERR_FETCH')).toBe(true);
    expect(errorCode(err)).toBe('CCP_ERR_FETCH');
  });

  it('maps foreign errors to a generic code', () => {
    expect(errorCode(new TypeError('x'))).toBe('CCP_ERR_UNEXPECTED');
    expect(hasCode(new TypeError('x'), 'CCP_ERR_FETCH')).toBe(false);
  });
});
