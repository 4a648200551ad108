import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { decompress as zstdDecompress } from 'fzstd';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import { bigintReplacer, resolveColumns, type ImportColumns } from '@ccpipe/core';
import { ImportInputError, type SourceOptions, type SourceRow } from './import-source';

/** Rows decoded at a time (within a row group): memory holds one slice's objects. */
const SLICE_ROWS = 10_000;

/** Decoders of the Parquet codecs beyond hyparquet's own (uncompressed, snappy). */
const COMPRESSORS = {
  ZSTD: (input: Uint8Array) => zstdDecompress(input),
  GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)),
  BROTLI: (input: Uint8Array) => new Uint8Array(brotliDecompressSync(input)),
};

/** Physical types a role's column may have (a string; a time as a timestamp, an integer or text; a status as an integer or text). */
const ALLOWED: Record<'url' | 'ts' | 'status' | 'title' | 'text', readonly string[]> = {
  url: ['BYTE_ARRAY'],
  ts: ['INT64', 'INT32', 'INT96', 'BYTE_ARRAY', 'DOUBLE', 'FLOAT'],
  status: ['INT32', 'INT64', 'BYTE_ARRAY'],
  title: ['BYTE_ARRAY'],
  text: ['BYTE_ARRAY'],
};

/**
 * The rows of a Parquet file, in order, each with its 0-based row index as `line` (the rejects file calls it `row`).
 * Columns are found by name as in a CSV header; a role's column must have a type that can hold it (the url a
 * string, the time a TIMESTAMP, an integer or a string, …). Decoded a slice of rows at a time.
 * @throws ImportInputError for a file that is not Parquet, has no rows, lacks the url column (or one named by flag),
 *   or has a role's column of a type that cannot hold it (naming the column and its type)
 */
export async function* readParquetSource(path: string, opts: SourceOptions): AsyncGenerator<SourceRow> {
  let file: AsyncBuffer;
  let meta: FileMetaData;
  try {
    file = await asyncBufferFromFile(path);
    meta = await parquetMetadataAsync(file);
  } catch (cause) {
    throw new ImportInputError(path, `is not a Parquet file (${(cause as Error).message})`, { cause });
  }
  const top = parquetSchema(meta).children;
  const names = top.map((c) => c.element.name);
  const cols = resolveColumns(names, opts.columns, opts.explicit);
  if ('error' in cols) throw new ImportInputError(path, cols.error);
  checkTypes(path, top, cols);
  const total = Number(meta.num_rows);
  if (total === 0) throw new ImportInputError(path, 'is empty (no rows)');
  let start = 0;
  for (const rg of meta.row_groups) {
    const end = start + Number(rg.num_rows);
    for (let from = start; from < end; from += SLICE_ROWS) {
      const to = Math.min(end, from + SLICE_ROWS);
      let rows: Record<string, unknown>[];
      try {
        rows = await parquetReadObjects({ file, metadata: meta, rowStart: from, rowEnd: to, compressors: COMPRESSORS });
      } catch (cause) {
        throw new ImportInputError(path, `rows ${from}–${to - 1} cannot be read (${(cause as Error).message})`, { cause });
      }
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]!;
        const at = (k: number | null): unknown => (k === null ? undefined : r[names[k]!]);
        yield {
          line: from + i,
          values: {
            url: at(cols.url), ts: at(cols.ts), status: at(cols.status), title: at(cols.title), text: at(cols.text),
            // hyparquet gives a null list as undefined: a null it is, as in any other column
            extras: cols.extras.map((e) => [e.name, r[names[e.index]!] === undefined ? null : r[names[e.index]!]]),
          },
          raw: () => JSON.stringify(r, bigintReplacer),
          badUtf8: false,
        };
      }
    }
    start = end;
  }
}

function checkTypes(path: string, top: ReturnType<typeof parquetSchema>['children'], cols: ImportColumns): void {
  for (const role of ['url', 'ts', 'status', 'title', 'text'] as const) {
    const k = cols[role];
    if (k === null) continue;
    const el = top[k]!.element;
    const type = top[k]!.children.length > 0 ? 'a nested group' : (el.type ?? 'unknown');
    if (!ALLOWED[role].includes(type)) {
      throw new ImportInputError(path, `column "${el.name}" (the ${role}) is ${type}${el.logical_type ? ` (${el.logical_type.type})` : ''}, which cannot hold a ${role === 'ts' ? 'time' : role}`);
    }
  }
}
