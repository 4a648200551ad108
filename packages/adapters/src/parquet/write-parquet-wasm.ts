import {
  Field, Float32, Int16, Int32, Int64, List, makeData, RecordBatch, Schema, Struct, Table, tableToIPC, TimestampMicrosecond, Uint32, Utf8,
  type Data, type DataType,
} from 'apache-arrow';
import { Compression, Table as WasmTable, transformParquetStream, WriterPropertiesBuilder, WriterVersion, type RecordBatch as WasmRecordBatch } from 'parquet-wasm';
import { cdxTimestampToMillis, PART_COLUMNS, QUALITY_COLUMNS, type PartRow, type WriteParquetPartOptions } from './part-row';

const utf8 = new Utf8();
const LIST_ITEM = new Field('element', utf8, false);

/** The Arrow schema of a part; nullability follows PART_COLUMNS. */
function arrowType(name: string): DataType {
  switch (name) {
    case 'dataset_id': return new Uint32();
    case 'url_id': case 'warc_offset': return new Int64();
    case 'ts': return new TimestampMicrosecond('UTC');
    case 'status': return new Int16();
    case 'content_length': case 'outlink_count': case 'warc_length': case 'word_count': return new Int32();
    case 'text_language_confidence': case 'mean_word_length': case 'symbol_word_ratio': case 'line_punct_fraction': case 'dup_line_fraction':
    case 'dup_line_char_fraction': case 'top_2gram_char_fraction': case 'dup_5gram_char_fraction': return new Float32();
    case 'outlinks': case 'outlink_domains': return new List(LIST_ITEM);
    default: return utf8;
  }
}

const SCHEMA = new Schema(PART_COLUMNS.map((c) => new Field(c.name, arrowType(c.name), c.nullable)));

/**
 * Encodes rows with parquet-wasm (arrow-rs). Columns are built straight into Arrow buffers (one UTF-8 byte buffer
 * + offsets per string column), because apache-arrow's generic builders from JS arrays cost 3x the whole write.
 * Row groups are built and streamed one at a time (transformParquetStream): wasm32 has 4 GiB of memory, and a
 * whole 100k-row part with outlinks and text copied in at once overflows it. Rows must already be checked.
 */
export async function writeWithParquetWasm(rows: readonly PartRow[], opts: Required<WriteParquetPartOptions>): Promise<Uint8Array> {
  let builder = new WriterPropertiesBuilder()
    .setCompression(Compression.ZSTD)
    .setWriterVersion(WriterVersion.V1)
    .setMaxRowGroupSize(opts.rowGroupSize)
    .setDictionaryEnabled(false)
    .setCreatedBy('ccpipe parquet-wasm');
  for (const c of PART_COLUMNS) if (c.dictionary) builder = builder.setColumnDictionaryEnabled(c.name, true);
  let start = 0;
  const batches = new ReadableStream<WasmRecordBatch>({
    pull(ctrl) {
      if (start >= rows.length && start > 0) return ctrl.close();
      const batch = buildBatch(rows.slice(start, start + opts.rowGroupSize), opts);
      start += Math.max(opts.rowGroupSize, 1);
      const table = WasmTable.fromIPCStream(tableToIPC(new Table(SCHEMA, [batch]), 'stream'));
      try {
        const rb = table.recordBatch(0);
        if (rb !== undefined) ctrl.enqueue(rb);
      } finally {
        table.free();
      }
      if (rows.length === 0) ctrl.close();
    },
  });
  const out = await transformParquetStream(batches, builder.build());
  const chunks: Uint8Array[] = [];
  for await (const c of out as unknown as AsyncIterable<Uint8Array>) chunks.push(c);
  return Buffer.concat(chunks);
}

function buildBatch(rows: readonly PartRow[], opts: Required<WriteParquetPartOptions>): RecordBatch {
  const n = rows.length;
  const u32 = new Uint32Array(n);
  const urlId = new BigInt64Array(n);
  const ts = new BigInt64Array(n);
  const status = new Int16Array(n);
  // validity bitmaps of the nullable number columns (an imported row may lack a time, a status, a body size)
  const tsValid = new Uint8Array((n + 7) >> 3).fill(0xff);
  const statusValid = new Uint8Array((n + 7) >> 3).fill(0xff);
  const lengthValid = new Uint8Array((n + 7) >> 3).fill(0xff);
  let tsNulls = 0;
  let statusNulls = 0;
  let lengthNulls = 0;
  const contentLength = new Int32Array(n);
  const outlinkCount = new Int32Array(n);
  const warcOffset = new BigInt64Array(n);
  const warcLength = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    u32[i] = r.datasetId;
    urlId[i] = r.urlId;
    if (r.timestamp === null) {
      tsNulls++;
      tsValid[i >> 3]! &= ~(1 << (i & 7));
    } else ts[i] = BigInt(r.timestampMs ?? cdxTimestampToMillis(r.timestamp)) * 1000n;
    if (r.status === null) {
      statusNulls++;
      statusValid[i >> 3]! &= ~(1 << (i & 7));
    } else status[i] = r.status;
    if (r.contentLength === null) {
      lengthNulls++;
      lengthValid[i >> 3]! &= ~(1 << (i & 7));
    } else contentLength[i] = r.contentLength;
    outlinkCount[i] = r.outlinks.length;
    warcOffset[i] = BigInt(r.warcOffset);
    warcLength[i] = r.warcLength;
  }
  const prim = <T extends DataType>(type: T, data: ArrayLike<unknown>, nulls = 0, valid: Uint8Array | null = null): Data<T> =>
    (makeData as (props: object) => Data)({ type, length: n, nullCount: nulls, nullBitmap: nulls === 0 ? null : valid, data }) as Data<T>;
  const str = (get: (r: PartRow) => string | null) => stringData(rows, get);
  const children: Data[] = [
    prim(new Uint32(), u32),
    prim(new Int64(), urlId),
    str((r) => r.url),
    str((r) => r.rawUrl),
    str((r) => r.host),
    str((r) => r.domain),
    str((r) => r.privateDomain),
    str((r) => r.surt),
    prim(new TimestampMicrosecond('UTC'), ts, tsNulls, tsValid),
    prim(new Int16(), status, statusNulls, statusValid),
    str((r) => r.mime),
    str((r) => r.charset),
    str((r) => r.languages),
    str((r) => r.title),
    str(opts.includeText ? (r) => r.text : () => null),
    prim(new Int32(), contentLength, lengthNulls, lengthValid),
    prim(new Int32(), outlinkCount),
    listData(rows, opts.includeOutlinks ? (r) => r.outlinks : () => []),
    listData(rows, opts.includeOutlinks ? (r) => r.outlinkDomains : () => []),
    str((r) => r.warcFilename),
    prim(new Int64(), warcOffset),
    prim(new Int32(), warcLength),
    str((r) => r.digest),
    str((r) => r.extras ?? null),
    str((r) => r.textLanguage ?? null),
    nullableNumbers(rows, new Float32(), Float32Array, (r) => r.textLanguageConfidence ?? null),
    ...QUALITY_COLUMNS.map(([name, field]) => (name === 'word_count'
      ? nullableNumbers(rows, new Int32(), Int32Array, (r) => r.quality?.[field] ?? null)
      : nullableNumbers(rows, new Float32(), Float32Array, (r) => r.quality?.[field] ?? null))),
    str((r) => r.droppedBy ?? null),
  ];
  const struct = makeData({ type: new Struct(SCHEMA.fields), length: n, nullCount: 0, children });
  return new RecordBatch(SCHEMA, struct);
}

/** A nullable number column: values, validity bitmap (none when no row is null). */
function nullableNumbers<T extends Int32 | Float32>(
  rows: readonly PartRow[], type: T, Arr: Int32ArrayConstructor | Float32ArrayConstructor, get: (r: PartRow) => number | null,
): Data<T> {
  const n = rows.length;
  const values = new Arr(n);
  const valid = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const v = get(rows[i]!);
    if (v === null) nulls++;
    else {
      values[i] = v;
      valid[i >> 3] = (valid[i >> 3] ?? 0) | (1 << (i & 7));
    }
  }
  return (makeData as (props: object) => Data)({ type, length: n, nullCount: nulls, nullBitmap: nulls === 0 ? null : valid, data: values }) as Data<T>;
}

/** Growable UTF-8 byte buffer written in place (no per-string allocation). */
class ByteSink {
  buf = Buffer.allocUnsafe(1 << 16);
  len = 0;
  push(s: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit
    const need = this.len + s.length * 3;
    if (need > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2));
      this.buf.copy(next, 0, 0, this.len);
      this.buf = next;
    }
    this.len += this.buf.write(s, this.len, 'utf8');
  }
  bytes(): Uint8Array {
    return new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.len);
  }
}

function stringData(rows: readonly PartRow[], get: (r: PartRow) => string | null): Data<Utf8> {
  const n = rows.length;
  const offsets = new Int32Array(n + 1);
  const validity = new Uint8Array((n + 7) >> 3);
  const sink = new ByteSink();
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const v = get(rows[i]!);
    if (v === null || v === undefined) nulls++;
    else {
      validity[i >> 3] = (validity[i >> 3] ?? 0) | (1 << (i & 7));
      sink.push(v);
    }
    offsets[i + 1] = sink.len;
  }
  return makeData({
    type: utf8, length: n, nullCount: nulls, nullBitmap: nulls === 0 ? null : validity, valueOffsets: offsets, data: sink.bytes(),
  });
}

function listData(rows: readonly PartRow[], links: (r: PartRow) => readonly string[]): Data<List<Utf8>> {
  const n = rows.length;
  const listOffsets = new Int32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += links(rows[i]!).length;
    listOffsets[i + 1] = total;
  }
  const itemOffsets = new Int32Array(total + 1);
  const sink = new ByteSink();
  let k = 0;
  for (let i = 0; i < n; i++) {
    for (const link of links(rows[i]!)) {
      sink.push(link);
      itemOffsets[++k] = sink.len;
    }
  }
  const child = makeData({ type: utf8, length: total, nullCount: 0, valueOffsets: itemOffsets, data: sink.bytes() });
  return makeData({ type: new List(LIST_ITEM), length: n, nullCount: 0, valueOffsets: listOffsets, child });
}
