import type { Command } from 'commander';
import type { ConfigKey } from '@ccpipe/core';
import { apiMain, type ApiMainOptions } from '@ccpipe/api';
import { STORE_KEYS, addConfigFlags, configFlagsOf } from './config-flags';

const API: ConfigKey[] = [...STORE_KEYS, 'logLevel', 'apiPort', 'apiHost', 'aclFile', 'apiIndexReads', 'apiIndexCacheDir'];

/** What the command calls; tests pass their own. */
export type ApiRunner = (flags: Partial<Record<ConfigKey, unknown>>, env: NodeJS.ProcessEnv, opts: ApiMainOptions) => Promise<number>;

/**
 * `ccpipe api [--data DIR] [--api-port P] [--api-host H] [--acl-file FILE] [--log-level L]`: serves the index of
 * the data directory over HTTP (docs/api.md) until SIGTERM/SIGINT; exit code 0 after a clean stop, 1 when it could
 * not start.
 */
export function registerApiCommand(program: Command, run: ApiRunner = apiMain): void {
  addConfigFlags(program.command('api').description('serve the index over HTTP: domains, datasets, URL pages, captures'), API)
    .action(async (opts: Record<string, unknown>) => {
      process.exitCode = await run(configFlagsOf(opts, API), process.env, {});
    });
}
