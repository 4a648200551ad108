import { CcpError, ConfigError } from '@ccpipe/core';
import { describeCliError, main } from './main';

describe('describeCliError (what the CLI prints when a command fails)', () => {
  it("prints ccpipe's own errors as their message and code, without a stack or their detail", () => {
    const e = new CcpError('CCP_ERR_INDEX_CRC', 'index file CRC32 mismatch', { detail: { key: 'urls/x.parquet' } });
    expect(describeCliError(e, undefined)).toBe('ccpipe: index file CRC32 mismatch [CCP_ERR_INDEX_CRC]');
    expect(describeCliError(new ConfigError(['--batch-size / CCPIPE_BATCH_SIZE: too small']), 'info')).toBe(
      'ccpipe: invalid configuration:\n  - --batch-size / CCPIPE_BATCH_SIZE: too small [CCP_ERR_CONFIG]',
    );
  });

  it('prints the stack of an unexpected error, and with LOG_LEVEL debug the stack, detail and cause of any', () => {
    const bug = new TypeError('x is undefined');
    expect(describeCliError(bug, undefined)).toBe(bug.stack);
    const e = new CcpError('CCP_ERR_STORE', 'the store refused', { detail: { key: 'k' }, cause: new Error('ECONNRESET') });
    const out = describeCliError(e, 'debug');
    expect(out.split('\n')[0]).toBe('CcpError: the store refused');
    expect(out).toContain('detail: {"key":"k"}');
    expect(out).toContain('cause: Error: ECONNRESET');
    expect(describeCliError('a string', undefined)).toBe('a string');
  });
});

describe('main', () => {
  it('refuses an unknown command even with --help after it (commander printed the top-level help and exited 0)', async () => {
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await main(['node', 'ccpipe', 'serve', '--help'])).toBe(1);
      expect(await main(['node', 'ccpipe', 'crawl'])).toBe(1);
      expect(String(err.mock.calls[0]![0])).toBe("error: unknown command 'serve' (see ccpipe --help)\n");
    } finally {
      err.mockRestore();
    }
  });
});

