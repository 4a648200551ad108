import { crc32 } from 'node:zlib';
import { CcpError } from '@ccpipe/core';

/** A broken or unreadable index file (`CCP_ERR_INDEX_CRC`, `CCP_ERR_INDEX_FORMAT`, `CCP_ERR_INDEX_MISSING`); not retryable. */
export class IndexFormatError extends CcpError {
  constructor(code: 'CCP_ERR_INDEX_CRC' | 'CCP_ERR_INDEX_FORMAT' | 'CCP_ERR_INDEX_MISSING', message: string, detail: Record<string, unknown> = {}) {
    super(code, message, { retryable: false, detail });
  }
}

/** Keys of the index under the data store root (docs/index-format.md). Pure. */
export const indexLayout = {
  manifest: (): string => 'index/manifest.json',
  versionDir: (v: string): string => `index/${v}/`,
  versionFile: (v: string, name: string): string => `index/${v}/${name}`,
  /** The version's own table of contents (sizes + CRC32 of every other index file); written last before the manifest. */
  toc: (v: string): string => `index/${v}/version.json`,
  lakePrefix: (): string => 'urls/',
  lakeFile: (datasetId: number, prefix: string, v: string): string => `urls/dataset_id=${datasetId}/domain_prefix=${prefix}/part-${v}.parquet`,
  /** Row-group locators live beside the lake, not in it: hive readers (Spark lists whole directories) see only Parquet. */
  locatorPrefix: (): string => 'lakeidx/',
  /** The locator of lake file `lakeKey`: `urls/…/part-v.parquet` → `lakeidx/…/part-v.rgx`. */
  locatorOf: (lakeKey: string): string => `lakeidx/${lakeKey.replace(/^urls\//, '').replace(/\.parquet$/, '.rgx')}`,
} as const;

/**
 * The JSON files every version has, besides version.json. Its domain index is in shards: `shards.json`
 * ({@link SHARD_TABLE}) and three binary files per shard ({@link shardFileNames}); a version written before shards
 * has no shards.json and one unnumbered triple ({@link LEGACY_SHARD}).
 */
export const INDEX_FILES = ['files.json', 'domain-ids.json', 'collisions.json', 'batches.json', 'status.json'] as const;
export type IndexFileName = (typeof INDEX_FILES)[number];

/** The binary files of one dictionary-range shard of the domain index. */
export interface IndexShardFiles {
  domains: Buffer;
  bitmaps: Buffer;
  postings: Buffer;
}

/** File names of shard k (0-based) in its version's directory. */
export function shardFileNames(k: number): Record<keyof IndexShardFiles, string> {
  const s = String(k).padStart(4, '0');
  return { domains: `domains-${s}.bin`, bitmaps: `domain-datasets-${s}.bin`, postings: `postings-${s}.bin` };
}

/** The one shard of a version written before shards.json existed. */
export const LEGACY_SHARD: Record<keyof IndexShardFiles, string> = { domains: 'domains.bin', bitmaps: 'domain-datasets.bin', postings: 'postings.bin' };

export const SHARD_TABLE = 'shards.json';

/** `shards.json`: the domain index's shards in dictionary order, each with its number of domains. */
export interface ShardTable {
  v: 1;
  shards: { domains: number }[];
}

/** `index/manifest.json`: which version serves, which are kept, which wait out their grace period. */
export interface IndexManifest {
  v: 1;
  current: string | null;
  /** Kept versions, oldest first; the last one is `current`. */
  versions: { version: string; createdAt: string; tocCrc32: number }[];
  /** Versions dropped from `versions`, deleted by GC once `retiredAt + graceMs` has passed. */
  retired: { version: string; retiredAt: string }[];
}

/** `index/<v>/version.json`. */
export interface VersionToc {
  v: 1;
  version: string;
  parent: string | null;
  createdAt: string;
  files: Record<string, { size: number; crc32: number }>;
}

/** One lake file of a version (files.json). Row groups as [first row, rows] in file order. */
export interface LakeFileEntry {
  key: string;
  datasetId: number;
  prefix: string;
  rows: number;
  bytes: number;
  crc32: number;
  rowGroups: [number, number][];
  /**
   * Its row-group locator (lake-locator.ts): where each row group's page columns sit, so a reader needs no footer.
   * Absent in files merged before locators existed; readers then parse the footer.
   */
  locator?: { key: string; bytes: number; crc32: number };
  /**
   * The position of its first row in its dataset (orderings.ts): given when the file is written, past every position
   * given before in the dataset, and kept for the file's life, so a secondary ordering stays valid for the files it
   * covers that are still there. Absent in files merged before stop 27: their positions are counted over the
   * dataset's files in files.json order.
   */
  posBase?: number;
}

/** `status.json`: facts /v1/status shows. */
export interface VersionStatus {
  version: string;
  parent: string | null;
  createdAt: string;
  batchesMerged: number;
  batchesTotal: number;
  rowsIn: number;
  urls: number;
  domains: number;
  lakeFiles: number;
  lakeBytes: number;
  rewrittenFiles: number;
  collisions: number;
  /** Domain-prefix bits of the lake's hive partitioning (fixed for the lake's lifetime). */
  partitionBits: number;
  /**
   * The content-versions policy the lake obeys (text-versions.ts): only the newest N captures of a URL keep their
   * text. Absent: every capture keeps it.
   */
  textVersions?: number;
  /** Lake column set ('all' part columns, 'api', or 'lean' = api without url_id); absent in versions written before the choice existed = 'all'. */
  lakeColumns?: 'all' | 'api' | 'lean';
  /**
   * The lake's columns in file order (fixed with the lake). Absent in versions written before stop 20: their
   * `lakeColumns` list then, which for 'api' and 'lean' lacked `languages` and `content_length` (lake-write.ts).
   */
  lakeColumnList?: string[];
  datasets: { datasetId: number; urlCount: number; domainCount: number }[];
  /**
   * The merge inbox (inbox/, merge-inbox.ts): since when (ISO time) merges have read it and found no completed batch
   * without an entry — reset by a full listing that finds one —, and when the last full listing of every marker
   * started. A merge reads the inbox alone once the second is an hour past the first. Absent in versions written
   * before stop 19.
   */
  markerInboxSince?: string;
  fullScanAt?: string;
  /**
   * Every batch folded into this version or an earlier one, per dataset, with the rows and failed records their
   * markers count: what `ccpipe status` reports without reading a marker per batch. Absent in versions written
   * before stop 18 (the next merge over one counts its markers once).
   */
  ingested?: IngestTotals[];
  mergeMs: number;
}

/** Completed batches of one dataset, with their rows and failed records as their markers count them. */
export interface IngestTotals {
  datasetId: number;
  batches: number;
  rows: number;
  failed: number;
  /** The newest `finishedAt` of those markers (ISO time): when the dataset last received rows. Absent before imports. */
  updatedAt?: string;
  /** `failed` by reason (the markers' `failures`: an error code, an import's reject reason); absent before imports. */
  failures?: Record<string, number>;
  /** Documents the workers' quality filters dropped, by filter (the markers' `dropped`); absent when none. */
  dropped?: Record<string, number>;
}

/** One posting: where the rows of (domain, dataset) sit: rows [first, first + rows) of a lake file. */
export interface Posting {
  datasetId: number;
  file: number;
  first: number;
  rows: number;
}

/** CRC32 (zlib polynomial) of bytes. */
export function crcOf(b: Uint8Array): number {
  return crc32(b) >>> 0;
}

/** Parses JSON bytes. @throws IndexFormatError CCP_ERR_INDEX_FORMAT */
export function parseJson<T>(b: Uint8Array, what: string): T {
  try {
    return JSON.parse(Buffer.from(b).toString('utf8')) as T;
  } catch {
    throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index file is not JSON', { file: what });
  }
}

export const jsonBytes = (v: unknown): Buffer => Buffer.from(JSON.stringify(v) + '\n', 'utf8');
