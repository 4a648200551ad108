import type { ColumnDecoder, CompressionCodec, Compressors, DecodedArray, SchemaTree } from 'hyparquet/src/types.js';
import { parquetHeader } from 'hyparquet/src/column.js';
import { decompressPage, readDataPage, readDataPageV2 } from 'hyparquet/src/datapage.js';
import { readPlain } from 'hyparquet/src/plain.js';

/**
 * A decoded column chunk, packed: strings as one byte buffer with per-row offsets (null rows flagged), numbers (and
 * timestamps as epoch ms) as one Float64Array with NaN for null. A row group's worth of JS strings or boxed numbers
 * would be thousands of small objects surviving into the chunk cache — each cold decode then paid young-generation
 * GC copies, and the cache held ≈ 24 B of header per value. Strings are made only for the rows a page returns.
 */
export type Column = PackedStrings | Float64Array;

export interface PackedStrings {
  bytes: Buffer;
  /** Row i is bytes[starts[i], ends[i]). */
  starts: Uint32Array;
  ends: Uint32Array;
  /** 1 where row i is null; null when no row is. */
  nulls: Uint8Array | null;
}

export const isStrings = (c: Column): c is PackedStrings => !(c instanceof Float64Array);

/** How a BYTE_ARRAY column is decoded: as its bytes, or as the code-point count of each value (`text` lengths). */
export type StringMode = 'bytes' | 'codePoints';

/**
 * Decodes one flat column chunk (its dictionary page, if any, then data pages V1 or V2) of `rows` rows straight into
 * a {@link Column}, with hyparquet's page readers (headers, levels, PLAIN / dictionary / DELTA_* values) but without
 * its row assembly: for a flat OPTIONAL column (every DuckDB column) that assembly walks the Dremel levels value by
 * value and boxes timestamps, which was most of a cold row group's cost. Returns null for a column it does not
 * handle (nested, INT96, FIXED_LEN_BYTE_ARRAY, BOOLEAN, FLOAT/DOUBLE) — the caller then takes hyparquet's own path.
 * @throws Error on a malformed chunk (from hyparquet's readers)
 */
export function decodeFlatChunk(chunk: Uint8Array, schemaPath: SchemaTree[], codec: CompressionCodec, compressors: Compressors, rows: number, mode: StringMode): Column | null {
  const leaf = schemaPath[schemaPath.length - 1]!;
  const el = leaf.element;
  if (schemaPath.length !== 2 || leaf.children.length > 0 || el.repetition_type === 'REPEATED') return null;
  const type = el.type;
  if (type !== 'BYTE_ARRAY' && type !== 'INT32' && type !== 'INT64') return null;
  if (!plainAnnotation(el)) return null; // DECIMAL, DATE, TIME, UINT_*, …: hyparquet converts those
  const toMs = type === 'INT64' ? msScale(el) : 1;
  if (toMs === 0) return null;
  const per = BigInt(toMs);
  const maxDef = el.repetition_type === 'REQUIRED' ? 0 : 1;
  const decoder = { type, element: el, schemaPath, codec, compressors } as unknown as ColumnDecoder;

  const strings = type === 'BYTE_ARRAY' && mode === 'bytes';
  const nums = strings ? null : new Float64Array(rows).fill(NaN);
  const vals: (Uint8Array | null)[] | null = strings ? new Array(rows).fill(null) : null;
  let row = 0;
  for (const page of dataPages(chunk, decoder, codec, compressors)) {
    if (row >= rows) break;
    const { defs, at } = page.read();
    const take = Math.min(page.rows, rows - row);
    for (let r = 0; r < take; r++, row++) {
      if (maxDef > 0 && defs.length > 0 && defs[r] !== maxDef) continue; // null (defs are empty when no row is)
      const v = at();
      if (vals !== null) vals[row] = v as Uint8Array;
      else if (type === 'BYTE_ARRAY') nums![row] = codePoints(v as Uint8Array);
      // exact, and truncating like hyparquet's own timestamp parsers (a float division would round ns, floor negatives)
      else nums![row] = toMs === 1 ? Number(v) : Number(BigInt(v as bigint) / per);
    }
  }
  return vals !== null ? packStrings(vals) : nums!;
}

/** Whether a column's annotation leaves its physical values as they are: none, signed INT, STRING-like, TIMESTAMP. */
function plainAnnotation(el: SchemaTree['element']): boolean {
  const lt = el.logical_type;
  const ct = el.converted_type;
  if (el.type === 'BYTE_ARRAY') {
    return (lt === undefined || lt.type === 'STRING' || lt.type === 'ENUM' || lt.type === 'JSON') && (ct === undefined || ct === 'UTF8' || ct === 'ENUM' || ct === 'JSON');
  }
  if (lt !== undefined && !(lt.type === 'TIMESTAMP' || (lt.type === 'INTEGER' && lt.isSigned))) return false;
  return ct === undefined || ct === 'INT_8' || ct === 'INT_16' || ct === 'INT_32' || ct === 'INT_64' || ct === 'TIMESTAMP_MILLIS' || ct === 'TIMESTAMP_MICROS';
}

/** 1 for plain integers and millisecond timestamps, the divisor to ms for micro/nanosecond ones, 0 if unknown. */
function msScale(el: SchemaTree['element']): number {
  const lt = el.logical_type;
  if (lt?.type === 'TIMESTAMP') return lt.unit === 'MILLIS' ? 1 : lt.unit === 'MICROS' ? 1000 : lt.unit === 'NANOS' ? 1_000_000 : 0;
  if (el.converted_type === 'TIMESTAMP_MILLIS') return 1;
  if (el.converted_type === 'TIMESTAMP_MICROS') return 1000;
  return 1;
}

/**
 * Byte strings (views hyparquet made into the decompressed page or dictionary page) as one {@link PackedStrings}:
 * when they all share one buffer not much bigger than what they use, that buffer is kept with the views' offsets;
 * otherwise the rows are copied into a buffer of their own.
 */
export function packStrings(vals: readonly (Uint8Array | null | undefined)[]): PackedStrings {
  const rows = vals.length;
  let buffer: ArrayBufferLike | null = null;
  let shared = true;
  let used = 0;
  for (const v of vals) {
    if (v === null || v === undefined) continue;
    used += v.length;
    if (buffer === null) buffer = v.buffer;
    else if (v.buffer !== buffer) shared = false;
  }
  const starts = new Uint32Array(rows);
  const ends = new Uint32Array(rows);
  let nulls: Uint8Array | null = null;
  if (buffer !== null && shared && buffer.byteLength <= 2 * used + 4096) {
    for (let i = 0; i < rows; i++) {
      const v = vals[i];
      if (v === null || v === undefined) (nulls ??= new Uint8Array(rows))[i] = 1;
      else {
        starts[i] = v.byteOffset;
        ends[i] = v.byteOffset + v.length;
      }
    }
    return { bytes: Buffer.from(buffer), starts, ends, nulls };
  }
  const bytes = Buffer.allocUnsafe(used);
  let at = 0;
  for (let i = 0; i < rows; i++) {
    const v = vals[i];
    starts[i] = at;
    if (v === null || v === undefined) (nulls ??= new Uint8Array(rows))[i] = 1;
    else {
      bytes.set(v, at);
      at += v.length;
    }
    ends[i] = at;
  }
  return { bytes, starts, ends, nulls };
}

/** Unicode code points of UTF-8 bytes (what DuckDB's `length(text)` counts), without building the string. */
export function codePoints(b: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < b.length; i++) if ((b[i]! & 0xc0) !== 0x80) n++;
  return n;
}

/**
 * The values of rows [lo, hi) of one flat BYTE_ARRAY column chunk of `rows` rows, as byte strings (null for a null
 * row): data pages that hold none of those rows are skipped by their headers, never decompressed or decoded. For a
 * large column read a row at a time — the extracted `text`, megabytes per row group — this turns one row's read
 * from a whole-chunk decode into one page's. Returns null for a column {@link decodeFlatChunk} would not handle.
 * @throws Error on a malformed chunk (from hyparquet's readers)
 */
export function decodeFlatRows(chunk: Uint8Array, schemaPath: SchemaTree[], codec: CompressionCodec, compressors: Compressors, rows: number, lo: number, hi: number): (Uint8Array | null)[] | null {
  const leaf = schemaPath[schemaPath.length - 1]!;
  const el = leaf.element;
  if (schemaPath.length !== 2 || leaf.children.length > 0 || el.repetition_type === 'REPEATED' || el.type !== 'BYTE_ARRAY' || !plainAnnotation(el)) return null;
  const maxDef = el.repetition_type === 'REQUIRED' ? 0 : 1;
  const decoder = { type: el.type, element: el, schemaPath, codec, compressors } as unknown as ColumnDecoder;
  const out: (Uint8Array | null)[] = new Array(Math.max(0, hi - lo)).fill(null);
  let row = 0;
  for (const page of dataPages(chunk, decoder, codec, compressors)) {
    if (row >= Math.min(rows, hi)) break;
    if (row + page.rows <= lo) {
      row += page.rows; // a page before the rows wanted: never decompressed
      continue;
    }
    const { defs, at } = page.read();
    const take = Math.min(page.rows, rows - row);
    for (let r = 0; r < take; r++, row++) {
      if (maxDef > 0 && defs.length > 0 && defs[r] !== maxDef) continue;
      const v = at();
      if (row >= lo && row < hi) out[row - lo] = v as Uint8Array;
    }
  }
  return out;
}

/**
 * The data pages of one flat column chunk, in order: each with its value slots (rows: V1 counts them in num_values,
 * V2 in num_rows) and `read()`, which decompresses and decodes it only when called — its definition levels and
 * `at()`, the next value (a dictionary index resolved through the chunk's dictionary page, which is always read).
 * @throws Error on a malformed chunk (from hyparquet's readers)
 */
function* dataPages(chunk: Uint8Array, decoder: ColumnDecoder, codec: CompressionCodec, compressors: Compressors): Generator<{ rows: number; read(): { defs: ArrayLike<number>; at(): unknown } }> {
  const el = (decoder as unknown as { element: SchemaTree['element'] }).element;
  const reader = { view: new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength), offset: 0 };
  let dictionary: DecodedArray | null = null;
  while (reader.offset < chunk.byteLength) {
    const header = parquetHeader(reader);
    const body = chunk.subarray(reader.offset, reader.offset + header.compressed_page_size);
    reader.offset += header.compressed_page_size;
    if (header.type === 'DICTIONARY_PAGE') {
      const page = decompressPage(body, header.uncompressed_page_size, codec, compressors);
      dictionary = readPlain({ view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: 0 }, el.type!, header.dictionary_page_header!.num_values, el.type_length);
      continue;
    }
    if (header.type !== 'DATA_PAGE' && header.type !== 'DATA_PAGE_V2') continue; // index pages: nothing to decode
    const v1 = header.type === 'DATA_PAGE';
    const rows = v1 ? header.data_page_header!.num_values : header.data_page_header_v2!.num_rows;
    const encoding = v1 ? header.data_page_header!.encoding : header.data_page_header_v2!.encoding;
    const dict = dictionary;
    yield {
      rows,
      read: () => {
        const page = v1 ? readDataPage(decompressPage(body, header.uncompressed_page_size, codec, compressors), header.data_page_header!, decoder) : readDataPageV2(body, header, decoder);
        const data = page.dataPage;
        const byDict = encoding.endsWith('_DICTIONARY');
        if (byDict && dict === null) throw new Error('parquet dictionary page missing');
        let k = 0;
        return {
          defs: page.definitionLevels ?? [],
          at: () => {
            const v = byDict ? dict![data[k++] as number] : data[k++];
            if (v === undefined) throw new Error('parquet page holds fewer values than its levels, or a dictionary index out of range');
            return v;
          },
        };
      },
    };
  }
}
