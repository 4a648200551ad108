import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { CcpError, MAX_IMPORT_RAW_CHARS, layout, sortPartRows, type ImportColumnNames, type ObjectStore, type OptionalImportColumn } from '@ccpipe/core';
import { ensureDataset, type PartRow } from '@ccpipe/adapters';
import { writeBatchMarker, type BatchMarker } from '@ccpipe/worker';
import { ImportInputError, checkSource, formatOfName, rowsOf, type ImportFormat } from './import-source';
import { REJECT_REASONS, importRow, type RejectReason } from './import-row';

/** Rows (kept and rejected) per batch, one part each: 10k keep an import within 512 MiB (bench/import.bench.js --memory). */
export const DEFAULT_IMPORT_BATCH_ROWS = 10_000;
/** `--max-rejects` when not given: this share of the rows read. */
export const DEFAULT_MAX_REJECT_SHARE = 0.01;

/** What to import and how. */
export interface ImportOptions {
  /** Input files, imported in this order (a later file's rows win over an earlier one's among rows without a time). */
  files: readonly string[];
  /** The dataset (registered as an import when new). */
  dataset: string;
  /** The input format; default each file's own, from its name. */
  format?: ImportFormat;
  columns: ImportColumnNames;
  /** The optional columns named by flag: each must exist in every file. */
  explicit: ReadonlySet<OptionalImportColumn>;
  /** Most rejected rows the import accepts; above, it stops (exit 1) and nothing is imported. Default 1% of the rows. */
  maxRejects?: number;
  /** Rows per batch (part); default {@link DEFAULT_IMPORT_BATCH_ROWS}. */
  batchRows?: number;
  /** Keep the text column's values (default true). */
  includeText?: boolean;
}

/** The ports an import uses. */
export interface ImportDeps {
  store: ObjectStore;
  /** Encodes rows as one Parquet part (the worker's writer). */
  writePart: (rows: readonly PartRow[]) => Promise<Uint8Array>;
  now?: () => Date;
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Called after each batch and at the end of each file. */
  onProgress?: (p: ImportProgress) => void;
}

/** Where an import is. */
export interface ImportProgress {
  file: string;
  rows: number;
  rejects: number;
  batches: number;
}

/** What an import did. */
export interface ImportSummary {
  dataset: string;
  datasetId: number;
  /** The run's id: the batch ids' prefix, the same for a rerun with the same arguments and inputs. */
  run: string;
  /** `imported`: every batch completed (markers written); `too-many-rejects`: stopped, nothing imported. */
  outcome: 'imported' | 'too-many-rejects';
  rows: number;
  rejects: number;
  rejectsByReason: Partial<Record<RejectReason, number>>;
  maxRejects: number;
  files: { file: string; rows: number; rejects: number }[];
  batches: number;
  /** Batches an earlier run of the same import had completed already, or written before it stopped. */
  resumed: number;
  /** Store keys of the rejects files (one per batch with rejects), for a user to read. */
  rejectFiles: string[];
}

/** An import's record in the store (layout.importRun): written once, so a rerun keeps the run's batch ids. */
interface ImportRunRecord {
  v: 1;
  run: string;
  startedAt: string;
  files: { path: string; size: number; mtimeMs: number }[];
  done?: boolean;
}

interface Batch {
  id: string;
  rows: PartRow[];
  rejects: string[];
  byReason: Partial<Record<RejectReason, number>>;
  records: number;
}

/**
 * Imports rows from files into a dataset as batches of the kind the workers write — a Parquet part, a rejects file
 * (`import-rejects.jsonl`, one `{"file","line","reason","message","raw"}` per rejected row) and, once every batch is
 * written and the rejects are within `maxRejects`, each batch's completion marker and inbox entry — so `ccpipe
 * merge`, the API and `verify` need nothing new. Streams every file (memory holds one batch); a rerun with the same
 * arguments over the same files skips the batches already written and completes without duplicates. A row whose
 * URL, time or status cannot be read is rejected and counted; one bad row never stops an import.
 * @throws ImportInputError for a file that cannot be imported at all (nothing is imported), CcpError
 *   CCP_ERR_DATASET_KIND when the dataset is a crawl
 */
export async function runImport(opts: ImportOptions, deps: ImportDeps): Promise<ImportSummary> {
  const now = deps.now ?? (() => new Date());
  const batchRows = opts.batchRows ?? DEFAULT_IMPORT_BATCH_ROWS;
  if (!Number.isSafeInteger(batchRows) || batchRows < 1) throw new CcpError('CCP_ERR_CONFIG', 'batch rows must be a positive integer');
  if (opts.files.length === 0) throw new CcpError('CCP_ERR_CONFIG', 'no input file');
  const inputs: { path: string; format: ImportFormat; size: number; mtimeMs: number }[] = [];
  for (const file of opts.files) {
    const format = opts.format ?? formatOfName(file);
    if (format === null) throw new ImportInputError(file, 'has no known extension (.csv, .tsv, .jsonl, optionally .gz or .zst; .parquet): give --format');
    const s = await stat(file).catch((cause: unknown) => {
      throw new ImportInputError(file, (cause as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(cause as Error).message})`, { cause });
    });
    if (!s.isFile()) throw new ImportInputError(file, 'is not a file');
    inputs.push({ path: resolve(file), format, size: s.size, mtimeMs: Math.floor(s.mtimeMs) });
  }
  // every file is checked before anything is written (it opens, is text, is not empty, has the columns asked for), so
  // a bad file given last does not leave a dataset registered with the others' parts
  for (const input of inputs) await checkSource(input.path, { format: input.format, columns: opts.columns, explicit: opts.explicit });
  const includeText = opts.includeText ?? true;
  const fingerprint = createHash('sha256')
    .update(JSON.stringify({ dataset: opts.dataset, inputs, columns: opts.columns, explicit: [...opts.explicit].sort(), includeText, batchRows }))
    .digest('hex')
    .slice(0, 16);

  const { entry, storeId } = await ensureDataset(deps.store, opts.dataset, null, now(), { kind: 'import', sources: opts.files.map((f) => basename(f)) });
  const runKey = layout.importRun(opts.dataset, fingerprint);
  const prior = await deps.store.get(runKey);
  const record: ImportRunRecord = prior !== null
    ? (JSON.parse(Buffer.from(prior).toString('utf8')) as ImportRunRecord)
    : { v: 1, run: '', startedAt: now().toISOString(), files: inputs.map(({ path, size, mtimeMs }) => ({ path, size, mtimeMs })) };
  // batch ids sort by the run's start: the merge ranks a later import's rows above an earlier one's among rows without a time
  record.run = `imp-${record.startedAt.slice(0, 19).replace(/[-T:]/g, '')}-${fingerprint.slice(0, 8)}`;
  if (prior === null) await deps.store.put(runKey, jsonBytes(record));

  const summary: ImportSummary = {
    dataset: opts.dataset, datasetId: entry.id, run: record.run, outcome: 'imported', rows: 0, rejects: 0, rejectsByReason: {},
    maxRejects: opts.maxRejects ?? 0, files: [], batches: 0, resumed: 0, rejectFiles: [],
  };
  const written: { id: string; marker: Omit<BatchMarker, 'finishedAt'> | null }[] = [];
  let batch: Batch = newBatch(record.run, 0);
  const flush = async (): Promise<void> => {
    if (batch.records === 0) return;
    written.push({ id: batch.id, marker: await writeBatchFiles(deps, { datasetId: entry.id, dataset: opts.dataset, store: storeId, run: record.run }, batch) });
    summary.batches++;
    batch = newBatch(record.run, summary.batches);
  };
  /** Rows read so far over every input: a row's place in the import (the tie-break of rows without a time). */
  let order = 0;
  const tooMany = (): boolean => opts.maxRejects !== undefined && summary.rejects > opts.maxRejects;

  for (const input of inputs) {
    const file = basename(input.path);
    const counts = { file, rows: 0, rejects: 0 };
    summary.files.push(counts);
    for await (const src of rowsOf(input.path, { format: input.format, columns: opts.columns, explicit: opts.explicit })) {
      const got = 'values' in src
        ? src.badUtf8 && hasReplacement(src.values)
          ? { reason: 'not-utf8' as const, message: 'the row holds bytes that are not UTF-8' }
          : importRow(src.values, { datasetId: entry.id, order, includeText })
        : { reason: src.reason, message: src.message };
      batch.records++;
      order++;
      if ('row' in got) {
        batch.rows.push(got.row);
        counts.rows++;
        summary.rows++;
      } else {
        const raw = 'values' in src ? src.raw() : src.raw;
        // a Parquet row is named by its 0-based index (`row`), a text file's by its 1-based physical line
        const at = input.format === 'parquet' ? { row: src.line } : { line: src.line };
        batch.rejects.push(JSON.stringify({ file, ...at, reason: got.reason, message: got.message, raw: raw.slice(0, MAX_IMPORT_RAW_CHARS) }));
        batch.byReason[got.reason] = (batch.byReason[got.reason] ?? 0) + 1;
        summary.rejectsByReason[got.reason] = (summary.rejectsByReason[got.reason] ?? 0) + 1;
        counts.rejects++;
        summary.rejects++;
        if (tooMany()) break;
      }
      if (batch.records >= batchRows) {
        await flush();
        deps.onProgress?.({ file, rows: summary.rows, rejects: summary.rejects, batches: summary.batches });
      }
    }
    if (tooMany()) break;
    deps.onProgress?.({ file, rows: summary.rows, rejects: summary.rejects, batches: summary.batches });
  }
  summary.maxRejects = opts.maxRejects ?? Math.floor((summary.rows + summary.rejects) * DEFAULT_MAX_REJECT_SHARE);
  if (summary.rejects > summary.maxRejects) {
    summary.outcome = 'too-many-rejects';
    deps.log?.warn({ rejects: summary.rejects, maxRejects: summary.maxRejects, byReason: summary.rejectsByReason }, 'import stopped: more rejected rows than --max-rejects allows; nothing was imported');
    return summary;
  }
  await flush();
  // every batch is written: their markers now, in order (a merge sees the import whole or, after a crash here, the
  // batches marked so far — a rerun marks the rest)
  for (const w of written) {
    if (w.marker === null) {
      summary.resumed++;
      continue;
    }
    const marker: BatchMarker = { ...w.marker, finishedAt: now().toISOString() };
    await writeBatchMarker(deps.store, entry.id, w.id, Buffer.from(JSON.stringify(marker) + '\n', 'utf8'));
    if (marker.failuresFile !== null) summary.rejectFiles.push(marker.failuresFile);
  }
  if (record.done !== true) await deps.store.put(runKey, jsonBytes({ ...record, done: true }));
  deps.log?.info({ dataset: opts.dataset, run: record.run, rows: summary.rows, rejects: summary.rejects, batches: summary.batches, resumed: summary.resumed }, 'import complete');
  return summary;
}

function newBatch(run: string, seq: number): Batch {
  return { id: `${run}/${String(seq).padStart(8, '0')}/0000`, rows: [], rejects: [], byReason: {}, records: 0 };
}

/**
 * Writes a batch's part and rejects file (each atomically) and returns its marker to write once the whole import is
 * written, or null when its marker exists already (an earlier run completed it). A part an interrupted run wrote is
 * kept: its rows are the same (same inputs, same batch boundaries).
 */
async function writeBatchFiles(
  deps: ImportDeps, to: { datasetId: number; dataset: string; store: string; run: string }, b: Batch,
): Promise<Omit<BatchMarker, 'finishedAt'> | null> {
  const { datasetId, dataset, store, run } = to;
  if ((await deps.store.head(layout.batchMarker(datasetId, b.id))) !== null) return null;
  const partKey = layout.batchPart(datasetId, b.id);
  const rejectsKey = layout.batchRejects(datasetId, b.id);
  let partBytes = 0;
  if (b.rows.length > 0) {
    const had = await deps.store.head(partKey);
    if (had !== null) partBytes = had.size;
    else {
      sortPartRows(b.rows);
      const part = await deps.writePart(b.rows);
      partBytes = part.length;
      await deps.store.put(partKey, part);
    }
  }
  if (b.rejects.length > 0) await deps.store.put(rejectsKey, Buffer.from(b.rejects.join('\n') + '\n', 'utf8'));
  return {
    v: 1, batchId: b.id, datasetId, dataset, store, crawl: run, records: b.records, rows: b.rows.length, failed: b.rejects.length,
    failures: Object.fromEntries(REJECT_REASONS.filter((r) => b.byReason[r] !== undefined).map((r) => [r, b.byReason[r]!])),
    part: b.rows.length > 0 ? partKey : null, failuresFile: b.rejects.length > 0 ? rejectsKey : null, partBytes,
  };
}

/** Whether a row's values hold U+FFFD (in a file with bytes that are not UTF-8, such a row is rejected). */
function hasReplacement(v: { url: unknown; ts: unknown; status: unknown; title: unknown; text: unknown; extras: [string, unknown][] }): boolean {
  const has = (x: unknown): boolean => typeof x === 'string' && x.includes('\ufffd');
  return has(v.url) || has(v.ts) || has(v.status) || has(v.title) || has(v.text) || v.extras.some(([k, x]) => has(k) || has(x));
}

const jsonBytes = (v: unknown): Uint8Array => Buffer.from(JSON.stringify(v, null, 1) + '\n', 'utf8');
