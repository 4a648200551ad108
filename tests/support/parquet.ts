import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { decompress as decompressZstd } from 'fzstd';

const compressors = { ZSTD: (input: Uint8Array, outputLength: number) => decompressZstd(input, new Uint8Array(outputLength)) };

function toArrayBuffer(b: Uint8Array): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

/** Every row of a Parquet file, read by hyparquet: an independent reader, not the writer that made the file. */
export async function readParquetRows(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  return (await parquetReadObjects({ file: toArrayBuffer(bytes), compressors })) as Record<string, unknown>[];
}

/** Row count and row groups of a Parquet file, per its footer. */
export function parquetShape(bytes: Uint8Array): { rows: number; rowGroups: number } {
  const md = parquetMetadata(toArrayBuffer(bytes));
  return { rows: Number(md.num_rows), rowGroups: md.row_groups.length };
}
