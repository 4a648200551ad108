import { checkRow, ParquetPartError, resolveOptions, type PartRow, type WriteParquetPartOptions } from './part-row';
import { writeWithDuckDb } from './write-duckdb';
import { writeWithParquetWasm } from './write-parquet-wasm';

/**
 * Encodes one worker batch as one Parquet file (ZSTD, dictionary pages for the low-cardinality columns, row
 * groups of `rowGroupSize` rows) and returns its bytes; the caller stores them. Deterministic in content for the
 * same rows and options, not byte-identical across engines. Pure apart from the duckdb engine's temp file.
 * @throws ParquetPartError CCP_ERR_PARQUET_OPTION for bad options, CCP_ERR_PARQUET_ROW (with the row index in
 *   `detail`) for a value the schema cannot hold, CCP_ERR_PARQUET_WRITE when the engine fails.
 */
export async function writeParquetPart(rows: readonly PartRow[], opts: WriteParquetPartOptions = {}): Promise<Uint8Array> {
  const o = resolveOptions(opts);
  rows.forEach(checkRow);
  try {
    return o.engine === 'duckdb' ? await writeWithDuckDb(rows, o) : await writeWithParquetWasm(rows, o);
  } catch (err) {
    if (err instanceof ParquetPartError) throw err;
    throw new ParquetPartError('CCP_ERR_PARQUET_WRITE', `${o.engine} failed to write the part`, { cause: err, detail: { rows: rows.length } });
  }
}
