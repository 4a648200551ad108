import { Command } from 'commander';
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
  it('passes config flags and the server options to apiMain', async () => {
    expect(await parse(['--data', '/srv/ccpipe', '--log-level', 'debug', '--api-port', '0', '--api-host', '127.0.0.1', '--acl-file', '/etc/acl.json'])).toEqual({
      flags: { data: '/srv/ccpipe', logLevel: 'debug' },
      opts: { port: 0, host: '127.0.0.1', aclFile: '/etc/acl.json' },
    });
    expect(await parse([])).toEqual({ flags: {}, opts: { port: 8080, host: '0.0.0.0' } });
  });

  it('rejects a port that is not 0-65535', async () => {
    for (const p of ['65536', 'http', '-1']) expect(await parse(['--api-port', p])).toBeInstanceOf(Error);
  });
});
