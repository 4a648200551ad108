import { zstdDecompress, type ZstdDecoder } from './zstd';
import { parquetMetadataAsync, parquetRead, type AsyncBuffer, type FileMetaData } from 'hyparquet';
import type { ObjectStore } from '@ccpipe/core';
import { IndexFormatError, crcOf, type LakeFileEntry } from './format';
import { decodeLocator, locatorMetadata, type LakeLocator } from './lake-locator';
import { RowGroupCache, type RowGroupCacheStats } from './row-group-cache';

/** One lake row as a URL page shows it. `urlId` null = not read: the view computes `collisions[url] ?? urlId(url)`. */
export interface LakeUrlRow {
  urlId: bigint | null;
  url: string;
  /** ISO 8601 UTC, whole seconds without a fraction. */
  ts: string;
  status: number;
  title: string | null;
}

/** One lake row as a capture lookup shows it. */
export interface LakeCaptureRow extends LakeUrlRow {
  /** Characters (code points) of the extracted text, or null when there is none. */
  textLength: number | null;
  warc: { filename: string; offset: number; length: number };
}

/** How a {@link LakeIndexView} reads lake rows (the Parquet reader below, or the DuckDB one kept for comparison). */
export interface LakeReads {
  /** Rows [from, to) of a lake file, in file order. */
  rows(file: LakeFileEntry, from: number, to: number): Promise<LakeUrlRow[]>;
  /** The rows within [from, to) of a lake file whose `url` equals `url`. */
  find(file: LakeFileEntry, from: number, to: number, url: string): Promise<LakeCaptureRow[]>;
  /** Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link ParquetLakeReader}. */
export interface ParquetLakeReaderOptions {
  store: ObjectStore;
  /** Bound of the decoded column-chunk cache, estimated bytes (default 256 MiB; 0 caches nothing). */
  cacheBytes?: number;
  /** Bound of the parsed-footer cache, estimated bytes (default 32 MiB). */
  footerCacheBytes?: number;
  /**
   * ZSTD decoder of lake pages (default `wasm`: libzstd in WebAssembly, loaded by `initZstd()` — `openIndexSource`
   * does that; `js`: fzstd, ~4.5× slower on cold pages, kept for comparison and as the fallback).
   */
  zstd?: ZstdDecoder;
}

/** What a reader knows of a lake file's layout: its row-group locator (written by the merger), else its parsed footer. */
interface Footer {
  meta: FileMetaData | null;
  locator: LakeLocator | null;
  /** First row of each row group, plus the row count at the end. */
  starts: number[];
  columns: Set<string>;
}

type Column = ArrayLike<unknown>;

const FOOTER_TAIL = 64 * 1024;

/**
 * Cache identity of a lake file: its key plus the CRC32 and size files.json records. Keys are unique per version
 * name, but a wiped and rebuilt store reuses version names, so the key alone could serve another file's bytes.
 */
const identityOf = (file: LakeFileEntry): string => `${file.key}#${file.crc32}#${file.bytes}`;
const PAGE_COLUMNS = ['url', 'ts', 'status', 'title'] as const;
const CAPTURE_COLUMNS = ['ts', 'status', 'title', 'warc_filename', 'warc_offset', 'warc_length'] as const;
/** The `text` column read as its code-point count: the text itself is never turned into a string. */
const TEXT_LENGTH = 'text#length';

const tsMs = (v: bigint, per: bigint): number => Number(v / per);
const TS_PARSERS = {
  timestampFromMilliseconds: (v: bigint) => Number(v),
  timestampFromMicroseconds: (v: bigint) => tsMs(v, 1000n),
  timestampFromNanoseconds: (v: bigint) => tsMs(v, 1_000_000n),
};

/**
 * Lake rows through any ObjectStore (local directory or S3) with hyparquet: each file's footer is fetched once (a
 * 64 KiB tail `getRange`, more only for a longer footer) and kept, keyed by file key — lake files are immutable,
 * so footers and decoded chunks are shared across index versions. A read touches only the row groups overlapping
 * its row range and only the columns it needs (one `getRange` per column chunk); decoded column chunks stay in a
 * bytes-bounded LRU, so a hot domain's pages are answered from memory. `url_id` is never read: it is
 * `collisions[url] ?? urlId(url)` by construction (docs/index-format.md), computed by the view for the rows it
 * returns — cheaper than decoding the lake's least compressible column. Safe to share between views.
 */
export class ParquetLakeReader implements LakeReads {
  private readonly store: ObjectStore;
  private readonly chunks: RowGroupCache<Column>;
  private readonly footers: RowGroupCache<Footer>;
  private readonly compressors: { ZSTD: (input: Uint8Array, outputLength: number) => Uint8Array };

  constructor(opts: ParquetLakeReaderOptions) {
    this.store = opts.store;
    const decoder = opts.zstd ?? 'wasm';
    this.compressors = { ZSTD: (input, outputLength) => zstdDecompress(input, outputLength, decoder) };
    this.chunks = new RowGroupCache(opts.cacheBytes ?? 256 * 1024 * 1024);
    this.footers = new RowGroupCache(opts.footerCacheBytes ?? 32 * 1024 * 1024);
  }

  async rows(file: LakeFileEntry, from: number, to: number): Promise<LakeUrlRow[]> {
    const ft = await this.footer(file);
    need(ft, file, ['url', 'ts', 'status']);
    const out: LakeUrlRow[] = [];
    const groups = groupsOf(ft, from, to);
    const loaded = await Promise.all(groups.map((g) => this.columns(file, ft, g, PAGE_COLUMNS)));
    groups.forEach((g, k) => {
      const c = loaded[k]!;
      const lo = Math.max(from, ft.starts[g]!) - ft.starts[g]!;
      const hi = Math.min(to, ft.starts[g + 1]!) - ft.starts[g]!;
      for (let i = lo; i < hi; i++) out.push(urlRow(c, i));
    });
    return out;
  }

  async find(file: LakeFileEntry, from: number, to: number, url: string): Promise<LakeCaptureRow[]> {
    const ft = await this.footer(file);
    need(ft, file, ['url', 'ts', 'status', 'warc_filename', 'warc_offset', 'warc_length']);
    const out: LakeCaptureRow[] = [];
    for (const g of groupsOf(ft, from, to)) {
      const urls = await this.column(file, ft, g, 'url');
      const lo = Math.max(from, ft.starts[g]!) - ft.starts[g]!;
      const hi = Math.min(to, ft.starts[g + 1]!) - ft.starts[g]!;
      const hits: number[] = [];
      for (let i = lo; i < hi; i++) if (urls[i] === url) hits.push(i);
      if (hits.length === 0) continue;
      // only a row group holding the URL decodes the rest (text as lengths only)
      const c = await this.columns(file, ft, g, ['url', ...CAPTURE_COLUMNS, TEXT_LENGTH]);
      for (const i of hits) {
        const len = c.get(TEXT_LENGTH)?.[i];
        out.push({
          ...urlRow(c, i),
          textLength: typeof len === 'number' ? len : null,
          warc: { filename: String(c.get('warc_filename')![i]), offset: Number(c.get('warc_offset')![i]), length: Number(c.get('warc_length')![i]) },
        });
      }
    }
    return out;
  }

  /** Cache counters (decoded column chunks). */
  stats(): RowGroupCacheStats {
    return this.chunks.stats();
  }

  async close(): Promise<void> {
    // nothing to release: the caches are plain memory
  }

  private footer(file: LakeFileEntry): Promise<Footer> {
    return this.footers.getOrLoad(identityOf(file), async () => {
      if (file.locator !== undefined) {
        const { key, bytes, crc32 } = file.locator;
        const b = await this.store.getRange(key, 0, bytes);
        if (b.length !== bytes || crcOf(b) !== crc32) throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'lake locator does not match its checksum', { key });
        const locator = decodeLocator(b, key);
        const columns = new Set(locator.schema.slice(1).map((e) => e.name));
        return { value: { meta: null, locator, starts: locator.starts, columns }, bytes: 1024 + b.length * 2 };
      }
      let meta: FileMetaData;
      try {
        meta = await parquetMetadataAsync(this.asyncBuffer(file), { initialFetchSize: Math.min(FOOTER_TAIL, file.bytes) });
      } catch (err) {
        if (isStoreError(err)) throw err;
        throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lake file footer cannot be parsed', { key: file.key, reason: String(err).slice(0, 200) });
      }
      const starts = [0];
      for (const rg of meta.row_groups) starts.push(starts[starts.length - 1]! + Number(rg.num_rows));
      const columns = new Set(meta.schema.slice(1).map((e) => e.name));
      return { value: { meta, locator: null, starts, columns }, bytes: 1024 + Number(meta.metadata_length) * 4 };
    });
  }

  /**
   * The named columns of row group g (absent ones left out), each from the cache or decoded: the missing ones in one
   * read (hyparquet fetches adjacent chunks as one range), the text lengths on their own (another string parser).
   */
  private async columns(file: LakeFileEntry, ft: Footer, g: number, names: readonly string[]): Promise<Map<string, Column>> {
    const present = names.filter((n) => ft.columns.has(n === TEXT_LENGTH ? 'text' : n));
    const keyOf = (n: string) => `${identityOf(file)}\u0000${g}\u0000${n}`;
    const missing = present.filter((n) => n !== TEXT_LENGTH && !this.chunks.has(keyOf(n)));
    let batch: Promise<Map<string, Column>> | null = null;
    const cols = await Promise.all(
      present.map((n) =>
        this.chunks.getOrLoad(keyOf(n), async () => {
          let value = missing.includes(n) ? (await (batch ??= this.decode(file, ft, g, missing))).get(n) : undefined;
          value ??= (await this.decode(file, ft, g, [n])).get(n)!;
          return { value, bytes: sizeOf(value) };
        }),
      ),
    );
    return new Map(present.map((n, i) => [n, cols[i]!]));
  }

  private async column(file: LakeFileEntry, ft: Footer, g: number, name: string): Promise<Column> {
    return (await this.columns(file, ft, g, [name])).get(name)!;
  }

  /** Decodes whole column chunks of row group g (all `names` share one string parser: never mix in TEXT_LENGTH). */
  private async decode(file: LakeFileEntry, ft: Footer, g: number, names: readonly string[]): Promise<Map<string, Column>> {
    const rows = ft.starts[g + 1]! - ft.starts[g]!;
    const physical = names.map((n) => (n === TEXT_LENGTH ? 'text' : n));
    // with a locator, a one-row-group metadata (rows [0, rows)); with a footer, the file's own (rows of group g)
    const start = ft.locator === null ? ft.starts[g]! : 0;
    const parts = new Map<string, { at: number; data: Column }[]>(physical.map((c) => [c, []]));
    await parquetRead({
      file: this.asyncBuffer(file),
      metadata: ft.locator === null ? ft.meta! : locatorMetadata(ft.locator, g, physical),
      columns: physical,
      rowStart: start,
      rowEnd: start + rows,
      compressors: this.compressors,
      parsers: names.includes(TEXT_LENGTH) ? { ...TS_PARSERS, stringFromBytes: codePoints } : TS_PARSERS,
      onChunk: (c) => parts.get(c.columnName)?.push({ at: c.rowStart - start, data: c.columnData as Column }),
    });
    return new Map(names.map((n, i) => [n, joinParts(parts.get(physical[i]!)!, rows)]));
  }

  private asyncBuffer(file: LakeFileEntry): AsyncBuffer {
    return {
      byteLength: file.bytes,
      slice: async (s: number, e?: number) => {
        const b = await this.store.getRange(file.key, s, (e ?? file.bytes) - s);
        return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? (b.buffer as ArrayBuffer) : (b.slice().buffer as ArrayBuffer);
      },
    };
  }
}

function need(ft: Footer, file: LakeFileEntry, names: readonly string[]): void {
  const missing = names.filter((n) => !ft.columns.has(n));
  if (missing.length > 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lake file lacks a column', { key: file.key, missing });
}

/** Row groups overlapping rows [from, to): a binary search over the row-group starts. */
export function groupsOf(ft: { starts: readonly number[] }, from: number, to: number): number[] {
  const n = ft.starts.length - 1;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (ft.starts[mid]! <= from) lo = mid;
    else hi = mid - 1;
  }
  const out: number[] = [];
  for (let g = lo; g < n && ft.starts[g]! < to; g++) if (ft.starts[g + 1]! > from) out.push(g);
  return out;
}

function urlRow(c: Map<string, Column>, i: number): LakeUrlRow {
  const title = c.get('title')?.[i];
  return {
    urlId: null,
    url: c.get('url')![i] as string,
    ts: isoSeconds(c.get('ts')![i]),
    status: Number(c.get('status')![i]),
    title: typeof title === 'string' ? title : null,
  };
}

function isoSeconds(v: unknown): string {
  const d = v instanceof Date ? v : new Date(Number(v));
  return d.toISOString().replace('.000Z', 'Z');
}

function joinParts(parts: { at: number; data: Column }[], rows: number): Column {
  if (parts.length === 1 && parts[0]!.at === 0 && parts[0]!.data.length === rows) return parts[0]!.data;
  const out: unknown[] = new Array(rows).fill(null);
  for (const p of parts) for (let i = 0; i < p.data.length; i++) out[p.at + i] = p.data[i];
  return out;
}

/** Estimated heap bytes of a decoded column chunk (V8: one-byte strings ≈ 24 B + length; slots 8 B). */
function sizeOf(c: Column): number {
  if (ArrayBuffer.isView(c)) return 64 + c.byteLength;
  let n = 64 + 8 * c.length;
  for (let i = 0; i < c.length; i++) {
    const v = c[i];
    if (typeof v === 'string') n += 24 + v.length;
    else if (typeof v === 'bigint') n += 24;
    else if (v instanceof Date) n += 48;
  }
  return n;
}

/** Unicode code points of UTF-8 bytes (what DuckDB's `length(text)` counts), without building the string. */
function codePoints(b: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < b.length; i++) if ((b[i]! & 0xc0) !== 0x80) n++;
  return n;
}

function isStoreError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'string' && !(err instanceof IndexFormatError);
}
