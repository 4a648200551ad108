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
  /** Lake column set ('all' part columns, 'api', or 'lean' = api without url_id); absent in versions written before the choice existed = 'all'. */
  lakeColumns?: 'all' | 'api' | 'lean';
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

/** @internal File magics of the shard files (also read by file-index.ts). */
export const MAGIC = { domains: 0x44444343, bitmaps: 0x42444343, postings: 0x50444343 } as const; // 'CCDD' 'CCDB' 'CCDP' LE

/**
 * Format version of a shard file, in its header: 1 (u64 offsets, one bitmap per entry, 24-byte postings) or 2 (the
 * default since stop 16: u32 offsets and keys, a table of distinct bitmaps per shard, 16-byte postings). Each of a
 * shard's three files carries its own; readers take both.
 */
export type ShardFormat = 1 | 2;

function header(magic: number, n: number, v: ShardFormat): Buffer {
  const h = Buffer.alloc(12);
  h.writeUInt32LE(magic, 0);
  h.writeUInt32LE(v, 4);
  h.writeUInt32LE(n, 8);
  return h;
}

/** @internal The entry count and format version of a shard file's 12-byte header, checked. */
export function readHeader(b: Buffer, magic: number, what: string): { n: number; v: ShardFormat } {
  const v = b.length < 12 ? 0 : b.readUInt32LE(4);
  if (b.length < 12 || b.readUInt32LE(0) !== magic || (v !== 1 && v !== 2)) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'bad index file header', { file: what });
  return { n: b.readUInt32LE(8), v };
}

/** @internal The entry count of a shard file's 12-byte header, checked. */
export function checkHeader(b: Buffer, magic: number, what: string): number {
  return readHeader(b, magic, what).n;
}

/**
 * A u64 offset or count at `at` as a number (two 32-bit halves: no BigInt per read, which cost the dictionary's binary
 * search two BigInts a probe). @throws IndexFormatError beyond 2⁵³ (no index file is that big)
 */
export function readU64(buf: Buffer, at: number): number {
  const hi = buf.readUInt32LE(at + 4);
  if (hi >= 2 ** 21) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index offset beyond 2^53');
  return hi * 2 ** 32 + buf.readUInt32LE(at);
}

/** @internal An offset of `width` bytes at `at`. */
export function readOffset(buf: Buffer, at: number, width: 4 | 8): number {
  return width === 4 ? buf.readUInt32LE(at) : readU64(buf, at);
}

/** @internal Where domains.bin's parts start for `n` entries: the one statement of that layout, for every reader. */
export interface DomainsLayout {
  d64At: number;
  /** 8: the whole domain64; 4: its high half (format 2: block keys, whose low 32 bits are zero). */
  keyWidth: 4 | 8;
  byIdAt: number;
  offAt: number;
  offWidth: 4 | 8;
  strAt: number;
}

/**
 * @internal domains.bin's layout for `n` entries: after the 12-byte header, format 1 is `u64 domain64[n] · u32 byId[n]
 * · u64 nameOffset[n+1] · names`, format 2 `u32 domain64High[n] · u32 byId[n] · u32 nameOffset[n+1] · names`.
 */
export function domainsLayout(n: number, v: ShardFormat = 1): DomainsLayout {
  const w = v === 2 ? 4 : 8;
  const byIdAt = 12 + w * n;
  const offAt = byIdAt + 4 * n;
  return { d64At: 12, keyWidth: w, byIdAt, offAt, offWidth: w, strAt: offAt + w * (n + 1) };
}

/** @internal The domain64 at `at` stored in `width` bytes. */
export function readKey(buf: Buffer, at: number, width: 4 | 8): bigint {
  return width === 4 ? BigInt(buf.readUInt32LE(at)) << 32n : buf.readBigUInt64LE(at);
}

/** @internal Where the data of a format-1 domain-datasets.bin or postings.bin starts for `n` entries (after `u64 offset[n+1]`). */
export const offsetTableEnd = (n: number): number => 12 + 8 * (n + 1);

/**
 * @internal domain-datasets.bin's layout. Format 1: `u64 offset[n+1] · one portable bitmap per entry`. Format 2:
 * `u32 set[n] · u32 m · u32 setOffset[m+1] · m distinct portable bitmaps` (entry i's bitmap is set[i]; most domains
 * share a handful of dataset sets). `m` is read from the file (format 2 only).
 */
export interface BitmapsLayout {
  v: ShardFormat;
  n: number;
  m: number;
  /** Format 2: where set[] starts. */
  setAt: number;
  /** Where the offsets start: format 1 one per entry, format 2 one per distinct bitmap. */
  offAt: number;
  offWidth: 4 | 8;
  dataAt: number;
}

/** @internal The bitmaps layout for `n` entries and (format 2) `m` distinct bitmaps. */
export function bitmapsLayout(n: number, v: ShardFormat, m: number): BitmapsLayout {
  if (v === 1) return { v, n, m: n, setAt: 12, offAt: 12, offWidth: 8, dataAt: offsetTableEnd(n) };
  const offAt = 12 + 4 * n + 4;
  return { v, n, m, setAt: 12, offAt, offWidth: 4, dataAt: offAt + 4 * (m + 1) };
}

/** @internal Where format 2 keeps a domain-datasets.bin's number of distinct bitmaps. */
export const bitmapSetCountAt = (n: number): number => 12 + 4 * n;

/**
 * @internal postings.bin's layout. Format 1: `u64 recordOffset[n+1] · 24-byte records (u32 datasetId, u32 file, u64
 * first, u32 rows, u32 0)`; format 2: `u32 recordOffset[n+1] · 16-byte records (u32 datasetId, u32 file, u32 first,
 * u32 rows)`.
 */
export function postingsLayout(n: number, v: ShardFormat): PostingsLayout {
  return v === 2 ? { v, n, offWidth: 4, recAt: 12 + 4 * (n + 1), rec: 16 } : { v, n, offWidth: 8, recAt: offsetTableEnd(n), rec: REC };
}

/** @internal postings.bin's layout for `n` entries ({@link postingsLayout}). */
export interface PostingsLayout {
  v: ShardFormat;
  n: number;
  offWidth: 4 | 8;
  recAt: number;
  rec: number;
}

/** @internal Where the parts of a shard's three files are (either format, each file its own), for every reader. */
export interface ShardLayout {
  domains: DomainsLayout;
  bitmaps: BitmapsLayout;
  postings: PostingsLayout;
}

/**
 * @internal Which of a shard's bitmaps entry j uses: itself in format 1, `set[j]` in format 2 (read by `u32At`),
 * checked against the table. @throws IndexFormatError when the set index points past the table
 */
export function bitmapSlot(l: BitmapsLayout, j: number, u32At: (at: number) => number): number {
  const s = l.v === 2 ? u32At(l.setAt + 4 * j) : j;
  if (s >= l.m) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'bitmap set index out of range');
  return s;
}

/** @internal The posting records of `b`, whole records in the file's format, in order. */
export function decodePostings(b: Buffer, l: PostingsLayout): Posting[] {
  const out: Posting[] = [];
  for (let at = 0; at < b.length; at += l.rec) out.push(postingAt(b, at, l.v));
  return out;
}

/** The resident domain dictionary over domains.bin, either format (no copies: reads the buffer). */
export class DomainDictionary {
  readonly size: number;
  private readonly at: DomainsLayout;

  constructor(private readonly buf: Buffer) {
    const { n, v } = readHeader(buf, MAGIC.domains, 'domains.bin');
    this.size = n;
    this.at = domainsLayout(n, v);
    if (buf.length < this.at.strAt || this.at.strAt + this.offset(this.size) !== buf.length) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'domains.bin size mismatch');
  }

  private offset(i: number): number {
    return readOffset(this.buf, this.at.offAt + this.at.offWidth * i, this.at.offWidth);
  }

  /** UTF-8 bytes of entry i's name (a view into the buffer). */
  nameBytes(i: number): Buffer {
    return this.buf.subarray(this.at.strAt + this.offset(i), this.at.strAt + this.offset(i + 1));
  }

  /** Name of entry i. */
  name(i: number): string {
    return this.buf.toString('utf8', this.at.strAt + this.offset(i), this.at.strAt + this.offset(i + 1));
  }

  d64(i: number): bigint {
    return readKey(this.buf, this.at.d64At + this.at.keyWidth * i, this.at.keyWidth);
  }

  /** Entry index of a domain name, or -1. O(log n). */
  indexOf(domain: string): number {
    return this.indexOfBytes(Buffer.from(domain, 'utf8'));
  }

  /** Entry index of a domain name's UTF-8 bytes, or -1. O(log n). */
  indexOfBytes(key: Buffer): number {
    const strAt = this.at.strAt;
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      // the key against entry mid's bytes in place (no view allocated per probe)
      const c = -key.compare(this.buf, strAt + this.offset(mid), strAt + this.offset(mid + 1));
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Entry index holding a domain64 key, or -1. O(log n). */
  indexOfD64(key: bigint): number {
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const idx = this.buf.readUInt32LE(this.at.byIdAt + 4 * mid);
      const v = this.d64(idx);
      if (v === key) return idx;
      if (v < key) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

/** domain-datasets.bin's layout, read from the buffer's header (and, in format 2, its table size). */
function bitmapsLayoutOf(buf: Buffer): BitmapsLayout {
  const { n, v } = readHeader(buf, MAGIC.bitmaps, 'domain-datasets.bin');
  return bitmapsLayout(n, v, v === 2 ? buf.readUInt32LE(bitmapSetCountAt(n)) : n);
}

/** postings.bin's layout, read from the buffer's header. */
function postingsLayoutOf(buf: Buffer): PostingsLayout {
  const { n, v } = readHeader(buf, MAGIC.postings, 'postings.bin');
  return postingsLayout(n, v);
}

/** The serialized bitmap of entry i of `buf` laid out as `at` (a view into the buffer). */
function bitmapIn(buf: Buffer, at: BitmapsLayout, i: number): Buffer {
  if (i < 0 || i >= at.n) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'bitmap index out of range');
  const s = bitmapSlot(at, i, (p) => buf.readUInt32LE(p));
  return buf.subarray(at.dataAt + readOffset(buf, at.offAt + at.offWidth * s, at.offWidth), at.dataAt + readOffset(buf, at.offAt + at.offWidth * (s + 1), at.offWidth));
}

/** Postings of entry i of `buf` laid out as `at`. */
function postingsIn(buf: Buffer, at: PostingsLayout, i: number): Posting[] {
  if (i < 0 || i >= at.n) return [];
  const { offWidth, recAt, rec } = at;
  const a = readOffset(buf, 12 + offWidth * i, offWidth);
  const b = readOffset(buf, 12 + offWidth * (i + 1), offWidth);
  if (recAt + rec * b > buf.length) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'postings.bin shorter than its offsets say');
  return decodePostings(buf.subarray(recAt + rec * a, recAt + rec * b), at);
}

/** The serialized bitmap of entry i of a domain-datasets.bin, either format (a view into the buffer). */
export function bitmapBytes(buf: Buffer, i: number): Buffer {
  return bitmapIn(buf, bitmapsLayoutOf(buf), i);
}

/** Bytes of one format-1 postings.bin record. */
export const REC = 24;

/** @internal The posting record at byte `at` of a postings.bin of format `v`. */
export function postingAt(buf: Buffer, at: number, v: ShardFormat = 1): Posting {
  return v === 2
    ? { datasetId: buf.readUInt32LE(at), file: buf.readUInt32LE(at + 4), first: buf.readUInt32LE(at + 8), rows: buf.readUInt32LE(at + 12) }
    : { datasetId: buf.readUInt32LE(at), file: buf.readUInt32LE(at + 4), first: readU64(buf, at + 8), rows: buf.readUInt32LE(at + 16) };
}

/** Postings of dictionary entry i of a postings.bin, sorted by datasetId (a dataset's runs in paging order); either format. */
export function postingsOf(buf: Buffer, i: number): Posting[] {
  return postingsIn(buf, postingsLayoutOf(buf), i);
}

/** Bytes appended in chunks of 1 MiB (no reallocation of what is written), joined once at the end. */
class ByteSink {
  private readonly done: Buffer[] = [];
  private cur = Buffer.allocUnsafe(1 << 20);
  private at = 0;
  length = 0;

  private room(n: number): void {
    if (this.at + n <= this.cur.length) return;
    this.done.push(this.cur.subarray(0, this.at));
    this.cur = Buffer.allocUnsafe(Math.max(1 << 20, n));
    this.at = 0;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.cur.set(b, this.at);
    this.at += b.length;
    this.length += b.length;
  }

  u32(v: number): void {
    this.room(4);
    this.cur.writeUInt32LE(v, this.at);
    this.at += 4;
    this.length += 4;
  }

  u64(v: number | bigint): void {
    this.room(8);
    if (typeof v === 'bigint') this.cur.writeBigUInt64LE(v, this.at);
    else {
      // offsets and row numbers: safe integers, written as two halves (no BigInt per value)
      this.cur.writeUInt32LE(v % 2 ** 32, this.at);
      this.cur.writeUInt32LE(Math.floor(v / 2 ** 32), this.at + 4);
    }
    this.at += 8;
    this.length += 8;
  }

  /** The parts written, in order (the sink is spent). */
  parts(): Buffer[] {
    return [...this.done, this.cur.subarray(0, this.at)];
  }

  /** Copies the bytes written into `out` at `offset` and lets go of them (the sink is spent); returns the end. */
  drainInto(out: Buffer, offset: number): number {
    for (const p of this.parts()) offset += p.copy(out, offset);
    this.release();
    return offset;
  }

  /** Lets go of the bytes written (the sink is spent). */
  release(): void {
    this.done.length = 0;
    this.cur = Buffer.alloc(0);
    this.at = 0;
  }
}

/** One buffer of exactly a header and the parts after it, in order, each sink let go of once copied. */
function assemble(head: Buffer, parts: (ByteSink | Buffer)[]): Buffer {
  const out = Buffer.allocUnsafe(head.length + parts.reduce((s, p) => s + p.length, 0));
  let at = head.copy(out, 0);
  for (const p of parts) at = p instanceof ByteSink ? p.drainInto(out, at) : at + p.copy(out, at);
  return out;
}

/** A sink's bytes as one buffer; the sink is let go of. */
function drained(sink: ByteSink): Buffer {
  const b = Buffer.allocUnsafe(sink.length);
  sink.drainInto(b, 0);
  return b;
}

/**
 * The dictionary of shard k of `count`, its three files checked against each other: the same number of domains, and
 * none empty unless it is the only shard. @throws IndexFormatError CCP_ERR_INDEX_FORMAT
 */
function openShard(files: IndexShardFiles, k: number, count: number): DomainDictionary {
  shardCount(files, k, count);
  return new DomainDictionary(files.domains);
}

/**
 * @internal The number of domains of shard k of `count` from its three files' headers (each at least its first 12
 * bytes), checked: the files agree, and the shard is empty only when it is the only one. @throws IndexFormatError
 */
export function shardCount(heads: Record<keyof IndexShardFiles, Buffer>, k: number, count: number): number {
  const n = checkHeader(heads.domains, MAGIC.domains, 'domains.bin');
  if (checkHeader(heads.bitmaps, MAGIC.bitmaps, 'domain-datasets.bin') !== n || checkHeader(heads.postings, MAGIC.postings, 'postings.bin') !== n) {
    throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'shard files disagree on their number of domains', { shard: k });
  }
  if (count > 1 && n === 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'empty index shard', { shard: k });
  return n;
}

/**
 * Shard k's names must sort after shard k-1's: `lastBefore` is shard k-1's last name, `first` shard k's first.
 * @throws IndexFormatError CCP_ERR_INDEX_FORMAT
 */
export function checkShardOrder(lastBefore: Uint8Array, first: Uint8Array, k: number): void {
  if (Buffer.compare(lastBefore, first) >= 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index shards out of order', { shard: k });
}

/** Shard k holds the number of domains shards.json gives it. @throws IndexFormatError CCP_ERR_INDEX_FORMAT */
export function checkShardSize(size: number, expected: number, k: number): void {
  if (size !== expected) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'a shard does not hold the domains shards.json says', { shard: k, domains: size, expected });
}

/** One shard's entries, however its files are read (local entry numbers). */
export interface ShardView {
  readonly size: number;
  name(j: number): string;
  nameBytes(j: number): Buffer;
  d64(j: number): bigint;
  /** Local entry of a name's UTF-8 bytes, or -1. */
  indexOfBytes(key: Buffer): number;
  bitmap(j: number): Buffer;
  postings(j: number): Posting[];
}

/** A shard held in memory: its dictionary over its three buffers, the other two files' layouts read once. */
class LiveShard implements ShardView {
  private readonly bitmapsAt: BitmapsLayout;
  private readonly postingsAt: PostingsLayout;

  constructor(
    readonly dict: DomainDictionary,
    readonly files: IndexShardFiles,
  ) {
    this.bitmapsAt = bitmapsLayoutOf(files.bitmaps);
    this.postingsAt = postingsLayoutOf(files.postings);
  }

  get size(): number {
    return this.dict.size;
  }

  name(j: number): string {
    return this.dict.name(j);
  }

  nameBytes(j: number): Buffer {
    return this.dict.nameBytes(j);
  }

  d64(j: number): bigint {
    return this.dict.d64(j);
  }

  indexOfBytes(key: Buffer): number {
    return this.dict.indexOfBytes(key);
  }

  bitmap(j: number): Buffer {
    return bitmapIn(this.files.bitmaps, this.bitmapsAt, j);
  }

  postings(j: number): Posting[] {
    return postingsIn(this.files.postings, this.postingsAt, j);
  }
}

/** What the API's views and the merger read of a version's domain index, whichever way its shards are held. */
export interface DomainEntries {
  readonly size: number;
  /** Bytes the index holds in memory. */
  readonly bytes: number;
  name(i: number): string;
  nameBytes(i: number): Buffer;
  d64(i: number): bigint;
  indexOf(domain: string): number;
  bitmap(i: number): Buffer;
  postings(i: number): Posting[];
  /** Lets go of what the index holds open (files); absent for an index in memory. */
  close?(): Promise<void>;
}

/**
 * The domain index of a version over its shards (dictionary ranges, in order): entry i is the i-th domain of the
 * whole dictionary, so callers see one dictionary, one bitmap and one postings list per entry whatever the number of
 * shards. Entry numbers come from the shards' sizes; where a shard's files are is the subclass's: all resident
 * ({@link DomainIndex}) or read when asked for ({@link OnDemandDomainIndex}).
 */
export abstract class ShardedDomainIndex {
  readonly size: number;
  /** First global entry of each shard. */
  private readonly bases: number[] = [];
  /** The shard the last entry was in (a walk in order stays in it). */
  private hint = 0;

  /** @throws IndexFormatError when there is no shard */
  protected constructor(protected readonly sizes: readonly number[]) {
    if (sizes.length === 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'an index has at least one shard');
    let n = 0;
    for (const size of sizes) {
      this.bases.push(n);
      n += size;
    }
    this.size = n;
  }

  /** Shard k's entries. */
  protected abstract shard(k: number): ShardView;

  /** UTF-8 bytes of shard k's first name (asked only when there are several shards, none of them empty). */
  protected abstract firstName(k: number): Uint8Array;

  /** The last shard k for which `atOrBefore(k)` holds (shard 0 when none does): shards are in order, so it is monotone. */
  private lastShard(atOrBefore: (k: number) => boolean): number {
    let lo = 0;
    let hi = this.sizes.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (atOrBefore(mid)) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Shard and local entry of global entry i. */
  private at(i: number): [ShardView, number] {
    if (!(i >= 0 && i < this.size)) throw new RangeError(`index entry ${i} out of range (${this.size} entries)`);
    let k = this.hint;
    if (!(i >= this.bases[k]! && i < this.bases[k]! + this.sizes[k]!)) k = this.hint = this.lastShard((s) => this.bases[s]! <= i);
    return [this.shard(k), i - this.bases[k]!];
  }

  name(i: number): string {
    const [s, j] = this.at(i);
    return s.name(j);
  }

  nameBytes(i: number): Buffer {
    const [s, j] = this.at(i);
    return s.nameBytes(j);
  }

  d64(i: number): bigint {
    const [s, j] = this.at(i);
    return s.d64(j);
  }

  /** Entry index of a domain name, or -1. O(log shards + log n). */
  indexOf(domain: string): number {
    const key = Buffer.from(domain, 'utf8');
    const k = this.sizes.length === 1 ? 0 : this.lastShard((s) => Buffer.compare(this.firstName(s), key) <= 0);
    const j = this.shard(k).indexOfBytes(key);
    return j < 0 ? -1 : this.bases[k]! + j;
  }

  /** The serialized bitmap of entry i's datasets. */
  bitmap(i: number): Buffer {
    const [s, j] = this.at(i);
    return s.bitmap(j);
  }

  /** Postings of entry i, sorted by datasetId (a dataset's runs in paging order). */
  postings(i: number): Posting[] {
    if (i < 0 || i >= this.size) return [];
    const [s, j] = this.at(i);
    return s.postings(j);
  }

  /** Domains of each shard, in order. */
  shardSizes(): number[] {
    return [...this.sizes];
  }
}

/**
 * The domain index with every shard resident (the API's: lookups are random). Each shard is three buffers (a file is
 * one Buffer, and Node's stop at 4 GiB: one unsharded postings.bin of Common Crawl's ≈ 40M domains passes that at
 * about the fourth crawl). Reads the buffers in place; every shard is checked when constructed.
 */
export class DomainIndex extends ShardedDomainIndex {
  /** Resident bytes of the shards' files. */
  readonly bytes: number;
  private readonly live: LiveShard[];

  /**
   * `expected`: the domains of each shard as shards.json gives them (null for a version written before it).
   * @throws IndexFormatError when a shard's files disagree on its size or with `expected`, or shards are empty or out of order
   */
  constructor(shards: readonly IndexShardFiles[], expected: readonly number[] | null = null) {
    const live = shards.map((files, k) => new LiveShard(openShard(files, k, shards.length), files));
    super(live.map((s) => s.dict.size));
    live.forEach((s, k) => {
      if (expected !== null) checkShardSize(s.size, expected[k]!, k);
      if (k > 0) checkShardOrder(live[k - 1]!.dict.nameBytes(live[k - 1]!.dict.size - 1), s.dict.nameBytes(0), k);
    });
    this.live = live;
    this.bytes = shards.reduce((a, s) => a + s.domains.length + s.bitmaps.length + s.postings.length, 0);
  }

  protected shard(k: number): LiveShard {
    return this.live[k]!;
  }

  protected firstName(k: number): Uint8Array {
    return this.live[k]!.dict.nameBytes(0);
  }

  /** Entry index holding a domain64 key, or -1 (each shard is in name order, so every shard is searched). */
  indexOfD64(key: bigint): number {
    let base = 0;
    for (const { dict } of this.live) {
      const j = dict.indexOfD64(key);
      if (j >= 0) return base + j;
      base += dict.size;
    }
    return -1;
  }
}

/** Where {@link OnDemandDomainIndex} gets its shards: their sizes (from shards.json) and a reader of each. */
export interface ShardSource {
  /** Domains of each shard, in order. */
  readonly sizes: readonly number[];
  /** Shard k's three files, each checked against its size and CRC32. @throws IndexFormatError */
  read(k: number): IndexShardFiles;
}

/**
 * The domain index of a version for a walk in dictionary order (the merger's): the same entries as
 * {@link DomainIndex}, but a shard is read only when one of its entries is asked for, and only that shard is
 * resident, so memory is one shard's files (≤ 2²⁰ domains by default), not the whole index (≈ 50 B per domain in
 * format 2: 2 GB at Common Crawl's ≈ 40M). Entry numbers come from the sizes, so routing an entry reads nothing. Each shard is
 * checked as it is read: against the sizes, and against the neighbours read before it for order. A walk in order
 * reads each shard once; random access works but may read a shard per call, and `indexOf` reads the shards its
 * binary search passes. Sync: the reader reads local files.
 */
export class OnDemandDomainIndex extends ShardedDomainIndex {
  /** First and last names of the shards read so far, for the order checks and indexOf's routing. */
  private readonly firsts: (Buffer | null)[];
  private readonly lasts: (Buffer | null)[];
  private k = -1;
  private live: LiveShard | null = null;

  /** @throws IndexFormatError when the source has no shard */
  constructor(private readonly source: ShardSource) {
    super(source.sizes);
    this.firsts = source.sizes.map(() => null);
    this.lasts = source.sizes.map(() => null);
  }

  /**
   * Reads and checks every shard once, in order (a version is refused before a merge writes anything); `visit` is
   * called for each entry while its shard is resident, so a caller's own check of every entry costs no second read.
   */
  verifyAll(visit?: (i: number) => void): void {
    let first = 0;
    for (let k = 0; k < this.sizes.length; k++) {
      this.shard(k);
      if (visit !== undefined) for (let i = first; i < first + this.sizes[k]!; i++) visit(i);
      first += this.sizes[k]!;
    }
  }

  /** Makes shard k the resident one (reading and checking it unless it is already). */
  protected shard(k: number): LiveShard {
    if (k === this.k) return this.live!;
    this.live = null;
    this.k = -1;
    const count = this.sizes.length;
    const files = this.source.read(k);
    const dict = openShard(files, k, count);
    checkShardSize(dict.size, this.sizes[k]!, k);
    if (dict.size > 0) {
      const first = Buffer.from(dict.nameBytes(0));
      const last = Buffer.from(dict.nameBytes(dict.size - 1));
      if (k > 0 && this.lasts[k - 1] != null) checkShardOrder(this.lasts[k - 1]!, first, k);
      if (k + 1 < count && this.firsts[k + 1] != null) checkShardOrder(last, this.firsts[k + 1]!, k + 1);
      this.firsts[k] = first;
      this.lasts[k] = last;
    }
    this.k = k;
    this.live = new LiveShard(dict, files);
    return this.live;
  }

  protected firstName(k: number): Uint8Array {
    if (this.firsts[k] === null) this.shard(k);
    return this.firsts[k]!;
  }
}

/** When the index writer starts a new shard ({@link IndexWriter}). */
export interface ShardLimits {
  /** Domains per shard (default 2²⁰). */
  maxDomains?: number;
  /** Bytes of a shard's biggest file (default 1 GiB, below 4 GiB; a single domain bigger than that gets a shard of its own). */
  maxBytes?: number;
  /**
   * Format of the files written (default 2). A format-2 shard writes a file in format 1 where a value does not fit
   * format 2's 32 bits: domains.bin when a key is not a domain block (low 32 bits not zero), postings.bin when a run
   * starts beyond row 2³² − 1 of its lake file.
   */
  format?: ShardFormat;
}

export const DEFAULT_SHARD_DOMAINS = 2 ** 20;
export const DEFAULT_SHARD_BYTES = 2 ** 30;

/** The three files of one shard, each built when asked (once). */
export interface ShardBuild {
  domains: () => Buffer;
  bitmaps: () => Buffer;
  postings: () => Buffer;
}

/**
 * Writes the domain index one domain at a time, entries in dictionary (UTF-8 byte) order, into shards of at most
 * `maxDomains` domains whose files stay under `maxBytes` each. A shard is three files, each a 12-byte header
 * (magic, format version, n) then, in format 2 (the default):
 * - domains.bin: `u32 domain64High[n] · u32 byId[n] (entry indices in domain64 order) · u32 nameOffset[n+1] · UTF-8 names`;
 * - domain-datasets.bin: `u32 set[n] · u32 m · u32 setOffset[m+1] · m portable Roaring bitmaps` (each distinct
 *   dataset set once per shard);
 * - postings.bin: `u32 recordOffset[n+1] · records (u32 datasetId, u32 file, u32 first, u32 rows)`;
 *
 * and in format 1 (`format: 1`, or a file whose values do not fit 32 bits): u64 domain64 and offsets, one bitmap per
 * entry, 24-byte records with a u64 first row ({@link domainsLayout}, {@link bitmapsLayout}, {@link postingsLayout}).
 * Holds only the growing files (≈ 50 B per domain in format 2, outside the JS heap), no object per domain: the
 * merger's index step at Common Crawl's ≈ 40M registered domains.
 */
export class IndexWriter {
  private done: IndexShardWriter[] = [];
  /** Domains of the shards handed out by {@link takeClosed}. */
  private readonly taken: number[] = [];
  private cur: IndexShardWriter;
  private n = 0;
  private last = Buffer.allocUnsafe(256);
  private lastLength = 0;
  private spent = false;
  private readonly setBitmap = new Map<string, Uint8Array>();
  private readonly maxDomains: number;
  private readonly maxBytes: number;
  private readonly format: ShardFormat;

  constructor(private readonly serializeSet: (datasetIds: number[]) => Uint8Array, limits: ShardLimits = {}) {
    this.maxDomains = limits.maxDomains ?? DEFAULT_SHARD_DOMAINS;
    this.maxBytes = limits.maxBytes ?? DEFAULT_SHARD_BYTES;
    this.format = limits.format ?? 2;
    if (!(this.maxDomains >= 1) || !(this.maxBytes >= 1) || !(this.maxBytes < 2 ** 32) || (this.format !== 1 && this.format !== 2)) {
      throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'shard limits must be ≥ 1 (maxBytes below 4 GiB), format 1 or 2', { ...limits });
    }
    this.cur = new IndexShardWriter(this.format);
  }

  get size(): number {
    return this.n;
  }

  /** Domains of each shard so far, in order (shards.json). */
  shardSizes(): number[] {
    return [...this.taken, ...[...this.done, this.cur].map((s) => s.size)];
  }

  /** Whether a shard is complete and not yet taken ({@link takeClosed}). */
  get closedPending(): boolean {
    return this.done.length > 0;
  }

  /**
   * The shards completed since the last call, in order, handed over to be written now (the writer keeps nothing of
   * them): a merge writes each shard when the next one starts, so it holds one shard's growing files, not the index's.
   */
  takeClosed(): ShardBuild[] {
    const out = this.done.map((s) => s.files());
    for (const s of this.done) this.taken.push(s.size);
    this.done = [];
    return out;
  }

  /**
   * Appends a domain: its name's UTF-8 bytes (strictly after the previous one), its key, its postings (sorted by
   * dataset, at least one; a dataset whose rows sit in several runs has one posting per run, in paging order).
   * @throws IndexFormatError when names come out of order
   */
  add(name: Uint8Array, d64: bigint, postings: readonly Posting[]): void {
    if (this.spent) throw new Error('IndexWriter.add(): the writer is spent');
    const b = Buffer.from(name.buffer, name.byteOffset, name.byteLength);
    // the previous name is kept as a copy in one reused buffer (no allocation per domain; the caller's bytes may be
    // a view it reuses)
    if (this.n > 0 && b.compare(this.last, 0, this.lastLength) <= 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index domains out of order', { domain: b.toString('utf8') });
    if (b.length > this.last.length) this.last = Buffer.allocUnsafe(Math.max(b.length, 2 * this.last.length));
    this.lastLength = b.copy(this.last);
    const bm = this.bitmapOf(postings);
    if (this.cur.size > 0 && (this.cur.size >= this.maxDomains || this.cur.bytesWith(b.length, d64, bm, postings) > this.maxBytes)) {
      this.done.push(this.cur);
      this.cur = new IndexShardWriter(this.format);
    }
    this.cur.add(b, d64, bm, postings);
    this.n++;
  }

  /**
   * The serialized bitmap of the postings' datasets (sorted by dataset), serialized once per distinct set: the same
   * set is the same Uint8Array, which is how a shard's writer finds it in its table.
   */
  private bitmapOf(postings: readonly Posting[]): Uint8Array {
    // the set's key without an array per domain: most domains are in one dataset, whose key is its id alone
    let key = '';
    let prev = -1;
    for (const p of postings) {
      if (p.datasetId === prev) continue;
      key = prev === -1 ? String(p.datasetId) : `${key},${p.datasetId}`;
      prev = p.datasetId;
    }
    let bm = this.setBitmap.get(key);
    if (bm === undefined) this.setBitmap.set(key, (bm = this.serializeSet(key === '' ? [] : key.split(',').map(Number))));
    return bm;
  }

  /**
   * The shards' files (those not taken by {@link takeClosed}), each built when asked: a file is assembled into one
   * buffer of its exact size and the growing parts it came from are let go of, so a caller that writes one file and
   * drops it before asking for the next holds about the parts plus one file (not twice every file). The writer is
   * spent; ask for each file once. Always at least one shard (an empty index is one empty shard).
   */
  shards(): ShardBuild[] {
    if (this.spent) throw new Error('IndexWriter.shards(): the writer is spent');
    this.spent = true;
    return [...this.done, this.cur].map((s) => s.files());
  }

  /** Every shard's files at once. The writer is spent. */
  finish(): IndexShardFiles[] {
    return this.shards().map((f) => ({ domains: f.domains(), bitmaps: f.bitmaps(), postings: f.postings() }));
  }
}

/** Whether a key is a domain block: its low 32 bits (sub and path levels) are zero, so format 2 keeps the high half. */
const isBlockKey = (d64: bigint): boolean => (d64 & 0xffffffffn) === 0n;

/**
 * One shard's growing files. In format 2 the offsets are u32 and records 16 bytes as they come; a key that is not a
 * domain block or a run starting past row 2³² − 1 switches that one file to format 1 when it is built (the values
 * are kept whole: keys as u64, a first row's high half aside).
 */
class IndexShardWriter {
  private n = 0;
  private readonly d64 = new ByteSink();
  private blockKeys = true;
  private readonly nameOffs = new ByteSink();
  private readonly names = new ByteSink();
  /** Format 1: one offset and bitmap per entry. Format 2: a set index per entry, each distinct bitmap once. */
  private readonly bitmapOffs = new ByteSink();
  private readonly bitmaps = new ByteSink();
  private readonly setOf = new Map<Uint8Array, number>();
  private readonly setIdx = new ByteSink();
  private readonly recOffs = new ByteSink();
  private readonly recs = new ByteSink();
  private recCount = 0;
  /** Format 2: records whose first row needs more than 32 bits, by record number → the high half. */
  private readonly firstHigh = new Map<number, number>();

  constructor(private readonly format: ShardFormat) {}

  get size(): number {
    return this.n;
  }

  /** Size of this shard's biggest file once a domain of this name length, key, bitmap and postings is added (exact). */
  bytesWith(nameBytes: number, d64: bigint, bitmap: Uint8Array, postings: readonly Posting[]): number {
    const n = this.n + 1;
    const names = this.names.length + nameBytes;
    const recs = this.recCount + postings.length;
    if (this.format === 1) return offsetTableEnd(n) + Math.max(12 * n + names, this.bitmaps.length + bitmap.length, REC * recs);
    const domains = this.blockKeys && isBlockKey(d64) ? domainsLayout(n, 2).strAt + names : domainsLayout(n, 1).strAt + names;
    const fresh = !this.setOf.has(bitmap);
    const bitmaps = bitmapsLayout(n, 2, this.setOf.size + (fresh ? 1 : 0)).dataAt + this.bitmaps.length + (fresh ? bitmap.length : 0);
    const wide = this.firstHigh.size > 0 || postings.some((p) => p.first >= 2 ** 32);
    const postingsFile = postingsLayout(n, wide ? 1 : 2).recAt + (wide ? REC : 16) * recs;
    return Math.max(domains, bitmaps, postingsFile);
  }

  add(name: Buffer, d64: bigint, bitmap: Uint8Array, postings: readonly Posting[]): void {
    this.d64.u64(d64);
    if (!isBlockKey(d64)) this.blockKeys = false;
    if (this.format === 1) {
      this.nameOffs.u64(this.names.length);
      this.bitmapOffs.u64(this.bitmaps.length);
      this.bitmaps.bytes(bitmap);
      this.recOffs.u64(this.recCount);
    } else {
      this.nameOffs.u32(this.names.length);
      let s = this.setOf.get(bitmap);
      if (s === undefined) {
        this.setOf.set(bitmap, (s = this.setOf.size));
        this.bitmapOffs.u32(this.bitmaps.length);
        this.bitmaps.bytes(bitmap);
      }
      this.setIdx.u32(s);
      this.recOffs.u32(this.recCount);
    }
    this.names.bytes(name);
    for (const p of postings) {
      this.recs.u32(p.datasetId);
      this.recs.u32(p.file);
      if (this.format === 1) {
        this.recs.u64(p.first);
        this.recs.u32(p.rows);
        this.recs.u32(0);
      } else {
        if (p.first >= 2 ** 32) this.firstHigh.set(this.recCount, Math.floor(p.first / 2 ** 32));
        this.recs.u32(p.first % 2 ** 32);
        this.recs.u32(p.rows);
      }
      this.recCount++;
    }
    this.n++;
  }

  files(): ShardBuild {
    const n = this.n;
    // each file can be built once: its parts are let go of as it is assembled (a second call would read them empty)
    const once = (name: string, build: () => Buffer): (() => Buffer) => {
      let built = false;
      return () => {
        if (built) throw new Error(`IndexWriter shard ${name}() was already built`);
        built = true;
        return build();
      };
    };
    // each offset table ends with the offset past its last entry (u64 in format 1, u32 in format 2)
    for (const [sink, end] of [[this.nameOffs, this.names.length], [this.bitmapOffs, this.bitmaps.length], [this.recOffs, this.recCount]] as const) {
      if (this.format === 1) sink.u64(end);
      else sink.u32(end);
    }
    if (this.format === 1) {
      return {
        domains: once('domains', () => {
          const d64 = drained(this.d64);
          return assemble(header(MAGIC.domains, n, 1), [d64, byIdOrder(d64, n), this.nameOffs, this.names]);
        }),
        bitmaps: once('bitmaps', () => assemble(header(MAGIC.bitmaps, n, 1), [this.bitmapOffs, this.bitmaps])),
        postings: once('postings', () => assemble(header(MAGIC.postings, n, 1), [this.recOffs, this.recs])),
      };
    }
    return {
      domains: once('domains', () => {
        const d64 = drained(this.d64);
        const byId = byIdOrder(d64, n);
        // a key that is not a domain block: this file in format 1 (u64 keys and offsets)
        if (!this.blockKeys) return assemble(header(MAGIC.domains, n, 1), [d64, byId, widen(drained(this.nameOffs)), this.names]);
        const high = Buffer.allocUnsafe(4 * n);
        for (let i = 0; i < n; i++) high.writeUInt32LE(d64.readUInt32LE(8 * i + 4), 4 * i);
        return assemble(header(MAGIC.domains, n, 2), [high, byId, this.nameOffs, this.names]);
      }),
      bitmaps: once('bitmaps', () => {
        const m = Buffer.allocUnsafe(4);
        m.writeUInt32LE(this.setOf.size, 0);
        this.setOf.clear();
        return assemble(header(MAGIC.bitmaps, n, 2), [this.setIdx, m, this.bitmapOffs, this.bitmaps]);
      }),
      postings: once('postings', () => {
        if (this.firstHigh.size === 0) return assemble(header(MAGIC.postings, n, 2), [this.recOffs, this.recs]);
        // a run past row 2³² − 1: this file in format 1 (24-byte records with a u64 first row)
        const offs = widen(drained(this.recOffs));
        const narrow = drained(this.recs);
        const wide = Buffer.alloc(REC * this.recCount);
        for (let r = 0; r < this.recCount; r++) {
          narrow.copy(wide, REC * r, 16 * r, 16 * r + 8);
          wide.writeUInt32LE(narrow.readUInt32LE(16 * r + 8), REC * r + 8);
          wide.writeUInt32LE(this.firstHigh.get(r) ?? 0, REC * r + 12);
          wide.writeUInt32LE(narrow.readUInt32LE(16 * r + 12), REC * r + 16);
        }
        return assemble(header(MAGIC.postings, n, 1), [offs, wide]);
      }),
    };
  }
}

/** u32 LE values as u64 LE (a format-2 offset table written as format 1). */
function widen(u32s: Buffer): Buffer {
  const out = Buffer.alloc(2 * u32s.length);
  for (let i = 0; i < u32s.length / 4; i++) out.writeUInt32LE(u32s.readUInt32LE(4 * i), 8 * i);
  return out;
}

/**
 * domains.bin's `byId`: entry indices in domain64 order, as u32 LE. Domain blocks have zero low 32 bits (sub and
 * path levels), so key | index packs into one u64 and a native typed-array sort orders n entries without a
 * comparator; other keys take a comparator sort.
 */
function byIdOrder(d64: Buffer, n: number): Buffer {
  const keys = new BigUint64Array(n);
  let packable = n < 2 ** 32;
  for (let i = 0; i < n; i++) {
    const k = d64.readBigUInt64LE(8 * i);
    if ((k & 0xffffffffn) !== 0n) packable = false;
    keys[i] = k | BigInt(i);
  }
  const out = Buffer.alloc(4 * n);
  if (packable) {
    keys.sort();
    for (let i = 0; i < n; i++) out.writeUInt32LE(Number(keys[i]! & 0xffffffffn), 4 * i);
    return out;
  }
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => {
    const x = d64.readBigUInt64LE(8 * a);
    const y = d64.readBigUInt64LE(8 * b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
  order.forEach((idx, i) => out.writeUInt32LE(idx, 4 * i));
  return out;
}
