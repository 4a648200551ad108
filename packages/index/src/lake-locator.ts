import { parquetMetadata, type ColumnChunk, type CompressionCodec, type FileMetaData, type ParquetType, type SchemaElement } from 'hyparquet';
import { IndexFormatError, crcOf } from './format';

/**
 * The row-group locator of a lake file (`.rgx`, written by the merger next to the file, docs/index-format.md): where
 * each row group's column chunks of the columns the API reads sit, and the file's schema — what a reader needs to
 * decode one row group without the Parquet footer. A footer grows with the file (≈ 1–2.5 KB per row group with
 * statistics, parsed whole), a locator entry is 8 B per row group + 32 B per column, read as a typed array.
 *
 * Layout (little-endian): `u32 magic 'CCRG'` · `u32 version 2` · `u32 header bytes` · UTF-8 JSON header
 * `{schema, columns: [{name, path, type, codec}], groups}` · zero padding to 8 · `f64 table[groups × (1 + 5 × columns)]`:
 * per row group its row count, then per column (dictionary page offset or 0, data page offset, compressed bytes,
 * values, CRC32 of the chunk's bytes). Version 1 (written before stop 18) has no CRC32 field (4 per column) and is
 * still read; its chunks are not checked.
 */
export interface LakeLocator {
  schema: SchemaElement[];
  columns: LocatorColumn[];
  /** First row of each row group, plus the row count at the end. */
  starts: number[];
  table: Float64Array;
  /** Fields per column in `table`: 5 when each chunk carries its CRC32 (version 2), 4 in version 1. */
  fields: number;
}

export interface LocatorColumn {
  name: string;
  path: string[];
  type: ParquetType;
  codec: CompressionCodec;
}

/** Columns a locator lists when the file has them: what `urls()` and `captures()` read (url_id never is). */
export const LOCATOR_COLUMNS: readonly string[] = [
  'url', 'surt', 'ts', 'status', 'title', 'text', 'content_length', 'languages', 'warc_filename', 'warc_offset', 'warc_length',
];

const MAGIC = 0x47524343; // 'CCRG' LE
/** Fields per column and row group, by locator version. */
const FIELDS_OF: Record<number, number> = { 1: 4, 2: 5 };

/**
 * The locator of a Parquet file from its bytes (footer parsed once, at write time), with each chunk's CRC32 (version
 * 2; `version: 1` writes the older layout without them, for tests of old lakes). @throws on a file it cannot describe
 */
export function buildLocator(file: Uint8Array, { version = 2 }: { version?: 1 | 2 } = {}): Buffer {
  const fields = FIELDS_OF[version]!;
  const meta = parquetMetadata(file);
  const first = meta.row_groups[0]?.columns ?? [];
  const columns: LocatorColumn[] = [];
  const at: number[] = [];
  first.forEach((c, i) => {
    const m = c.meta_data;
    if (m === undefined || m.path_in_schema.length !== 1 || !LOCATOR_COLUMNS.includes(m.path_in_schema[0]!)) return;
    columns.push({ name: m.path_in_schema[0]!, path: [...m.path_in_schema], type: m.type, codec: m.codec });
    at.push(i);
  });
  const width = 1 + fields * columns.length;
  const table = new Float64Array(meta.row_groups.length * width);
  meta.row_groups.forEach((rg, g) => {
    table[g * width] = Number(rg.num_rows);
    at.forEach((ci, k) => {
      const m = rg.columns[ci]?.meta_data;
      const col = columns[k]!;
      if (m === undefined || m.path_in_schema.join('.') !== col.path.join('.') || m.codec !== col.codec || m.type !== col.type) {
        throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lake file row groups differ in layout', { column: col.name, rowGroup: g });
      }
      const o = g * width + 1 + k * fields;
      table[o] = Number(m.dictionary_page_offset ?? 0);
      table[o + 1] = Number(m.data_page_offset);
      table[o + 2] = Number(m.total_compressed_size);
      table[o + 3] = Number(m.num_values);
      if (fields > 4) {
        const start = table[o]! > 0 ? table[o]! : table[o + 1]!;
        if (start + table[o + 2]! > file.length) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lake column chunk lies past the end of its file', { column: col.name, rowGroup: g });
        table[o + 4] = crcOf(file.subarray(start, start + table[o + 2]!));
      }
    });
  });
  const header = Buffer.from(JSON.stringify({ schema: meta.schema, columns, groups: meta.row_groups.length }, (_k, v) => (typeof v === 'bigint' ? Number(v) : v)), 'utf8');
  const pad = (8 - ((12 + header.length) % 8)) % 8;
  const out = Buffer.alloc(12 + header.length + pad + table.byteLength);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(version, 4);
  out.writeUInt32LE(header.length, 8);
  header.copy(out, 12);
  Buffer.from(table.buffer).copy(out, 12 + header.length + pad);
  return out;
}

/** Parses a locator. @throws IndexFormatError CCP_ERR_INDEX_FORMAT */
export function decodeLocator(b: Uint8Array, key: string): LakeLocator {
  const bad = (reason: string) => new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lake locator cannot be read', { key, reason });
  if (b.length < 12) throw bad('short');
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const fields = FIELDS_OF[dv.getUint32(4, true)];
  if (dv.getUint32(0, true) !== MAGIC || fields === undefined) throw bad('magic or version');
  const hl = dv.getUint32(8, true);
  let head: { schema: SchemaElement[]; columns: LocatorColumn[]; groups: number };
  try {
    head = JSON.parse(Buffer.from(b.buffer, b.byteOffset + 12, hl).toString('utf8'));
  } catch {
    throw bad('header');
  }
  const width = 1 + fields * head.columns.length;
  const at = 12 + hl + ((8 - ((12 + hl) % 8)) % 8);
  if (b.length !== at + head.groups * width * 8) throw bad('size');
  // a copy: the bytes may sit at any alignment inside a pooled buffer (and Buffer#slice is a view)
  const copy = new Uint8Array(b.length - at);
  copy.set(b.subarray(at));
  const table = new Float64Array(copy.buffer, 0, head.groups * width);
  const starts = [0];
  for (let g = 0; g < head.groups; g++) starts.push(starts[g]! + table[g * width]!);
  return { schema: head.schema, columns: head.columns, starts, table, fields };
}

/** Where column k of row group g sits, as the locator's table records it. */
export interface LocatorChunk {
  /** Dictionary page offset, 0 when the chunk has none. */
  dictOffset: number;
  dataOffset: number;
  /** Compressed bytes of the whole chunk, from its first page on. */
  size: number;
  values: number;
  /** CRC32 of the chunk's `size` bytes; null in a version-1 locator. */
  crc32: number | null;
}

/** Column k (index into `loc.columns`) of row group g. */
export function locatorChunk(loc: LakeLocator, g: number, k: number): LocatorChunk {
  const o = g * (1 + loc.fields * loc.columns.length) + 1 + k * loc.fields;
  return { dictOffset: loc.table[o]!, dataOffset: loc.table[o + 1]!, size: loc.table[o + 2]!, values: loc.table[o + 3]!, crc32: loc.fields > 4 ? loc.table[o + 4]! : null };
}

/** Rows of row group g. */
const groupRows = (loc: LakeLocator, g: number): number => loc.starts[g + 1]! - loc.starts[g]!;

/**
 * A one-row-group `FileMetaData` for hyparquet's `parquetRead` (rows [0, rows of g)): the schema and the chunks of
 * `names` in row group `g`. Columns the file lacks are left out.
 */
export function locatorMetadata(loc: LakeLocator, g: number, names: readonly string[]): FileMetaData {
  const columns: ColumnChunk[] = [];
  loc.columns.forEach((c, k) => {
    if (!names.includes(c.name)) return;
    const at = locatorChunk(loc, g, k);
    columns.push({
      file_offset: 0n,
      meta_data: {
        type: c.type,
        encodings: [],
        path_in_schema: c.path,
        codec: c.codec,
        num_values: BigInt(at.values),
        total_uncompressed_size: 0n,
        total_compressed_size: BigInt(at.size),
        data_page_offset: BigInt(at.dataOffset),
        ...(at.dictOffset > 0 && { dictionary_page_offset: BigInt(at.dictOffset) }),
      },
    });
  });
  const rows = BigInt(groupRows(loc, g));
  return {
    version: 2,
    schema: loc.schema,
    num_rows: rows,
    row_groups: [{ columns, total_byte_size: 0n, num_rows: rows }],
    metadata_length: 0,
  };
}
