import { checkRow, ParquetPartError, resolveOptions, type PartRow, type WriteParquetPartOptions } from './part-row';
import { writeWithDuckDb } from './write-duckdb';
import { writeWithParquetWasm } from './write-parquet-wasm';

/**
 * Encodes one worker batch as one Parquet file (ZSTD, dictionary pages for the low-cardinality columns, row
 * groups of `rowGroupSize` rows) and returns its bytes; the caller stores them. Deterministic in content for the
 * same rows and options, not byte-identical across engines. Pure apart from the duckdb engine's temp file.
 * @throws ParquetPartError CCP_ERR_PARQUET_OPTION for bad options, CCP_ERR_PARQUET_ROW (with the row index in
 *   `detail`) for a value the schema cannot hold, CCP_ERR_PARQUET_LOCAL when the machine fails the write (the duckdb
 *   engine's temp disk full or unwritable, out of memory: nothing to do with the rows), CCP_ERR_PARQUET_WRITE when
 *   the engine fails otherwise.
 */
export async function writeParquetPart(rows: readonly PartRow[], opts: WriteParquetPartOptions = {}): Promise<Uint8Array> {
  const o = resolveOptions(opts);
  rows.forEach(checkRow);
  try {
    return o.engine === 'duckdb' ? await writeWithDuckDb(rows, o) : await writeWithParquetWasm(rows, o);
  } catch (err) {
    if (err instanceof ParquetPartError) throw err;
    if (isLocalFailure(err)) throw new ParquetPartError('CCP_ERR_PARQUET_LOCAL', `${o.engine} could not write the part on this machine`, { cause: err, detail: { rows: rows.length } });
    throw new ParquetPartError('CCP_ERR_PARQUET_WRITE', `${o.engine} failed to write the part`, { cause: err, detail: { rows: rows.length } });
  }
}

/**
 * DuckDB failing on this machine, not on the rows: its IO and out-of-memory errors carry no system code (their message
 * names the class), so `queueActionFor`, which stops the worker on a system code anywhere in the cause chain (a full
 * or unwritable disk from Node's own calls), cannot tell them without this.
 */
function isLocalFailure(err: unknown): boolean {
  // not instanceof Error: a native addon's errors may come from another realm
  const message = typeof err === 'object' && err !== null && 'message' in err ? String((err as { message: unknown }).message) : '';
  return /^(IO Error|Out of Memory Error|Permission Error)\b/.test(message) || /No space left on device|Read-only file system|Permission denied/.test(message);
}
