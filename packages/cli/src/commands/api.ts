import { InvalidArgumentError, type Command } from 'commander';
import type { ConfigKey } from '@ccpipe/core';
import { apiMain, type ApiMainOptions } from '@ccpipe/api';
import { addConfigFlags, configFlagsOf } from './config-flags';

const API: ConfigKey[] = ['data', 'logLevel'];

function port(v: string): number {
  if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new InvalidArgumentError('port must be 0-65535');
  return Number(v);
}

/** What the command calls; tests pass their own. */
export type ApiRunner = (flags: Partial<Record<ConfigKey, unknown>>, env: NodeJS.ProcessEnv, opts: ApiMainOptions) => Promise<number>;

/**
 * `ccpipe api [--data DIR] [--api-port P] [--api-host H] [--acl-file FILE] [--log-level L]`: serves the index of
 * the data directory over HTTP (docs/api.md) until SIGTERM/SIGINT; exit code 0 after a clean stop, 1 when it could
 * not start. `--api-port`/`--api-host`/`--acl-file` are command options until the config table carries them.
 */
export function registerApiCommand(program: Command, run: ApiRunner = apiMain): void {
  addConfigFlags(program.command('api').description('serve the index over HTTP: domains, datasets, URL pages, captures'), API)
    .option('--api-port <port>', 'HTTP port (0 = any free port)', port, 8080)
    .option('--api-host <addr>', 'bind address', '0.0.0.0')
    .option('--acl-file <file>', 'dataset ACL: bearer tokens and the datasets each may see (none = open API)')
    .action(async (opts: Record<string, unknown>) => {
      const main: ApiMainOptions = { port: opts.apiPort as number, host: opts.apiHost as string };
      if (typeof opts.aclFile === 'string') main.aclFile = opts.aclFile;
      process.exitCode = await run(configFlagsOf(opts, API), process.env, main);
    });
}
