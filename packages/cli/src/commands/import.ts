import type { Command } from 'commander';
import { CcpError, loadConfig, type ConfigKey, type OptionalImportColumn } from '@ccpipe/core';
import { closeDuckDbParquetEngine, createLogger, openObjectStore, writeParquetPart } from '@ccpipe/adapters';
import { DEFAULT_IMPORT_BATCH_ROWS, IMPORT_FORMATS, runImport, type ImportFormat, type ImportOptions, type ImportSummary } from '@ccpipe/import';
import { STORE_KEYS, addConfigFlags, configFlagsOf } from './config-flags';

const IMPORT: ConfigKey[] = [...STORE_KEYS, 'includeText', 'parquetEngine', 'rowGroupSize', 'logLevel'];
const ROLES: OptionalImportColumn[] = ['ts', 'status', 'title', 'text'];

/** Where `ccpipe import` writes: its one JSON summary (`write`, stdout) and progress lines (`progress`, stderr on a TTY). */
export interface ImportCommandIo {
  write(line: string): void;
  progress?: NodeJS.WritableStream & { isTTY?: boolean };
}

/**
 * `ccpipe import FILE… --dataset NAME`: rows of CSV, TSV or JSONL files (gzip or zstd compressed too) into a dataset
 * of the data store, as the batches workers write (docs/import.md). Prints one JSON summary; exit 1 when more rows
 * were rejected than `--max-rejects` allows (nothing is imported then) or a file cannot be imported at all.
 */
export function registerImportCommand(program: Command, io: ImportCommandIo = { write: (l) => process.stdout.write(l) }): void {
  addConfigFlags(
    program.command('import').description('import URL lists and tables (CSV, TSV, JSONL; .gz/.zst too) into a dataset, ready for `ccpipe merge`')
      .argument('<files...>', 'input files, imported in this order')
      .requiredOption('--dataset <name>', 'the dataset to import into (created as an import dataset when new)')
      .option('--format <format>', `input format: ${IMPORT_FORMATS.join(', ')} (default: from each file's extension)`)
      .option('--url-column <name>', 'the column (JSONL: key) holding the URL', 'url')
      .option('--ts-column <name>', 'capture time: ISO 8601, 14-digit CDX, epoch seconds or ms (default column: ts, optional)')
      .option('--status-column <name>', 'HTTP status, 100–599 (default column: status, optional)')
      .option('--title-column <name>', 'page title (default column: title, optional)')
      .option('--text-column <name>', 'page text (default column: text, optional)')
      .option('--max-rejects <n>', 'most rows that may be rejected; above, the import stops with exit 1 and imports nothing (default: 1% of the rows)')
      .option('--batch-rows <n>', 'input rows per batch (one Parquet part each)', String(DEFAULT_IMPORT_BATCH_ROWS)),
    IMPORT,
  ).action(async (files: string[], opts: Record<string, unknown>) => {
    const config = loadConfig(process.env, configFlagsOf(opts, IMPORT));
    const format = opts['format'];
    if (format !== undefined && !(IMPORT_FORMATS as readonly unknown[]).includes(format)) {
      throw new CcpError('CCP_ERR_CONFIG', `--format must be one of ${IMPORT_FORMATS.join(', ')}`);
    }
    const explicit = new Set(ROLES.filter((r) => opts[`${r}Column`] !== undefined));
    const importOpts: ImportOptions = {
      files,
      dataset: datasetFlag(opts['dataset']),
      ...(format !== undefined && { format: format as ImportFormat }),
      columns: {
        url: String(opts['urlColumn']),
        ...Object.fromEntries(ROLES.map((r) => [r, typeof opts[`${r}Column`] === 'string' ? (opts[`${r}Column`] as string) : r])),
      },
      explicit,
      ...(opts['maxRejects'] !== undefined && { maxRejects: countFlag('max-rejects', opts['maxRejects'], 0) }),
      batchRows: countFlag('batch-rows', opts['batchRows'], 1),
      includeText: config.includeText,
    };
    const progress = io.progress ?? process.stderr;
    // logs on stderr: stdout carries the summary
    const log = createLogger({ service: 'import', level: config.logLevel, destination: progress });
    const store = openObjectStore(config.data, config);
    let summary: ImportSummary;
    let parts = 0;
    try {
      summary = await runImport(importOpts, {
        store,
        writePart: async (rows) => {
          // DuckDB keeps the native memory of the parts it wrote until its instance closes (≈ 100 MiB per 50k rows
          // that `DROP TABLE` does not give back): a fresh instance every 20 parts keeps a long import's RSS flat
          if (++parts % 20 === 0) await closeDuckDbParquetEngine();
          return writeParquetPart(rows, { engine: config.parquetEngine, includeText: config.includeText, rowGroupSize: config.rowGroupSize });
        },
        log,
        onProgress: (p) => {
          if (progress.isTTY === true) progress.write(`\r${p.file}: ${p.rows.toLocaleString('en')} rows, ${p.rejects.toLocaleString('en')} rejected, ${p.batches} batches`);
        },
      });
    } finally {
      if (progress.isTTY === true) progress.write('\n');
      await closeDuckDbParquetEngine();
      await store.close();
    }
    io.write(JSON.stringify(summary) + '\n');
    process.exitCode = summary.outcome === 'imported' ? 0 : 1;
  });
}

function datasetFlag(v: unknown): string {
  if (typeof v !== 'string' || !/^[A-Za-z0-9._-]+$/.test(v)) throw new CcpError('CCP_ERR_CONFIG', '--dataset must be a name of letters, digits, dot, dash and underscore');
  return v;
}

function countFlag(name: string, v: unknown, min: number): number {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw new CcpError('CCP_ERR_CONFIG', `--${name} must be an integer ≥ ${min}`);
  return n;
}
