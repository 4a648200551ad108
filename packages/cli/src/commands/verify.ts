import type { Command } from 'commander';
import { loadConfig, type ConfigKey } from '@ccpipe/core';
import { openObjectStore } from '@ccpipe/adapters';
import { verifyVersion } from '@ccpipe/index';
import { STORE_KEYS, addConfigFlags, configFlagsOf } from './config-flags';

const VERIFY: ConfigKey[] = [...STORE_KEYS];

/**
 * `ccpipe verify [--data DIR] [--index-version vNNNNNN]`: reads every file of an index version whole — its index files, lake
 * files and row-group locators — and checks each against the size and CRC32 the version recorded (the API checks
 * index files when it loads a version, but reads lake files only by the row groups a page needs). Prints one JSON
 * object; exit code 0 when every file is as recorded, 1 otherwise — also when there is nothing to check (no version
 * published under --data, a version the manifest does not keep, an unreadable manifest).
 */
export function registerVerifyCommand(program: Command, io: { write(line: string): void } = { write: (l) => process.stdout.write(l) }): void {
  addConfigFlags(program.command('verify').description("check every file of an index version (index, lake, locators, orderings, link graph, search shards) against its recorded size and CRC32"), VERIFY)
    .option('--index-version <v>', 'the index version to check, e.g. v000003 (default: the current one)')
    .action(async (opts: Record<string, unknown>) => {
      const config = loadConfig(process.env, configFlagsOf(opts, VERIFY));
      const store = openObjectStore(config.data, config);
      try {
        const version = typeof opts['indexVersion'] === 'string' ? opts['indexVersion'] : undefined;
        const result = await verifyVersion(store, version === undefined ? {} : { version });
        io.write(JSON.stringify(result, null, 2) + '\n');
        process.exitCode = result.problems.length === 0 ? 0 : 1;
      } finally {
        await store.close();
      }
    });
}
