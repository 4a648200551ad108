import type { Command } from 'commander';
import { describeOptions, type ConfigKey } from '@ccpipe/core';

/** Commander's option key of a long flag name without dashes (`max-words` → `maxWords`). */
export const camel = (flag: string): string => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Adds `--<flag> <value>` for each config key, documented with its env var and default. */
export function addConfigFlags(cmd: Command, keys: readonly ConfigKey[]): Command {
  const rows = describeOptions().filter((r) => keys.includes(r.key));
  for (const r of rows) cmd.option(`--${r.flag} <value>`, `${r.doc} [env ${r.env}${r.default === undefined ? '' : `; default ${r.default}`}]`);
  return cmd;
}

/** Commander's parsed options, keyed by config key (flags not given are left out, so env vars and defaults apply). */
export function configFlagsOf(opts: Record<string, unknown>, keys: readonly ConfigKey[]): Partial<Record<ConfigKey, unknown>> {
  const out: Partial<Record<ConfigKey, unknown>> = {};
  for (const r of describeOptions()) {
    if (!keys.includes(r.key)) continue;
    const v = opts[camel(r.flag)];
    if (v !== undefined) out[r.key] = v;
  }
  return out;
}

/** The data store location and, for `s3://` locations, how to reach the bucket (docs/s3.md). */
export const STORE_KEYS: readonly ConfigKey[] = ['data', 's3Endpoint', 's3Region', 's3ForcePathStyle', 's3MultipartThreshold', 's3MaxAttempts'];
