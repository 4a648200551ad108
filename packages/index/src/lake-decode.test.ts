import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadata, parquetReadObjects, parquetSchema, type FileMetaData } from 'hyparquet';
import { decompress } from 'fzstd';
import type { DuckDBInstance } from '@duckdb/node-api';
import { openDuck, sqlString } from './duck';
import { decodeFlatChunk, isStrings, packStrings, type Column } from './lake-decode';

// An independent ZSTD decoder for hyparquet's reference reads; the flat decoder gets the same one.
const compressors = { ZSTD: (input: Uint8Array) => decompress(input) };

let dir: string;
let db: DuckDBInstance;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-decode-'));
  db = await openDuck();
});
afterAll(async () => {
  db.closeSync();
  await rm(dir, { recursive: true, force: true });
});

const ROWS = 3000;

/** A file of every column kind the lake has (and a DOUBLE it does not), nulls sprinkled in, V1 or V2 pages. */
async function file(version: 'V1' | 'V2'): Promise<{ bytes: Buffer; meta: FileMetaData }> {
  const path = join(dir, `kinds-${version}.parquet`);
  const conn = await db.connect();
  try {
    await conn.run(`COPY (
      SELECT CASE WHEN i % 17 = 0 THEN NULL ELSE 'https://é.example/' || i END AS url,
             to_timestamp(1900000000 + i * 7.25) AS ts_us, (to_timestamp(1900000000 + i))::TIMESTAMP_MS AS ts_ms,
             (to_timestamp(1900000000 + i))::TIMESTAMP_NS AS ts_ns,
             CASE WHEN i % 5 = 0 THEN NULL ELSE (i % 3)::SMALLINT END AS status, (i * 1000003)::BIGINT AS big,
             CASE WHEN i % 4 = 0 THEN NULL ELSE 'T' || (i % 9) END AS title,
             CASE WHEN i % 3 = 0 THEN NULL ELSE repeat('héllo 𝄞 ', (i % 4)::INTEGER) END AS text, i / 3.0 AS d,
             make_timestamp_ns(1900000000999999999 + i * 1000003) AS ts_edge,
             '1969-12-31 23:59:59'::TIMESTAMP + to_microseconds(i * 7 - 10000) AS ts_neg, DATE '2030-01-01' + i::INTEGER AS day, i::UINTEGER AS unsigned
      FROM range(${ROWS}) t(i)
    ) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048, PARQUET_VERSION ${version})`);
  } finally {
    conn.closeSync();
  }
  const bytes = await readFile(path);
  return { bytes, meta: parquetMetadata(bytes) };
}

/** Column `name` of row group g decoded flat. */
function flat(bytes: Buffer, meta: FileMetaData, g: number, name: string, mode: 'bytes' | 'codePoints' = 'bytes'): Column | null {
  const m = meta.row_groups[g]!.columns.find((c) => c.meta_data!.path_in_schema[0] === name)!.meta_data!;
  const start = Number(m.dictionary_page_offset || m.data_page_offset);
  const tree = parquetSchema(meta);
  const leaf = tree.children.find((c) => c.element.name === name)!;
  return decodeFlatChunk(bytes.subarray(start, start + Number(m.total_compressed_size)), [tree, leaf], m.codec, compressors, Number(meta.row_groups[g]!.num_rows), mode);
}

const at = (c: Column, i: number): unknown =>
  isStrings(c) ? (c.nulls?.[i] === 1 ? null : c.bytes.toString('utf8', c.starts[i], c.ends[i])) : Number.isNaN(c[i]!) ? null : c[i];

describe.each(['V1', 'V2'] as const)('decodeFlatChunk (Parquet %s pages)', (pv) => {
  it('decodes every lake column kind as hyparquet does, nulls included; timestamps to ms in every unit', async () => {
    const { bytes, meta } = await file(pv);
    const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
    expect(meta.row_groups.length).toBe(2);
    for (let g = 0; g < 2; g++) {
      const start = g * 2048;
      const end = Math.min(ROWS, start + 2048);
      const ref = await parquetReadObjects({ file: buf, metadata: meta, compressors, rowStart: start, rowEnd: end });
      for (const name of ['url', 'title', 'status', 'big', 'ts_us', 'ts_ms', 'ts_ns', 'ts_edge', 'ts_neg']) {
        const col = flat(bytes, meta, g, name)!;
        const want = ref.map((r) => {
          const v = r[name] as unknown;
          return v instanceof Date ? v.getTime() : typeof v === 'bigint' ? Number(v) : v ?? null;
        });
        expect(Array.from({ length: end - start }, (_, i) => at(col, i))).toEqual(want);
      }
      // text as code points, without strings
      const lengths = flat(bytes, meta, g, 'text', 'codePoints')!;
      expect(Array.from({ length: end - start }, (_, i) => at(lengths, i))).toEqual(ref.map((r) => (r['text'] === null ? null : [...(r['text'] as string)].length)));
    }
    // column kinds the lake does not have are left to hyparquet's own path (it converts them)
    for (const name of ['d', 'day', 'unsigned']) expect(flat(bytes, meta, 0, name)).toBeNull();
  });
});

describe('packStrings', () => {
  it('keeps the page buffer when the values fill it, copies them out of a much bigger one', () => {
    const page = new Uint8Array(Buffer.from('aaabbbcc'));
    const views = [page.subarray(0, 3), null, page.subarray(3, 6), page.subarray(6, 8)];
    const kept = packStrings(views);
    expect(kept.bytes.buffer).toBe(page.buffer);
    expect([0, 1, 2, 3].map((i) => (kept.nulls?.[i] ? null : kept.bytes.toString('utf8', kept.starts[i], kept.ends[i])))).toEqual(['aaa', null, 'bbb', 'cc']);
    const big = new Uint8Array(1 << 20);
    big.set(Buffer.from('xyz'), 500_000);
    const copied = packStrings([big.subarray(500_000, 500_003)]);
    expect(copied.bytes.buffer).not.toBe(big.buffer);
    expect(copied.bytes.length).toBe(3);
    expect(copied.bytes.toString('utf8', copied.starts[0], copied.ends[0])).toBe('xyz');
  });
});
