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
 * A write failure of the machine, not of the rows: a system error code of a full or unwritable disk (on the error or
 * its causes), or DuckDB's IO and out-of-memory errors, which carry no code (their message names the class).
 */
function isLocalFailure(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = 'code' in e ? String((e as { code: unknown }).code) : '';
    if (['ENOSPC', 'EROFS', 'EACCES', 'EPERM', 'EMFILE', 'ENFILE', 'ENOENT', 'EDQUOT'].includes(code)) return true;
    const message = 'message' in e ? String((e as { message: unknown }).message) : ''; // not instanceof: a native addon's errors may come from another realm
    if (/^(IO Error|Out of Memory Error|Permission Error)\b/.test(message) || /No space left on device|Read-only file system|Permission denied/.test(message)) return true;
  }
  return false;
}
