import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig, type ConfigKey } from '@ccpipe/core';
import { FsObjectStore } from '@ccpipe/adapters';
import { runMerge, type MergeResult } from '@ccpipe/index';
import { addConfigFlags, configFlagsOf } from './config-flags';

const MERGE: ConfigKey[] = ['data', 'rowGroupSize'];

/** Where `ccpipe merge` writes its one JSON result line; tests pass their own. */
export interface MergeCommandIo {
  write(line: string): void;
}

/** Parses a non-negative integer flag. @throws Error naming the flag. */
function intFlag(name: string, v: unknown, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}`);
  return n;
}

/**
 * `ccpipe merge`: folds every completed batch of the data store into a new index version (docs/index-format.md) and
 * prints `MergeResult` as one JSON line. `--data` and `--row-group-size` come from the config table; merge-only
 * flags: `--keep-versions` (default 3), `--grace-ms` (default 600000), `--drop-text`, `--memory-limit` (default 512MB).
 * Exit code 0 also when there was nothing to merge (`published: false`).
 */
export function registerMergeCommand(program: Command, io: MergeCommandIo = { write: (l) => process.stdout.write(l) }): void {
  addConfigFlags(program.command('merge').description('fold completed batches into a new immutable index version and publish it'), MERGE)
    .option('--keep-versions <n>', 'index versions kept in the manifest (older ones are retired, then deleted after the grace period)')
    .option('--grace-ms <ms>', 'how long a retired version stays readable before GC deletes it')
    .option('--drop-text', 'store text as null in the lake')
    .option('--memory-limit <size>', "DuckDB memory limit, e.g. '512MB' (it spills to a temp dir beyond it)")
    .action(async (opts: Record<string, unknown>) => {
      const config = loadConfig(process.env, configFlagsOf(opts, MERGE));
      const dataDir = resolve(config.data);
      const result: MergeResult = await runMerge({
        store: new FsObjectStore({ root: dataDir }),
        dataDir,
        rowGroupSize: config.rowGroupSize,
        keepVersions: intFlag('keep-versions', opts['keepVersions'], 3, 1),
        graceMs: intFlag('grace-ms', opts['graceMs'], 600_000, 0),
        dropText: opts['dropText'] === true,
        ...(typeof opts['memoryLimit'] === 'string' ? { memoryLimit: opts['memoryLimit'] } : {}),
      });
      io.write(`${JSON.stringify(result)}\n`);
    });
}
