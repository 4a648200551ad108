import { zstdDecompress, type ZstdDecoder } from './zstd';
import { parquetMetadataAsync, parquetRead, parquetSchema, type AsyncBuffer, type FileMetaData, type SchemaTree } from 'hyparquet';
import type { CompressionCodec } from 'hyparquet/src/types.js';
import { hasCode, isoOfMs, NO_STATUS, NO_TIME, primaryLanguage, type ObjectStore } from '@ccpipe/core';
import { IndexFormatError, crcOf, type LakeFileEntry } from './format';
import { codePoints, decodeFlatChunk, decodeFlatRows, isStrings, packStrings, type Column, type PackedStrings } from './lake-decode';
import { decodeLocator, locatorChunk, locatorMetadata, type LakeLocator } from './lake-locator';
import { RowGroupCache, type RowGroupCacheStats } from './row-group-cache';

/** One lake row as a URL page shows it. `urlId` null = not read: the view computes `collisions[url] ?? urlId(url)`. */
export interface LakeUrlRow {
  urlId: bigint | null;
  url: string;
  /** ISO 8601 UTC, whole seconds without a fraction; null for an imported row without a time. */
  ts: string | null;
  /** Null for an imported row without a status. */
  status: number | null;
  title: string | null;
}

/** One lake row as a capture lookup shows it. */
export interface LakeCaptureRow extends LakeUrlRow {
  /** Characters (code points) of the extracted text, or null when there is none. */
  textLength: number | null;
  /** Primary language of the row's `languages` (null when none, or the lake has no such column). */
  language: string | null;
  /** `content_length` (null when the lake has no such column). */
  contentLength: number | null;
  /** The extracted text, read only when asked for (`find(…, {text: true})`): null when there is none. */
  text?: string | null;
  /** Null for an imported row (its `warc_filename` is empty: no WARC record behind it). */
  warc: { filename: string; offset: number; length: number } | null;
  /** The `extras` column's JSON (an imported row's other columns); null when none, or the file has no such column. */
  extras: string | null;
  /** The language of the extracted text (ISO 639-3) and its confidence; null when undetermined or not in the file. */
  textLanguage: string | null;
  textLanguageConfidence: number | null;
  /** The row's number in its file (its position in the dataset is the file's `posBase` plus this). */
  row?: number;
}

/** One lake row as a web-table page reads it (row key, filters, what a page item shows). */
export interface LakePageRow {
  url: string;
  /** The lake's `surt` column when it has one (lake columns 'all'), else null: the view computes it from `url`. */
  surt: string | null;
  /** Epoch ms; NO_TIME (core) for an imported row without a time. */
  ts: number;
  /** NO_STATUS (core) for an imported row without one. */
  status: number;
  title: string | null;
  contentLength: number | null;
  language: string | null;
}

/** How a {@link LakeIndexView} reads lake rows (the Parquet reader below, or the DuckDB one kept for comparison). */
export interface LakeReads {
  /** Rows [from, to) of a lake file, in file order. */
  rows(file: LakeFileEntry, from: number, to: number): Promise<LakeUrlRow[]>;
  /** The rows within [from, to) of a lake file whose `url` equals `url` (with their text when `opts.text`). */
  find(file: LakeFileEntry, from: number, to: number, url: string, opts?: { text?: boolean }): Promise<LakeCaptureRow[]>;
  /** Rows [from, to) of a lake file with the columns a web-table page filters, orders and shows, in file order. */
  scan(file: LakeFileEntry, from: number, to: number): Promise<LakePageRow[]>;
  /** Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link ParquetLakeReader}. */
export interface ParquetLakeReaderOptions {
  store: ObjectStore;
  /** Bound of the decoded column-chunk cache, estimated bytes (default 256 MiB; 0 caches nothing). */
  cacheBytes?: number;
  /** Bound of the cache of texts read by `find(…, {text: true})`, estimated bytes (default 64 MiB; 0 caches nothing). */
  textCacheBytes?: number;
  /** Bound of the parsed-footer cache, estimated bytes (default 32 MiB). */
  footerCacheBytes?: number;
  /**
   * ZSTD decoder of lake pages (default `wasm`: libzstd in WebAssembly, loaded by `initZstd()` — `openIndexSource`
   * does that; `js`: fzstd, ~4.5× slower on cold pages, kept for comparison and as the fallback).
   */
  zstd?: ZstdDecoder;
  /**
   * Read a file's layout from its row-group locator when files.json lists one (default true); false always parses
   * the Parquet footer, as before locators existed (kept for comparison in bench/api.bench.js).
   */
  locators?: boolean;
  /**
   * How column chunks are decoded: `flat` (default: lake-decode.ts, straight into packed columns) or `hyparquet`
   * (its full `parquetRead` row assembly, then packed — the path before flat decoding, kept for comparison).
   */
  decoder?: 'flat' | 'hyparquet';
}

/** What a reader knows of a lake file's layout: its row-group locator (written by the merger), else its parsed footer. */
interface Footer {
  meta: FileMetaData | null;
  locator: LakeLocator | null;
  /** First row of each row group, plus the row count at the end. */
  starts: number[];
  columns: Set<string>;
  /** The schema as a tree (paths for the page decoders). */
  tree: SchemaTree;
}

/** Where one column chunk of a row group sits. */
interface ChunkAt {
  name: string;
  start: number;
  size: number;
  codec: CompressionCodec;
  /** CRC32 of the chunk's bytes, from a version-2 locator; null when nothing records it (footer, version 1). */
  crc32: number | null;
}

/** Column chunks of one row group closer than this are fetched as one range (the gap is read and dropped). */
const GAP = 8 * 1024;

/** Row i of a string column (null for a null row). */
function str(c: Column | undefined, i: number): string | null {
  if (c === undefined || !isStrings(c) || c.nulls?.[i] === 1) return null;
  return c.bytes.toString('utf8', c.starts[i]!, c.ends[i]!);
}

/** Row i of a numeric column (null for a null row). */
function num(c: Column | undefined, i: number): number | null {
  if (c === undefined || isStrings(c)) return null;
  const v = c[i]!;
  return Number.isNaN(v) ? null : v;
}

const FOOTER_TAIL = 64 * 1024;

/**
 * Cache identity of a lake file: its key plus the CRC32 and size files.json records. Keys are unique per version
 * name, but a wiped and rebuilt store reuses version names, so the key alone could serve another file's bytes.
 */
const identityOf = (file: LakeFileEntry): string => `${file.key}#${file.crc32}#${file.bytes}`;
const PAGE_COLUMNS = ['url', 'ts', 'status', 'title'] as const;
const CAPTURE_COLUMNS = ['ts', 'status', 'title', 'content_length', 'languages', 'warc_filename', 'warc_offset', 'warc_length', 'extras', 'text_language', 'text_language_confidence'] as const;
const SCAN_COLUMNS = ['url', 'surt', 'ts', 'status', 'title', 'content_length', 'languages'] as const;
/** The `text` column read as its code-point count: the text itself is never turned into a string. */
const TEXT_LENGTH = 'text#length';

const tsMs = (v: bigint, per: bigint): number => Number(v / per);
const TS_PARSERS = {
  timestampFromMilliseconds: (v: bigint) => Number(v),
  timestampFromMicroseconds: (v: bigint) => tsMs(v, 1000n),
  timestampFromNanoseconds: (v: bigint) => tsMs(v, 1_000_000n),
};

/**
 * Lake rows through any ObjectStore (local directory or S3): each file's layout comes from its row-group locator (one
 * `getRange`, written by the merger) or, for files without one, its Parquet footer (a 64 KiB tail `getRange`, more
 * only for a longer footer), and is kept, keyed by file key — lake files are immutable, so layouts and decoded
 * chunks are shared across index versions. A read touches only the row groups overlapping its row range and only
 * the columns it needs (adjacent chunks as one `getRange`), decoded flat into packed columns (lake-decode.ts) that
 * stay in a bytes-bounded LRU, so a hot domain's pages are answered from memory. `url_id` is never read: it is
 * `collisions[url] ?? urlId(url)` by construction (docs/index-format.md), computed by the view for the rows it
 * returns — cheaper than decoding the lake's least compressible column. Safe to share between views.
 */
export class ParquetLakeReader implements LakeReads {
  private readonly store: ObjectStore;
  private readonly chunks: RowGroupCache<Column>;
  /** Texts of single rows (file, row): a capture's text is read one row at a time, never as a whole column chunk. */
  private readonly textCache: RowGroupCache<string | null>;
  private readonly footers: RowGroupCache<Footer>;
  private readonly compressors: { ZSTD: (input: Uint8Array, outputLength: number) => Uint8Array };
  private readonly locators: boolean;
  private readonly flat: boolean;
  private fallbacks = 0;
  private damaged = 0;

  constructor(opts: ParquetLakeReaderOptions) {
    this.store = opts.store;
    const decoder = opts.zstd ?? 'wasm';
    this.compressors = { ZSTD: (input, outputLength) => zstdDecompress(input, outputLength, decoder) };
    this.chunks = new RowGroupCache(opts.cacheBytes ?? 256 * 1024 * 1024);
    this.footers = new RowGroupCache(opts.footerCacheBytes ?? 32 * 1024 * 1024);
    this.textCache = new RowGroupCache(opts.textCacheBytes ?? 64 * 1024 * 1024);
    this.locators = opts.locators ?? true;
    this.flat = (opts.decoder ?? 'flat') === 'flat';
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

  async scan(file: LakeFileEntry, from: number, to: number): Promise<LakePageRow[]> {
    const ft = await this.footer(file);
    need(ft, file, ['url', 'ts', 'status']);
    const out: LakePageRow[] = [];
    const groups = groupsOf(ft, from, to);
    const loaded = await Promise.all(groups.map((g) => this.columns(file, ft, g, SCAN_COLUMNS)));
    groups.forEach((g, k) => {
      const c = loaded[k]!;
      const lo = Math.max(from, ft.starts[g]!) - ft.starts[g]!;
      const hi = Math.min(to, ft.starts[g + 1]!) - ft.starts[g]!;
      const [url, surt, ts, status, title, size, langs] = SCAN_COLUMNS.map((n) => c.get(n));
      for (let i = lo; i < hi; i++) {
        out.push({
          url: str(url, i) ?? '',
          surt: str(surt, i),
          ts: num(ts, i) ?? NO_TIME,
          status: num(status, i) ?? NO_STATUS,
          title: str(title, i),
          contentLength: num(size, i),
          language: primaryLanguage(str(langs, i)),
        });
      }
    });
    return out;
  }

  async find(file: LakeFileEntry, from: number, to: number, url: string, opts: { text?: boolean } = {}): Promise<LakeCaptureRow[]> {
    const ft = await this.footer(file);
    need(ft, file, ['url', 'ts', 'status', 'warc_filename', 'warc_offset', 'warc_length']);
    const out: LakeCaptureRow[] = [];
    const want = Buffer.from(url, 'utf8');
    for (const g of groupsOf(ft, from, to)) {
      const urls = await this.column(file, ft, g, 'url');
      const lo = Math.max(from, ft.starts[g]!) - ft.starts[g]!;
      const hi = Math.min(to, ft.starts[g + 1]!) - ft.starts[g]!;
      const hits = isStrings(urls) ? matches(urls, lo, hi, want) : [];
      if (hits.length === 0) continue;
      // only a row group holding the URL decodes the rest (text as lengths only)
      const c = await this.columns(file, ft, g, ['url', ...CAPTURE_COLUMNS, TEXT_LENGTH]);
      const texts = opts.text === true ? await this.texts(file, ft, g, hits) : null;
      hits.forEach((i, k) => {
        out.push({
          ...urlRow(c, i),
          textLength: num(c.get(TEXT_LENGTH), i),
          language: primaryLanguage(str(c.get('languages'), i)),
          contentLength: num(c.get('content_length'), i),
          ...(texts !== null && { text: texts[k] ?? null }),
          warc: warcOf(str(c.get('warc_filename'), i), num(c.get('warc_offset'), i), num(c.get('warc_length'), i)),
          extras: str(c.get('extras'), i),
          textLanguage: str(c.get('text_language'), i),
          textLanguageConfidence: roundConfidence(num(c.get('text_language_confidence'), i)),
          row: ft.starts[g]! + i,
        });
      });
    }
    return out;
  }

  /**
   * Rows [from, to) of numeric columns of any flat Parquet file the store holds without a locator (an ordering file,
   * orderings.ts), in file order: one Float64Array per name (NaN for null), row groups decoded and cached like the
   * lake's. @throws IndexFormatError when the file lacks a column
   */
  async numbers(file: LakeFileEntry, from: number, to: number, names: readonly string[]): Promise<Float64Array[]> {
    const ft = await this.footer(file);
    need(ft, file, names);
    const out = names.map(() => new Float64Array(Math.max(0, to - from)));
    const groups = groupsOf(ft, from, to);
    const loaded = await Promise.all(groups.map((g) => this.columns(file, ft, g, names)));
    groups.forEach((g, k) => {
      const lo = Math.max(from, ft.starts[g]!);
      const hi = Math.min(to, ft.starts[g + 1]!);
      names.forEach((n, j) => {
        const c = loaded[k]!.get(n)!;
        if (isStrings(c)) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'column is not numeric', { key: file.key, column: n });
        out[j]!.set(c.subarray(lo - ft.starts[g]!, hi - ft.starts[g]!), lo - from);
      });
    });
    return out;
  }

  /**
   * Rows [from, to) of one string column of any flat Parquet file the store holds without a locator (a link file,
   * links.ts), in file order (null for null), row groups decoded and cached like the lake's.
   * @throws IndexFormatError when the file lacks the column or it is not a string column
   */
  async strings(file: LakeFileEntry, from: number, to: number, name: string): Promise<(string | null)[]> {
    const ft = await this.footer(file);
    need(ft, file, [name]);
    const out: (string | null)[] = [];
    for (const g of groupsOf(ft, from, to)) {
      const c = await this.column(file, ft, g, name);
      if (!isStrings(c)) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'column is not a string column', { key: file.key, column: name });
      const lo = Math.max(from, ft.starts[g]!) - ft.starts[g]!;
      const hi = Math.min(to, ft.starts[g + 1]!) - ft.starts[g]!;
      for (let i = lo; i < hi; i++) out.push(str(c, i));
    }
    return out;
  }

  /**
   * The first row in [0, rows] of a file sorted by a string column whose value is ≥ `key` in UTF-8 byte order (nulls
   * sort first): the first row group whose footer maximum reaches the key, then a binary search over the decoded
   * column's bytes — no string is made. @throws IndexFormatError when the column is missing or not a string column
   */
  async lowerBoundString(file: LakeFileEntry, column: string, key: string): Promise<number> {
    const ft = await this.footer(file);
    need(ft, file, [column]);
    const { max } = await this.stringStatsOf(file, column);
    const want = Buffer.from(key, 'utf8');
    const groups = ft.starts.length - 1;
    for (let g = 0; g < groups; g++) {
      const m = max[g];
      if (m !== null && m !== undefined && Buffer.compare(Buffer.from(m, 'utf8'), want) < 0) continue;
      const c = await this.column(file, ft, g, column);
      if (!isStrings(c)) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'column is not a string column', { key: file.key, column });
      const rows = ft.starts[g + 1]! - ft.starts[g]!;
      let lo = 0;
      let hi = rows;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        // the row's bytes against the key: below it when smaller
        const below = c.nulls?.[mid] === 1 || c.bytes.compare(want, 0, want.length, c.starts[mid]!, c.ends[mid]!) < 0;
        if (below) lo = mid + 1;
        else hi = mid;
      }
      if (lo < rows) return ft.starts[g]! + lo;
    }
    return ft.starts[groups]!;
  }

  /** Like {@link statsOf}, for a string column: per row group its min and max from the footer (null where none was kept). */
  async stringStatsOf(file: LakeFileEntry, column: string): Promise<{ starts: readonly number[]; min: (string | null)[]; max: (string | null)[] }> {
    const ft = await this.footer(file);
    const meta = ft.meta ?? (await this.layoutFor(file, ft, [column]).then((f) => f.meta));
    const groups = ft.starts.length - 1;
    const min = new Array<string | null>(groups).fill(null);
    const max = new Array<string | null>(groups).fill(null);
    meta?.row_groups.forEach((rg, g) => {
      const st = rg.columns.find((c) => c.meta_data?.path_in_schema[0] === column)?.meta_data?.statistics;
      // only exact bounds: a writer may keep a truncated prefix of a long string as its bound
      const lo = st?.is_min_value_exact === false ? undefined : (st?.min_value ?? undefined);
      const hi = st?.is_max_value_exact === false ? undefined : (st?.max_value ?? undefined);
      if (typeof lo === 'string') min[g] = lo;
      if (typeof hi === 'string') max[g] = hi;
    });
    return { starts: ft.starts, min, max };
  }

  /**
   * A file's row-group starts (plus its row count at the end) and, per row group, the min and max of a numeric column
   * from the footer's statistics (NaN where the writer kept none).
   */
  async statsOf(file: LakeFileEntry, column: string): Promise<{ starts: readonly number[]; min: Float64Array; max: Float64Array }> {
    const ft = await this.footer(file);
    const meta = ft.meta ?? (await this.layoutFor(file, ft, [column]).then((f) => f.meta));
    const groups = ft.starts.length - 1;
    const min = new Float64Array(groups).fill(NaN);
    const max = new Float64Array(groups).fill(NaN);
    meta?.row_groups.forEach((rg, g) => {
      const st = rg.columns.find((c) => c.meta_data?.path_in_schema[0] === column)?.meta_data?.statistics;
      const lo = st?.min_value ?? st?.min;
      const hi = st?.max_value ?? st?.max;
      if (lo !== undefined && lo !== null) min[g] = Number(lo);
      if (hi !== undefined && hi !== null) max[g] = Number(hi);
    });
    return { starts: ft.starts, min, max };
  }

  /**
   * The `text` of rows `at` (row numbers within row group g): only the data pages holding them are decompressed and
   * decoded (the column is megabytes per row group, and a capture wants one row of it), each row's text cached on
   * its own. The chunk's bytes are fetched whole and checked against the locator's CRC32 like any chunk.
   */
  private async texts(file: LakeFileEntry, located: Footer, g: number, at: readonly number[]): Promise<(string | null)[]> {
    if (!located.columns.has('text')) return at.map(() => null);
    const ft = await this.layoutFor(file, located, ['text']);
    return Promise.all(
      at.map((i) =>
        this.textCache.getOrLoad(`${identityOf(file)}\u0000${ft.starts[g]! + i}`, async () => {
          const c = chunkAt(ft, g, 'text');
          let value: string | null = null;
          if (c !== null) {
            const bytes = (await this.fetchChunks(file, g, [c])).get(c.name)!;
            const rows = ft.starts[g + 1]! - ft.starts[g]!;
            let vals: (Uint8Array | null)[] | null;
            try {
              vals = decodeFlatRows(bytes, getPath(ft.tree, 'text'), c.codec, this.compressors, rows, i, i + 1);
            } catch (err) {
              throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lake column chunk cannot be decoded', { key: file.key, rowGroup: g, column: 'text', reason: String(err).slice(0, 200) });
            }
            if (vals === null) {
              const col = await this.decodeGeneric(file, ft, g, 'text');
              value = str(col, i);
            } else value = vals[0] === null || vals[0] === undefined ? null : Buffer.from(vals[0].buffer, vals[0].byteOffset, vals[0].byteLength).toString('utf8');
          }
          return { value, bytes: 64 + (value === null ? 0 : value.length * 2) };
        }),
      ),
    );
  }

  /**
   * Cache counters (decoded column chunks), files read by their footer because their locator was missing or damaged,
   * and column chunks refused because their bytes did not match the CRC32 their locator records.
   */
  stats(): RowGroupCacheStats & { locatorFallbacks: number; damagedChunks: number } {
    return { ...this.chunks.stats(), locatorFallbacks: this.fallbacks, damagedChunks: this.damaged };
  }

  async close(): Promise<void> {
    // nothing to release: the caches are plain memory
  }

  private footer(file: LakeFileEntry): Promise<Footer> {
    return this.footers.getOrLoad(identityOf(file), async () => {
      if (file.locator !== undefined && this.locators) {
        const { key, bytes, crc32 } = file.locator;
        try {
          const b = await this.store.getRange(key, 0, bytes);
          if (b.length !== bytes || crcOf(b) !== crc32) throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'lake locator does not match its checksum', { key });
          const locator = decodeLocator(b, key);
          const columns = new Set(locator.schema.slice(1).map((e) => e.name));
          const tree = parquetSchema({ schema: locator.schema } as FileMetaData);
          return { value: { meta: null, locator, starts: locator.starts, columns, tree }, bytes: 1024 + b.length * 2 };
        } catch (err) {
          // A missing or damaged locator costs speed, not the file: its own footer says the same. Counted; other
          // store errors (transient ones) propagate like any read's.
          if (!(err instanceof IndexFormatError) && !hasCode(err, 'CCP_ERR_STORE_NOT_FOUND')) throw err;
          this.fallbacks++;
        }
      }
      return this.parseFooter(file);
    });
  }

  /** The file's layout from its Parquet footer (a 64 KiB tail `getRange`, more only for a longer footer). */
  private async parseFooter(file: LakeFileEntry): Promise<{ value: Footer; bytes: number }> {
    let meta: FileMetaData;
    try {
      meta = await parquetMetadataAsync(this.asyncBuffer(file), { initialFetchSize: Math.min(FOOTER_TAIL, file.bytes) });
    } catch (err) {
      if (isStoreError(err) && !hasCode(err, 'CCP_ERR_STORE_RANGE')) throw err;
      // a footer that does not parse, or lies past the file's end: the file is damaged (truncated, overwritten)
      this.damaged++;
      throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'lake file footer cannot be parsed', { key: file.key, reason: String(err).slice(0, 200) });
    }
    const starts = [0];
    for (const rg of meta.row_groups) starts.push(starts[starts.length - 1]! + Number(rg.num_rows));
    const columns = new Set(meta.schema.slice(1).map((e) => e.name));
    return { value: { meta, locator: null, starts, columns, tree: parquetSchema(meta) }, bytes: 1024 + Number(meta.metadata_length) * 4 };
  }

  /**
   * The layout to read `names` of a file with: its locator's when the locator describes them all, else (a locator
   * written before those columns were located — `surt`, `content_length`, `languages` came later) its footer's,
   * cached on its own, so an older lake still answers every column its files hold.
   */
  private async layoutFor(file: LakeFileEntry, ft: Footer, names: readonly string[]): Promise<Footer> {
    if (ft.locator === null) return ft;
    const located = new Set(ft.locator.columns.map((c) => c.name));
    if (names.every((n) => located.has(n === TEXT_LENGTH ? 'text' : n) || !ft.columns.has(n === TEXT_LENGTH ? 'text' : n))) return ft;
    return this.footers.getOrLoad(`${identityOf(file)}#footer`, () => this.parseFooter(file));
  }

  /**
   * The named columns of row group g (absent ones left out), each from the cache or decoded: the missing ones
   * together (adjacent chunks fetched as one range), the text lengths on their own (another string mode).
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

  /**
   * Decodes whole column chunks of row group g (all `names` share one string mode: never mix in TEXT_LENGTH). The
   * chunks are fetched here, adjacent ones as one range, and decoded flat (lake-decode.ts); a column that decoder
   * does not handle goes through hyparquet's `parquetRead`.
   */
  private async decode(file: LakeFileEntry, located: Footer, g: number, names: readonly string[]): Promise<Map<string, Column>> {
    const ft = await this.layoutFor(file, located, names);
    if (!this.flat) return new Map(await Promise.all(names.map(async (n) => [n, await this.decodeGeneric(file, ft, g, n)] as const)));
    const rows = ft.starts[g + 1]! - ft.starts[g]!;
    const mode = names.includes(TEXT_LENGTH) ? 'codePoints' : 'bytes';
    const at = names.map((n) => chunkAt(ft, g, n === TEXT_LENGTH ? 'text' : n));
    const bytes = await this.fetchChunks(file, g, at.filter((c): c is ChunkAt => c !== null));
    const out = new Map<string, Column>();
    for (let i = 0; i < names.length; i++) {
      const c = at[i]!;
      let col: Column | null = null;
      if (c !== null) {
        const path = getPath(ft.tree, c.name);
        try {
          col = decodeFlatChunk(bytes.get(c.name)!, path, c.codec, this.compressors, rows, mode);
        } catch (err) {
          throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lake column chunk cannot be decoded', { key: file.key, rowGroup: g, column: c.name, reason: String(err).slice(0, 200) });
        }
      }
      out.set(names[i]!, col ?? (await this.decodeGeneric(file, ft, g, names[i]!)));
    }
    return out;
  }

  /**
   * The bytes of each chunk, fetched as few ranges as the gaps between them allow, each checked against the CRC32 its
   * locator records (a damaged chunk is counted and refused, never decoded or cached).
   * @throws IndexFormatError CCP_ERR_INDEX_CRC
   */
  private async fetchChunks(file: LakeFileEntry, g: number, chunks: ChunkAt[]): Promise<Map<string, Uint8Array>> {
    const runs: { start: number; end: number; chunks: ChunkAt[] }[] = [];
    for (const c of [...chunks].sort((a, b) => a.start - b.start)) {
      const run = runs[runs.length - 1];
      if (run !== undefined && c.start - run.end <= GAP) {
        run.chunks.push(c);
        run.end = Math.max(run.end, c.start + c.size);
      } else runs.push({ start: c.start, end: c.start + c.size, chunks: [c] });
    }
    const out = new Map<string, Uint8Array>();
    await Promise.all(
      runs.map(async ({ start, end, chunks: inRun }) => {
        let b: Uint8Array;
        try {
          b = await this.store.getRange(file.key, start, end - start);
        } catch (err) {
          // a lake file shorter than its version recorded (truncated by a bad copy or a full disk): damaged data
          if (!hasCode(err, 'CCP_ERR_STORE_RANGE')) throw err;
          this.damaged++;
          throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'lake file is shorter than its version records', { key: file.key, rowGroup: g });
        }
        for (const c of inRun) {
          const bytes = b.subarray(c.start - start, c.start - start + c.size);
          if (c.crc32 !== null && (bytes.length !== c.size || crcOf(bytes) !== c.crc32)) {
            this.damaged++;
            throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'lake column chunk does not match its checksum', { key: file.key, rowGroup: g, column: c.name });
          }
          out.set(c.name, bytes);
        }
      }),
    );
    return out;
  }

  /** hyparquet's own row assembly for one column of row group g, packed (columns the flat decoder does not take). */
  private async decodeGeneric(file: LakeFileEntry, ft: Footer, g: number, name: string): Promise<Column> {
    const rows = ft.starts[g + 1]! - ft.starts[g]!;
    const column = name === TEXT_LENGTH ? 'text' : name;
    // with a locator, a one-row-group metadata (rows [0, rows)); with a footer, the file's own (rows of group g)
    const start = ft.locator === null ? ft.starts[g]! : 0;
    const parts: { at: number; data: ArrayLike<unknown> }[] = [];
    // a chunk whose locator records its CRC32 is fetched and checked first, and hyparquet reads it from those bytes
    const at = chunkAt(ft, g, column);
    const checked = at?.crc32 != null ? { start: at.start, bytes: (await this.fetchChunks(file, g, [at])).get(at.name)! } : null;
    await parquetRead({
      file: this.asyncBuffer(file, checked),
      metadata: ft.locator === null ? ft.meta! : locatorMetadata(ft.locator, g, [column]),
      columns: [column],
      rowStart: start,
      rowEnd: start + rows,
      compressors: this.compressors,
      parsers: { ...TS_PARSERS, stringFromBytes: name === TEXT_LENGTH ? codePoints : rawBytes },
      onChunk: (c) => {
        if (c.columnName === column) parts.push({ at: c.rowStart - start, data: c.columnData as ArrayLike<unknown> });
      },
    });
    return pack(parts, rows);
  }

  /** The file as hyparquet reads it; ranges inside `held` (bytes already fetched and checked) come from there. */
  private asyncBuffer(file: LakeFileEntry, held: { start: number; bytes: Uint8Array } | null = null): AsyncBuffer {
    return {
      byteLength: file.bytes,
      slice: async (s: number, e?: number) => {
        const end = e ?? file.bytes;
        if (held !== null && s >= held.start && end <= held.start + held.bytes.length) {
          return held.bytes.slice(s - held.start, end - held.start).buffer as ArrayBuffer;
        }
        const b = await this.store.getRange(file.key, s, end - s);
        return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? (b.buffer as ArrayBuffer) : (b.slice().buffer as ArrayBuffer);
      },
    };
  }
}

/** Where column `name` of row group g sits, from the locator or the footer (null: the file has no such column). */
function chunkAt(ft: Footer, g: number, name: string): ChunkAt | null {
  if (ft.locator !== null) {
    const k = ft.locator.columns.findIndex((c) => c.name === name);
    if (k < 0) return null;
    const at = locatorChunk(ft.locator, g, k);
    return { name, start: at.dictOffset > 0 ? at.dictOffset : at.dataOffset, size: at.size, codec: ft.locator.columns[k]!.codec, crc32: at.crc32 };
  }
  const m = ft.meta!.row_groups[g]?.columns.find((c) => c.meta_data?.path_in_schema.length === 1 && c.meta_data.path_in_schema[0] === name)?.meta_data;
  if (m === undefined) return null;
  return { name, start: Number(m.dictionary_page_offset || m.data_page_offset), size: Number(m.total_compressed_size), codec: m.codec, crc32: null };
}

/** The schema path [root, …, leaf] of a top-level column. */
function getPath(tree: SchemaTree, name: string): SchemaTree[] {
  const leaf = tree.children.find((c) => c.element.name === name);
  if (leaf === undefined) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lake schema lacks a column', { column: name });
  return [tree, leaf];
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
  return {
    urlId: null,
    url: str(c.get('url'), i) ?? '',
    ts: isoOfMs(num(c.get('ts'), i) ?? NO_TIME),
    status: num(c.get('status'), i),
    title: str(c.get('title'), i),
  };
}

/** A confidence as stored (FLOAT) to the 3 decimals it means: 0.9 comes back as 0.8999999761581421 otherwise. */
export const roundConfidence = (v: number | null): number | null => (v === null ? null : Math.round(v * 1000) / 1000);

/** A row's WARC location; null for an imported row, which has none (its filename is empty). */
export function warcOf(filename: string | null, offset: number | null, length: number | null): LakeCaptureRow['warc'] {
  return filename === null || filename === '' ? null : { filename, offset: offset ?? 0, length: length ?? 0 };
}

/** Rows in [lo, hi) of a string column whose bytes equal `want`. */
function matches(c: PackedStrings, lo: number, hi: number, want: Buffer): number[] {
  const hits: number[] = [];
  for (let i = lo; i < hi; i++) {
    const s = c.starts[i]!;
    const e = c.ends[i]!;
    if (e - s === want.length && c.nulls?.[i] !== 1 && want.compare(c.bytes, s, e) === 0) hits.push(i);
  }
  return hits;
}

const rawBytes = (b: Uint8Array): Uint8Array => b;

/**
 * The pages of one column chunk packed into one {@link Column} of `rows` rows: byte strings into one buffer,
 * anything numeric (bigint, number, Date) into a Float64Array. Rows no page covered read as null.
 */
function pack(parts: { at: number; data: ArrayLike<unknown> }[], rows: number): Column {
  let sample: unknown;
  for (const p of parts) {
    for (let i = 0; i < p.data.length && (sample === null || sample === undefined); i++) sample = p.data[i];
  }
  if (sample instanceof Uint8Array) {
    const vals: (Uint8Array | null)[] = new Array(rows).fill(null);
    for (const p of parts) for (let i = 0; i < p.data.length; i++) vals[p.at + i] = (p.data[i] as Uint8Array | null | undefined) ?? null;
    return packStrings(vals);
  }
  const out = new Float64Array(rows).fill(NaN);
  for (const p of parts) {
    for (let i = 0; i < p.data.length; i++) {
      const v = p.data[i];
      if (v === null || v === undefined) continue;
      out[p.at + i] = v instanceof Date ? v.getTime() : Number(v);
    }
  }
  return out;
}

/** Estimated heap bytes of a packed column chunk. */
function sizeOf(c: Column): number {
  return isStrings(c) ? 128 + c.bytes.length + 2 * c.ends.byteLength + (c.nulls?.byteLength ?? 0) : 64 + c.byteLength;
}

function isStoreError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'code' in err && typeof (err as { code: unknown }).code === 'string' && !(err instanceof IndexFormatError);
}
