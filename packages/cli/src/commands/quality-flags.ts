import type { Command } from 'commander';
import { QUALITY_FILTERS, type ConfigKey } from '@ccpipe/core';
import { camel } from './config-flags';


/** The config keys of the quality step (docs/extraction.md "Language of the text, and quality filters"). */
export const QUALITY_KEYS: readonly ConfigKey[] = ['qualityFilters', 'qualityThresholds', 'keepDropped'];

/**
 * Adds one flag per quality filter (`--filter-min-words`, …) and one per threshold (`--min-words <n>`, which turns
 * its filter on too), each with its published default and source in --help. They fold into --quality-filters and
 * --quality-thresholds ({@link foldQualityFlags}).
 */
export function addQualityFlags(cmd: Command): Command {
  for (const f of QUALITY_FILTERS) {
    cmd.option(f.flag, `quality filter: ${f.description} [${f.source}]`);
    for (const p of f.params) cmd.option(`${p.flag} <value>`, `${p.description} (turns ${f.flag} on)`);
  }
  return cmd;
}

/**
 * Folds the per-filter flags given into `flags.qualityFilters` / `flags.qualityThresholds` (added to what the
 * --quality-* flag, else its environment variable, says).
 */
export function foldQualityFlags(opts: Record<string, unknown>, flags: Partial<Record<ConfigKey, unknown>>, env: NodeJS.ProcessEnv): void {
  const filters = QUALITY_FILTERS.filter((f) => opts[camel(f.flag.slice(2))] === true).map((f) => f.name);
  const thresholds = QUALITY_FILTERS.flatMap((f) => f.params).filter((p) => typeof opts[camel(p.flag.slice(2))] === 'string').map((p) => `${p.flag.slice(2)}=${String(opts[camel(p.flag.slice(2))])}`);
  if (filters.length > 0) {
    const base = typeof flags.qualityFilters === 'string' ? flags.qualityFilters : (env['CCPIPE_QUALITY_FILTERS'] ?? '');
    flags.qualityFilters = [base, ...filters].filter(Boolean).join(',');
  }
  if (thresholds.length > 0) {
    const base = typeof flags.qualityThresholds === 'string' ? flags.qualityThresholds : (env['CCPIPE_QUALITY_THRESHOLDS'] ?? '');
    flags.qualityThresholds = [base, ...thresholds].filter(Boolean).join(';');
  }
}
