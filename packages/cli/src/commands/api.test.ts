import { Command } from 'commander';
import { loadConfig } from '@ccpipe/core';
import { registerApiCommand, type ApiRunner } from './api';

function parse(args: string[]): Promise<{ flags: unknown; opts: unknown } | Error> {
  let got: { flags: unknown; opts: unknown } | undefined;
  const run: ApiRunner = async (flags, _env, opts) => {
    got = { flags, opts };
    return 0;
  };
  const program = new Command('ccpipe').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  registerApiCommand(program, run);
  return program.parseAsync(['node', 'ccpipe', 'api', ...args]).then(
    () => got as { flags: unknown; opts: unknown },
    (err: Error) => err,
  );
}

describe('ccpipe api', () => {
  it('passes config flags (port, host, ACL file, index reads included) to apiMain', async () => {
    expect(await parse(['--data', '/srv/ccpipe', '--log-level', 'debug', '--api-port', '0', '--api-host', '127.0.0.1', '--acl-file', '/etc/acl.json', '--index-reads', 'files', '--index-cache-dir', '/var/cache/ccpipe'])).toEqual({
      flags: { data: '/srv/ccpipe', logLevel: 'debug', apiPort: '0', apiHost: '127.0.0.1', aclFile: '/etc/acl.json', apiIndexReads: 'files', apiIndexCacheDir: '/var/cache/ccpipe' },
      opts: {},
    });
    expect(await parse([])).toEqual({ flags: {}, opts: {} });
  });

  it('takes --port and --host as ccpipe run spells them, and refuses both spellings at once', async () => {
    expect(await parse(['--port', '9090', '--host', '0.0.0.0'])).toEqual({ flags: { apiPort: '9090', apiHost: '0.0.0.0' }, opts: {} });
    expect(await parse(['--port', '9090', '--api-port', '9091'])).toMatchObject({ message: expect.stringMatching(/--port or --api-port, not both/) });
  });

  it('leaves port validation to the config table, which names flag and env var', () => {
    for (const p of ['65536', 'http', '-1']) expect(() => loadConfig({}, { apiPort: p })).toThrow(/--api-port \/ CCPIPE_API_PORT/);
    expect(loadConfig({ CCPIPE_API_PORT: '9090' }).apiPort).toBe(9090);
    expect(loadConfig({}).apiPort).toBe(8080);
  });

  it('index reads: resident by default, files on request, anything else refused naming flag and env var', () => {
    expect([loadConfig({}).apiIndexReads, loadConfig({ CCPIPE_API_INDEX_READS: 'files' }).apiIndexReads]).toEqual(['resident', 'files']);
    expect(() => loadConfig({}, { apiIndexReads: 'mmap' })).toThrow(/--index-reads \/ CCPIPE_API_INDEX_READS/);
    expect([loadConfig({}).apiIndexCacheDir, loadConfig({ CCPIPE_API_INDEX_CACHE_DIR: '/var/cache/ccpipe' }).apiIndexCacheDir]).toEqual([undefined, '/var/cache/ccpipe']);
  });
});
