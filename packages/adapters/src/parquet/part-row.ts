import { tmpdir } from 'node:os';
import { CcpError } from '@ccpipe/core';

/**
 * One capture as stored in a lake part: the CDX facts, the URL keys and what extraction found. Field names are
 * camelCase here and snake_case in the file (see {@link PART_COLUMNS} and docs/parquet.md).
 */
export interface PartRow {
  /** UINT32: which dataset (crawl / WARC collection) the capture belongs to. */
  datasetId: number;
  /** INT64: xxh3-64 of the canonical URL, reinterpreted as signed (`BigInt.asIntN(64, h)`). */
  urlId: bigint;
  /** Canonical URL. */
  url: string;
  /** URL exactly as the CDX line / WARC-Target-URI gave it. */
  rawUrl: string;
  host: string;
  /** Registered domain (ICANN section of the PSL). */
  domain: string;
  /** Registered domain counting the PSL private section (`user.github.io`), null when it equals nothing known. */
  privateDomain: string | null;
  surt: string;
  /**
   * The 14-digit CDX timestamp `YYYYMMDDhhmmss`, UTC. Stored as a UTC timestamp. Null for an imported row whose source
   * gave no time (`ccpipe import`): it loses against any capture with a time when the merge keeps one row per URL.
   */
  timestamp: string | null;
  /**
   * `timestamp` as epoch ms when the producer has it already (an import reads times as ms): the writers and checkRow
   * then skip parsing the 14 digits. Must agree with `timestamp`.
   */
  timestampMs?: number;
  /** HTTP status, 0..32767 (INT16); null for an imported row whose source gave none. */
  status: number | null;
  mime: string;
  charset: string | null;
  /** CC-style comma-separated ISO-639-3 codes, most likely first (`"eng,deu"`), or null when not detected. */
  languages: string | null;
  title: string | null;
  /** Extracted main text; written as null when `includeText` is false. */
  text: string | null;
  /** Bytes of the HTTP payload (after transfer/content decoding), 0..2^31-1; null for an imported row (no payload). */
  contentLength: number | null;
  /**
   * Outlink URLs in document order (may be empty, never null), canonical as the URL index keys its rows, the page
   * itself left out (core `linkTargets`); written empty when `includeOutlinks` is false.
   */
  outlinks: readonly string[];
  /** `outlinkDomains[i]` is the registered domain of `outlinks[i]` (same length): the link graph's domain key. */
  outlinkDomains: readonly string[];
  warcFilename: string;
  /** Offset of the gzip member in the WARC file (safe integer, INT64). */
  warcOffset: number;
  /** Length of the gzip member (INT32). */
  warcLength: number;
  /** The CDX digest (base32 SHA-1 of the payload). */
  digest: string;
  /**
   * An imported row's other source columns as one JSON object (≤ 64 KiB; `ccpipe import`), null for captures and for
   * rows with none. Optional here: a row without it is written with null.
   */
  extras?: string | null;
  /** The language of the extracted text (ISO 639-3, core `identifyLanguage`) and its confidence 0–1; null when undetermined. */
  textLanguage?: string | null;
  textLanguageConfidence?: number | null;
  /** The text's quality signals (core `qualitySignals`) that the lake keeps; null for a row without text. */
  quality?: PartQuality | null;
  /** The quality filter that dropped the document, kept only with `--keep-dropped`; null for a kept one. */
  droppedBy?: string | null;
}

/** The quality signals a part stores per row (docs/extraction.md "Language of the text, and quality filters"). */
export interface PartQuality {
  wordCount: number;
  meanWordLength: number;
  symbolWordRatio: number;
  linePunctFraction: number;
  dupLineFraction: number;
  dupLineCharFraction: number;
  top2gramCharFraction: number;
  dup5gramCharFraction: number;
}

/** Which library encodes the file. Both produce the same schema (see docs/parquet.md for figures). */
export type ParquetEngine = 'duckdb' | 'parquet-wasm';

/** Options of writeParquetPart. */
export interface WriteParquetPartOptions {
  /** Default {@link DEFAULT_PARQUET_ENGINE}. */
  engine?: ParquetEngine;
  /** Write `text` values (default true); when false the column is kept, all null, so every part has one schema. */
  includeText?: boolean;
  /**
   * Write the outlink URLs (default true). When false `outlinks` is written as empty lists and `outlink_count`
   * still holds the real count: outlinks are most of a part's bytes and write time (docs/parquet.md).
   */
  includeOutlinks?: boolean;
  /** Rows per row group (default 32 768). DuckDB rounds it up to a multiple of its 2048-row vector. */
  rowGroupSize?: number;
  /** ZSTD level 1..22 (default 3). parquet-wasm 0.8 cannot set it and always uses its library default. */
  compressionLevel?: number;
  /** Where the duckdb engine writes its temp file (default the OS temp dir, read at each call). */
  tmpDir?: string;
}

export const DEFAULT_PARQUET_ENGINE: ParquetEngine = 'duckdb';
/** 16 DuckDB vectors, so both engines cut identical row groups by default. */
export const DEFAULT_ROW_GROUP_SIZE = 32_768;
export const DEFAULT_ZSTD_LEVEL = 3;
/** DuckDB's vector size: its Parquet row groups are whole multiples of it. */
export const DUCKDB_VECTOR_SIZE = 2048;

/** Physical/logical type of each column, in file order (the documented schema; tests check files against it). */
export const PART_COLUMNS = [
  { name: 'dataset_id', type: 'UINT32', nullable: false, dictionary: true },
  { name: 'url_id', type: 'INT64', nullable: false, dictionary: false },
  { name: 'url', type: 'STRING', nullable: false, dictionary: false },
  { name: 'raw_url', type: 'STRING', nullable: false, dictionary: false },
  { name: 'host', type: 'STRING', nullable: false, dictionary: true },
  { name: 'domain', type: 'STRING', nullable: false, dictionary: true },
  { name: 'private_domain', type: 'STRING', nullable: true, dictionary: true },
  { name: 'surt', type: 'STRING', nullable: false, dictionary: false },
  { name: 'ts', type: 'TIMESTAMP(MICROS,UTC)', nullable: true, dictionary: false },
  { name: 'status', type: 'INT16', nullable: true, dictionary: true },
  { name: 'mime', type: 'STRING', nullable: false, dictionary: true },
  { name: 'charset', type: 'STRING', nullable: true, dictionary: true },
  { name: 'languages', type: 'STRING', nullable: true, dictionary: true },
  { name: 'title', type: 'STRING', nullable: true, dictionary: false },
  { name: 'text', type: 'STRING', nullable: true, dictionary: false },
  { name: 'content_length', type: 'INT32', nullable: true, dictionary: false },
  { name: 'outlink_count', type: 'INT32', nullable: false, dictionary: false },
  { name: 'outlinks', type: 'LIST<STRING>', nullable: false, dictionary: false },
  { name: 'outlink_domains', type: 'LIST<STRING>', nullable: false, dictionary: false },
  { name: 'warc_filename', type: 'STRING', nullable: false, dictionary: true },
  { name: 'warc_offset', type: 'INT64', nullable: false, dictionary: false },
  { name: 'warc_length', type: 'INT32', nullable: false, dictionary: false },
  { name: 'digest', type: 'STRING', nullable: false, dictionary: false },
  { name: 'extras', type: 'STRING', nullable: true, dictionary: false },
  { name: 'text_language', type: 'STRING', nullable: true, dictionary: true },
  { name: 'text_language_confidence', type: 'FLOAT', nullable: true, dictionary: false },
  { name: 'word_count', type: 'INT32', nullable: true, dictionary: false },
  { name: 'mean_word_length', type: 'FLOAT', nullable: true, dictionary: false },
  { name: 'symbol_word_ratio', type: 'FLOAT', nullable: true, dictionary: false },
  { name: 'line_punct_fraction', type: 'FLOAT', nullable: true, dictionary: false },
  { name: 'dup_line_fraction', type: 'FLOAT', nullable: true, dictionary: false },
  { name: 'dup_line_char_fraction', type: 'FLOAT', nullable: true, dictionary: false },
  { name: 'top_2gram_char_fraction', type: 'FLOAT', nullable: true, dictionary: false },
  { name: 'dup_5gram_char_fraction', type: 'FLOAT', nullable: true, dictionary: false },
  { name: 'dropped_by', type: 'STRING', nullable: true, dictionary: true },
] as const;

/** The quality columns, in file order, and the PartQuality field each holds. */
export const QUALITY_COLUMNS: readonly (readonly [string, keyof PartQuality])[] = [
  ['word_count', 'wordCount'], ['mean_word_length', 'meanWordLength'], ['symbol_word_ratio', 'symbolWordRatio'],
  ['line_punct_fraction', 'linePunctFraction'], ['dup_line_fraction', 'dupLineFraction'], ['dup_line_char_fraction', 'dupLineCharFraction'],
  ['top_2gram_char_fraction', 'top2gramCharFraction'], ['dup_5gram_char_fraction', 'dup5gramCharFraction'],
];

/** A row or option writeParquetPart cannot encode (`CCP_ERR_PARQUET_ROW`, `CCP_ERR_PARQUET_OPTION`); not retryable. */
export class ParquetPartError extends CcpError {
  constructor(
    code: 'CCP_ERR_PARQUET_ROW' | 'CCP_ERR_PARQUET_OPTION' | 'CCP_ERR_PARQUET_WRITE' | 'CCP_ERR_PARQUET_LOCAL',
    message: string, options: { cause?: unknown; detail?: Record<string, unknown> } = {},
  ) {
    // CCP_ERR_PARQUET_LOCAL: this machine failed the write (its temp disk full, unwritable, out of memory), not the rows
    super(code, message, { ...options, retryable: code === 'CCP_ERR_PARQUET_LOCAL' });
  }
}

/** Most bytes an imported row's `extras` JSON may take (UTF-8). */
export const MAX_EXTRAS_BYTES = 64 * 1024;

const TS14 = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/;

/**
 * Milliseconds since the epoch of a 14-digit CDX timestamp, read as UTC.
 * @throws ParquetPartError CCP_ERR_PARQUET_ROW when it is not 14 digits or not a real date/time.
 */
export function cdxTimestampToMillis(ts: string): number {
  const m = TS14.exec(ts);
  if (m === null) throw new ParquetPartError('CCP_ERR_PARQUET_ROW', 'timestamp is not 14 digits', { detail: { ts: String(ts).slice(0, 40) } });
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
    throw new ParquetPartError('CCP_ERR_PARQUET_ROW', 'timestamp is not a valid date', { detail: { ts } });
  }
  return ms;
}

/** Resolved options with defaults applied. @throws ParquetPartError CCP_ERR_PARQUET_OPTION */
export function resolveOptions(opts: WriteParquetPartOptions): Required<WriteParquetPartOptions> {
  const r = {
    engine: opts.engine ?? DEFAULT_PARQUET_ENGINE,
    includeText: opts.includeText ?? true,
    includeOutlinks: opts.includeOutlinks ?? true,
    rowGroupSize: opts.rowGroupSize ?? DEFAULT_ROW_GROUP_SIZE,
    compressionLevel: opts.compressionLevel ?? DEFAULT_ZSTD_LEVEL,
    tmpDir: opts.tmpDir ?? tmpdir(),
  };
  if (r.engine !== 'duckdb' && r.engine !== 'parquet-wasm') throw optErr('unknown engine', { engine: r.engine });
  if (!Number.isSafeInteger(r.rowGroupSize) || r.rowGroupSize < 1) throw optErr('rowGroupSize must be a positive integer', { rowGroupSize: r.rowGroupSize });
  if (!Number.isInteger(r.compressionLevel) || r.compressionLevel < 1 || r.compressionLevel > 22) {
    throw optErr('compressionLevel must be 1..22', { compressionLevel: r.compressionLevel });
  }
  return r;
}

function optErr(message: string, detail: Record<string, unknown>): ParquetPartError {
  return new ParquetPartError('CCP_ERR_PARQUET_OPTION', message, { detail });
}

/**
 * Checks the integer ranges the schema can hold, so neither engine silently wraps a value.
 * @throws ParquetPartError CCP_ERR_PARQUET_ROW naming the row index and field.
 */
export function checkRow(row: PartRow, i: number): void {
  const bad = (field: string) => new ParquetPartError('CCP_ERR_PARQUET_ROW', `row field out of range: ${field}`, { detail: { row: i, field } });
  if (!isIntIn(row.datasetId, 0, 0xffff_ffff)) throw bad('datasetId');
  if (typeof row.urlId !== 'bigint' || BigInt.asIntN(64, row.urlId) !== row.urlId) throw bad('urlId');
  if (row.status !== null && !isIntIn(row.status, 0, 0x7fff)) throw bad('status');
  if (row.contentLength !== null && !isIntIn(row.contentLength, 0, 0x7fff_ffff)) throw bad('contentLength');
  if (!isIntIn(row.warcLength, 0, 0x7fff_ffff)) throw bad('warcLength');
  if (!isIntIn(row.warcOffset, 0, Number.MAX_SAFE_INTEGER)) throw bad('warcOffset');
  if (!Array.isArray(row.outlinks)) throw bad('outlinks');
  if (!Array.isArray(row.outlinkDomains) || row.outlinkDomains.length !== row.outlinks.length) throw bad('outlinkDomains');
  if (row.extras != null && Buffer.byteLength(row.extras, 'utf8') > MAX_EXTRAS_BYTES) throw bad('extras');
  if (row.quality != null && (!isIntIn(row.quality.wordCount, 0, 0x7fff_ffff) || Object.values(row.quality).some((v) => !Number.isFinite(v)))) throw bad('quality');
  if (row.textLanguageConfidence != null && !(row.textLanguageConfidence >= 0 && row.textLanguageConfidence <= 1)) throw bad('textLanguageConfidence');
  if (row.timestamp !== null && row.timestampMs === undefined) try {
    cdxTimestampToMillis(row.timestamp);
  } catch (err) {
    throw new ParquetPartError('CCP_ERR_PARQUET_ROW', 'row field out of range: timestamp', { cause: err, detail: { row: i, field: 'timestamp' } });
  }
}

function isIntIn(v: number, lo: number, hi: number): boolean {
  return Number.isInteger(v) && v >= lo && v <= hi;
}
