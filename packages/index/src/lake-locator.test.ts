import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { decompress } from 'fzstd';
import { MemoryObjectStore } from '@ccpipe/adapters';
import { RecordingStore } from '../../../tests/support/recording-store';
import type { DuckDBInstance } from '@duckdb/node-api';
import { openDuck, sqlString } from './duck';
import { crcOf, indexLayout, type LakeFileEntry } from './format';
import { LOCATOR_COLUMNS, buildLocator, decodeLocator, locatorChunk, locatorMetadata } from './lake-locator';
import { ParquetLakeReader } from './lake-reader';

let dir: string;
let db: DuckDBInstance;
let bytes: Buffer;
// an independent ZSTD decoder (the reader itself uses libzstd in wasm)
const compressors = { ZSTD: (input: Uint8Array) => decompress(input) };
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-locator-'));
  db = await openDuck();
  const conn = await db.connect();
  const path = join(dir, 'f.parquet');
  try {
    // 5,000 rows in 2,048-row groups; title has a dictionary page, url does not
    await conn.run(`COPY (
      SELECT i::BIGINT AS domain64, (hash(i) % 9223372036854775807)::BIGINT AS url_id, 'https://x.example/' || lpad(i::VARCHAR, 6, '0') AS url, to_timestamp(1900000000 + i) AS ts,
             200::SMALLINT AS status, 'T' || (i % 3) AS title, 'w.warc.gz' AS warc_filename, i::BIGINT AS warc_offset, 10::INTEGER AS warc_length
      FROM range(5000) t(i) ORDER BY i
    ) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048, PARQUET_VERSION V2)`);
  } finally {
    conn.closeSync();
  }
  bytes = await readFile(path);
});
/** The files.json entry of lake file `key` holding `b`, with its locator `loc`; `rowGroups` as [first row, rows]. */
function entryOf(key: string, prefix: string, b: Uint8Array, loc: Uint8Array, rowGroups: [number, number][]): LakeFileEntry {
  return {
    key, datasetId: 1, prefix, rows: rowGroups.reduce((a, [, n]) => a + n, 0), bytes: b.length, crc32: crcOf(b), rowGroups,
    locator: { key: indexLayout.locatorOf(key), bytes: loc.length, crc32: crcOf(loc) },
  };
}

afterAll(async () => {
  db.closeSync();
  await rm(dir, { recursive: true, force: true });
});

describe('row-group locator', () => {
  it('describes every row group and the chunks of the columns the API reads, as the footer does', async () => {
    const meta = parquetMetadata(bytes);
    const loc = decodeLocator(buildLocator(bytes), 'k');
    expect(loc.starts).toEqual([0, 2048, 4096, 5000]);
    const inFile = new Set(meta.schema.map((e) => e.name));
    expect(loc.columns.map((c) => c.name)).toEqual(LOCATOR_COLUMNS.filter((c) => inFile.has(c)));
    expect(loc.columns.length).toBeGreaterThan(5);
    // smaller than the footer it replaces (which also carries statistics of every column)
    expect(buildLocator(bytes).length).toBeLessThan(meta.metadata_length);
    for (let g = 0; g < 3; g++) {
      const m = locatorMetadata(loc, g, ['url', 'title']);
      const want = meta.row_groups[g]!.columns.filter((c) => ['url', 'title'].includes(c.meta_data!.path_in_schema[0]!));
      expect(m.row_groups[0]!.columns.map((c) => c.meta_data!.data_page_offset)).toEqual(want.map((c) => c.meta_data!.data_page_offset));
      expect(m.row_groups[0]!.columns.map((c) => c.meta_data!.dictionary_page_offset)).toEqual(want.map((c) => c.meta_data!.dictionary_page_offset));
      // hyparquet decodes a row group from the locator's metadata alone: same rows as from the file's own footer
      const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;
      const got = await parquetReadObjects({ file, metadata: m, columns: ['url', 'title'], compressors });
      const start = loc.starts[g]!;
      const ref = await parquetReadObjects({ file, metadata: meta, columns: ['url', 'title'], compressors, rowStart: start, rowEnd: loc.starts[g + 1]! });
      expect(got).toEqual(ref);
    }
  });

  it('records the CRC32 of every chunk it describes (version 2); a version-1 locator still reads, without them', async () => {
    const v2 = decodeLocator(buildLocator(bytes), 'k');
    const v1 = decodeLocator(buildLocator(bytes, { version: 1 }), 'k');
    expect([v2.fields, v1.fields]).toEqual([5, 4]);
    expect(v1.starts).toEqual(v2.starts);
    for (let g = 0; g < 3; g++) {
      v2.columns.forEach((_c, k) => {
        const at = locatorChunk(v2, g, k);
        const start = at.dictOffset > 0 ? at.dictOffset : at.dataOffset;
        expect(at.crc32).toBe(crcOf(bytes.subarray(start, start + at.size)));
        expect({ ...locatorChunk(v1, g, k), crc32: at.crc32 }).toEqual(at);
        expect(locatorChunk(v1, g, k).crc32).toBeNull();
      });
    }
    // the older layout answers the same rows
    const key = 'urls/dataset_id=1/domain_prefix=00/part-v000001.parquet';
    const loc = buildLocator(bytes, { version: 1 });
    const store = new MemoryObjectStore();
    await store.put(key, bytes);
    await store.put(indexLayout.locatorOf(key), loc);
    const file = entryOf(key, '00', bytes, loc, [[0, 2048], [2048, 2048], [4096, 904]]);
    const reader = new ParquetLakeReader({ store });
    expect((await reader.rows(file, 4094, 4097)).map((r) => r.url)).toEqual(['https://x.example/004094', 'https://x.example/004095', 'https://x.example/004096']);
    expect(reader.stats().locatorFallbacks).toBe(0);
  });

  it('a chunk whose bytes differ from its CRC32 is refused and counted, every time; other row groups still answer', async () => {
    const key = 'urls/dataset_id=1/domain_prefix=00/part-v000001.parquet';
    const loc = buildLocator(bytes);
    const decoded = decodeLocator(loc, key);
    // one byte flipped in the middle of row group 1's title chunk (a dictionary page, then data)
    const k = decoded.columns.findIndex((c) => c.name === 'title');
    const at = locatorChunk(decoded, 1, k);
    const damaged = Buffer.from(bytes);
    damaged[(at.dictOffset > 0 ? at.dictOffset : at.dataOffset) + Math.floor(at.size / 2)]! ^= 0x01;
    const store = new MemoryObjectStore();
    await store.put(key, damaged);
    await store.put(indexLayout.locatorOf(key), loc);
    const file = entryOf(key, '00', damaged, loc, [[0, 2048], [2048, 2048], [4096, 904]]);
    const reader = new ParquetLakeReader({ store });
    for (const n of [1, 2]) {
      await expect(reader.rows(file, 2047, 2050)).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC', detail: { key, rowGroup: 1, column: 'title' } });
      expect(reader.stats().damagedChunks).toBe(n);
    }
    expect((await reader.rows(file, 0, 2)).map((r) => r.title)).toEqual(['T0', 'T1']);
    expect((await reader.rows(file, 4096, 4098)).map((r) => r.url)).toEqual(['https://x.example/004096', 'https://x.example/004097']);
  });

  it('refuses bytes that are not a locator', () => {
    const good = buildLocator(bytes);
    expect(() => decodeLocator(good.subarray(0, 8), 'k')).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    const wrong = Buffer.from(good);
    wrong.writeUInt32LE(0, 0);
    expect(() => decodeLocator(wrong, 'k')).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    expect(() => decodeLocator(Buffer.concat([good, Buffer.alloc(8)]), 'k')).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
  });

  it('a missing or damaged locator is counted and the file is read by its own footer; a good one never touches the footer', async () => {
    const key = 'urls/dataset_id=1/domain_prefix=00/part-v000001.parquet';
    const loc = buildLocator(bytes);
    const store = new RecordingStore();
    await store.put(key, bytes);
    const file = entryOf(key, '00', bytes, loc, [[0, 2048], [2048, 2048], [4096, 904]]);
    const want = ['https://x.example/002047', 'https://x.example/002048', 'https://x.example/002049'];
    const footerReads = () => store.ranges.filter((r) => r.key === key && r.offset + r.length === bytes.length).length;
    // a byte of the offsets table flipped: caught by the CRC
    const damaged = Buffer.from(loc);
    damaged[damaged.length - 3]! ^= 0xff;
    for (const [what, stored, fallbacks] of [['missing', null, 1], ['damaged', damaged, 1], ['good', loc, 0]] as const) {
      if (stored !== null) await store.put(indexLayout.locatorOf(key), stored);
      store.ranges = [];
      const reader = new ParquetLakeReader({ store });
      expect([what, (await reader.rows(file, 2047, 2050)).map((r) => r.url)]).toEqual([what, want]);
      expect([what, reader.stats().locatorFallbacks, footerReads()]).toEqual([what, fallbacks, fallbacks]);
    }
  });
});

describe('a lake column the flat decoder does not take', () => {
  it('is read through hyparquet’s own path, with the locator and with the footer', async () => {
    // status as DOUBLE: not a kind the lake writes, so lake-decode declines it and the generic path answers
    const path = join(dir, 'double.parquet');
    const conn = await db.connect();
    try {
      await conn.run(`COPY (SELECT 'https://y.example/' || i AS url, to_timestamp(1900000000 + i) AS ts, (200 + i % 2)::DOUBLE AS status, NULL::VARCHAR AS title
        FROM range(3000) t(i)) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048)`);
    } finally {
      conn.closeSync();
    }
    const b = await readFile(path);
    const key = 'urls/dataset_id=1/domain_prefix=01/part-v000001.parquet';
    const loc = buildLocator(b);
    const store = new MemoryObjectStore();
    await store.put(key, b);
    await store.put(indexLayout.locatorOf(key), loc);
    const file = entryOf(key, '01', b, loc, [[0, 2048], [2048, 952]]);
    for (const locators of [true, false]) {
      const rows = await new ParquetLakeReader({ store, locators }).rows(file, 2047, 2050);
      expect(rows).toEqual([2047, 2048, 2049].map((i) => ({
        urlId: null, url: `https://y.example/${i}`, ts: new Date((1900000000 + i) * 1000).toISOString().replace('.000Z', 'Z'), status: 200 + (i % 2), title: null,
      })));
    }
    // the same path checks the chunk it reads: status of row group 1 damaged
    const decoded = decodeLocator(loc, key);
    const at = locatorChunk(decoded, 1, decoded.columns.findIndex((c) => c.name === 'status'));
    const damaged = Buffer.from(b);
    damaged[(at.dictOffset > 0 ? at.dictOffset : at.dataOffset) + Math.floor(at.size / 2)]! ^= 0x01;
    await store.put(key, damaged);
    // flat: refused as its chunks are fetched; hyparquet's path alone: refused before hyparquet reads the chunk
    for (const decoder of ['flat', 'hyparquet'] as const) {
      const reader = new ParquetLakeReader({ store, decoder });
      await expect(reader.rows(file, 2047, 2050)).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC', detail: { column: 'status', rowGroup: 1 } });
      expect(reader.stats().damagedChunks).toBe(1);
      expect((await reader.rows(file, 0, 1)).map((r) => r.status)).toEqual([200]);
    }
  });
});
