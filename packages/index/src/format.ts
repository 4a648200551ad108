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
  mergeMs: number;
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

function header(magic: number, n: number): Buffer {
  const h = Buffer.alloc(12);
  h.writeUInt32LE(magic, 0);
  h.writeUInt32LE(1, 4);
  h.writeUInt32LE(n, 8);
  return h;
}

/** @internal The entry count of a shard file's 12-byte header, checked. */
export function checkHeader(b: Buffer, magic: number, what: string): number {
  if (b.length < 12 || b.readUInt32LE(0) !== magic || b.readUInt32LE(4) !== 1) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'bad index file header', { file: what });
  return b.readUInt32LE(8);
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

/**
 * @internal Where domains.bin's parts start for `n` entries (12-byte header, then `u64 domain64[n] · u32 byId[n] ·
 * u64 nameOffset[n+1] · names`): the one statement of that layout, for the resident and the in-place reader.
 */
export function domainsLayout(n: number): { d64At: number; byIdAt: number; offAt: number; strAt: number } {
  const byIdAt = 12 + 8 * n;
  const offAt = byIdAt + 4 * n;
  return { d64At: 12, byIdAt, offAt, strAt: offAt + 8 * (n + 1) };
}

/** @internal Where the data of domain-datasets.bin and postings.bin starts for `n` entries (after `u64 offset[n+1]`). */
export const offsetTableEnd = (n: number): number => 12 + 8 * (n + 1);

/** The resident domain dictionary over domains.bin (no copies: reads the buffer). */
export class DomainDictionary {
  readonly size: number;
  private readonly d64At: number;
  private readonly byIdAt: number;
  private readonly offAt: number;
  private readonly strAt: number;

  constructor(private readonly buf: Buffer) {
    this.size = checkHeader(buf, MAGIC.domains, 'domains.bin');
    ({ d64At: this.d64At, byIdAt: this.byIdAt, offAt: this.offAt, strAt: this.strAt } = domainsLayout(this.size));
    if (buf.length < this.strAt || this.strAt + this.offset(this.size) !== buf.length) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'domains.bin size mismatch');
  }

  private offset(i: number): number {
    return readU64(this.buf, this.offAt + 8 * i);
  }

  /** UTF-8 bytes of entry i's name (a view into the buffer). */
  nameBytes(i: number): Buffer {
    return this.buf.subarray(this.strAt + this.offset(i), this.strAt + this.offset(i + 1));
  }

  /** Name of entry i. */
  name(i: number): string {
    return this.buf.toString('utf8', this.strAt + this.offset(i), this.strAt + this.offset(i + 1));
  }

  d64(i: number): bigint {
    return this.buf.readBigUInt64LE(this.d64At + 8 * i);
  }

  /** Entry index of a domain name, or -1. O(log n). */
  indexOf(domain: string): number {
    return this.indexOfBytes(Buffer.from(domain, 'utf8'));
  }

  /** Entry index of a domain name's UTF-8 bytes, or -1. O(log n). */
  indexOfBytes(key: Buffer): number {
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      // the key against entry mid's bytes in place (no view allocated per probe)
      const c = -key.compare(this.buf, this.strAt + this.offset(mid), this.strAt + this.offset(mid + 1));
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
      const idx = this.buf.readUInt32LE(this.byIdAt + 4 * mid);
      const v = this.d64(idx);
      if (v === key) return idx;
      if (v < key) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

/** The serialized bitmap of entry i (a view into the buffer). */
export function bitmapBytes(buf: Buffer, i: number): Buffer {
  const n = checkHeader(buf, MAGIC.bitmaps, 'domain-datasets.bin');
  if (i < 0 || i >= n) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'bitmap index out of range');
  const base = offsetTableEnd(n);
  return buf.subarray(base + readU64(buf, 12 + 8 * i), base + readU64(buf, 12 + 8 * (i + 1)));
}

/** Bytes of one postings.bin record. */
export const REC = 24;

/** @internal The posting record at byte `at`. */
export function postingAt(buf: Buffer, at: number): Posting {
  return { datasetId: buf.readUInt32LE(at), file: buf.readUInt32LE(at + 4), first: readU64(buf, at + 8), rows: buf.readUInt32LE(at + 16) };
}

/** Postings of dictionary entry i, sorted by datasetId (a dataset's runs in paging order). */
export function postingsOf(buf: Buffer, i: number): Posting[] {
  const n = checkHeader(buf, MAGIC.postings, 'postings.bin');
  if (i < 0 || i >= n) return [];
  const base = offsetTableEnd(n);
  const a = readU64(buf, 12 + 8 * i);
  const b = readU64(buf, 12 + 8 * (i + 1));
  const out: Posting[] = [];
  for (let r = a; r < b; r++) {
    const at = base + REC * r;
    out.push(postingAt(buf, at));
  }
  return out;
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

/** One buffer of exactly the sinks' bytes after a header, each sink let go of once copied. */
function assemble(head: Buffer, sinks: ByteSink[], extra: Buffer[] = []): Buffer {
  const out = Buffer.allocUnsafe(head.length + extra.reduce((s, b) => s + b.length, 0) + sinks.reduce((s, k) => s + k.length, 0));
  let at = head.copy(out, 0);
  for (const b of extra) at += b.copy(out, at);
  for (const k of sinks) at = k.drainInto(out, at);
  return out;
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

/** A shard held in memory: its dictionary over its three buffers. */
class LiveShard implements ShardView {
  constructor(
    readonly dict: DomainDictionary,
    readonly files: IndexShardFiles,
  ) {}

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
    return bitmapBytes(this.files.bitmaps, j);
  }

  postings(j: number): Posting[] {
    return postingsOf(this.files.postings, j);
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
 * resident, so memory is one shard's files (≤ 2²⁰ domains by default), not the whole index (≈ 90 B per domain:
 * 3.6 GB at Common Crawl's ≈ 40M). Entry numbers come from the sizes, so routing an entry reads nothing. Each shard is
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
  /** Bytes of a shard's biggest file (default 1 GiB; a single domain bigger than that gets a shard of its own). */
  maxBytes?: number;
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
 * (magic, version 1, n) then:
 * - domains.bin: `u64 domain64[n] · u32 byId[n] (entry indices in domain64 order) · u64 nameOffset[n+1] · UTF-8 names`;
 * - domain-datasets.bin: `u64 offset[n+1] · portable Roaring bitmaps` (each distinct dataset set serialized once);
 * - postings.bin: `u64 recordOffset[n+1] · records (u32 datasetId, u32 file, u64 first, u32 rows, u32 0)`.
 * Holds only the growing files (≈ 100 B per domain, outside the JS heap), no object per domain: the merger's index
 * step at Common Crawl's ≈ 40M registered domains.
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

  constructor(private readonly serializeSet: (datasetIds: number[]) => Uint8Array, limits: ShardLimits = {}) {
    this.maxDomains = limits.maxDomains ?? DEFAULT_SHARD_DOMAINS;
    this.maxBytes = limits.maxBytes ?? DEFAULT_SHARD_BYTES;
    if (!(this.maxDomains >= 1) || !(this.maxBytes >= 1)) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'shard limits must be ≥ 1', { ...limits });
    this.cur = new IndexShardWriter();
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
    if (this.cur.size > 0 && (this.cur.size >= this.maxDomains || this.cur.bytesWith(b.length, bm.length, postings.length) > this.maxBytes)) {
      this.done.push(this.cur);
      this.cur = new IndexShardWriter();
    }
    this.cur.add(b, d64, bm, postings);
    this.n++;
  }

  /** The serialized bitmap of the postings' datasets (sorted by dataset), serialized once per distinct set. */
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

/** One shard's three growing files. */
class IndexShardWriter {
  private n = 0;
  private readonly d64 = new ByteSink();
  private readonly nameOffs = new ByteSink();
  private readonly names = new ByteSink();
  private readonly bitmapOffs = new ByteSink();
  private readonly bitmaps = new ByteSink();
  private readonly recOffs = new ByteSink();
  private readonly recs = new ByteSink();
  private recCount = 0;

  get size(): number {
    return this.n;
  }

  /** Size of this shard's biggest file once a domain of these sizes is added. */
  bytesWith(nameBytes: number, bitmapBytes: number, postings: number): number {
    const n = this.n + 1;
    return offsetTableEnd(n) + Math.max(12 * n + this.names.length + nameBytes, this.bitmaps.length + bitmapBytes, REC * (this.recCount + postings));
  }

  add(name: Buffer, d64: bigint, bitmap: Uint8Array, postings: readonly Posting[]): void {
    this.d64.u64(d64);
    this.nameOffs.u64(this.names.length);
    this.names.bytes(name);
    this.bitmapOffs.u64(this.bitmaps.length);
    this.bitmaps.bytes(bitmap);
    this.recOffs.u64(this.recCount);
    for (const p of postings) {
      this.recs.u32(p.datasetId);
      this.recs.u32(p.file);
      this.recs.u64(p.first);
      this.recs.u32(p.rows);
      this.recs.u32(0);
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
    this.nameOffs.u64(this.names.length);
    this.bitmapOffs.u64(this.bitmaps.length);
    this.recOffs.u64(this.recCount);
    return {
      domains: once('domains', () => {
        const d64 = Buffer.concat(this.d64.parts());
        this.d64.release();
        return assemble(header(MAGIC.domains, n), [this.nameOffs, this.names], [d64, byIdOrder(d64, n)]);
      }),
      bitmaps: once('bitmaps', () => assemble(header(MAGIC.bitmaps, n), [this.bitmapOffs, this.bitmaps])),
      postings: once('postings', () => assemble(header(MAGIC.postings, n), [this.recOffs, this.recs])),
    };
  }
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
