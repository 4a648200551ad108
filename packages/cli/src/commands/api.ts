import type { Command } from 'commander';
import type { ConfigKey } from '@ccpipe/core';
import { apiMain, type ApiMainOptions } from '@ccpipe/api';
import { STORE_KEYS, addConfigFlags, configFlagsOf } from './config-flags';

const API: ConfigKey[] = [...STORE_KEYS, 'logLevel', 'apiPort', 'apiHost', 'aclFile', 'apiIndexReads', 'apiIndexCacheDir', 'apiSearchThreads', 'apiSearchTimeLimit'];

/** What the command calls; tests pass their own. */
export type ApiRunner = (flags: Partial<Record<ConfigKey, unknown>>, env: NodeJS.ProcessEnv, opts: ApiMainOptions) => Promise<number>;

/** `--port` and `--host` are `ccpipe run`'s names for what the config table calls `--api-port` and `--api-host`. */
const ALIASES = [['port', 'apiPort', 'api-port'], ['host', 'apiHost', 'api-host']] as const;

/**
 * `ccpipe api [--data DIR] [--port P | --api-port P] [--host H | --api-host H] [--acl-file FILE] [--log-level L]`:
 * serves the index of the data directory over HTTP (docs/api.md) until SIGTERM/SIGINT; exit code 0 after a clean
 * stop, 1 when it could not start.
 */
export function registerApiCommand(program: Command, run: ApiRunner = apiMain): void {
  const cmd = addConfigFlags(program.command('api').description('serve the index over HTTP: domains, datasets, URL pages, captures'), API)
    .option('--port <value>', 'same as --api-port')
    .option('--host <value>', 'same as --api-host');
  cmd.action(async (opts: Record<string, unknown>) => {
    const flags = configFlagsOf(opts, API);
    for (const [alias, key, flag] of ALIASES) {
      if (opts[alias] === undefined) continue;
      if (flags[key] !== undefined) cmd.error(`error: give --${alias} or --${flag}, not both`);
      flags[key] = opts[alias];
    }
    process.exitCode = await run(flags, process.env, {});
  });
}
