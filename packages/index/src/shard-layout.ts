import { IndexFormatError, type IndexShardFiles, type Posting } from './version-format';

/** @internal File magics of the shard files (also read by file-index.ts). */
export const MAGIC = { domains: 0x44444343, bitmaps: 0x42444343, postings: 0x50444343 } as const; // 'CCDD' 'CCDB' 'CCDP' LE

/**
 * Format version of a shard file, in its header: 1 (u64 offsets, one bitmap per entry, 24-byte postings) or 2 (the
 * default since stop 16: u32 offsets and keys, a table of distinct bitmaps per shard, 16-byte postings). Each of a
 * shard's three files carries its own; readers take both.
 */
export type ShardFormat = 1 | 2;

/** @internal A shard file's 12-byte header: magic, format version, entry count. */
export function shardHeader(magic: number, n: number, v: ShardFormat): Buffer {
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


/** @internal domain-datasets.bin's layout, read from the buffer's header (and, in format 2, its table size). */
export function bitmapsLayoutOf(buf: Buffer): BitmapsLayout {
  const { n, v } = readHeader(buf, MAGIC.bitmaps, 'domain-datasets.bin');
  return bitmapsLayout(n, v, v === 2 ? buf.readUInt32LE(bitmapSetCountAt(n)) : n);
}

/** @internal postings.bin's layout, read from the buffer's header. */
export function postingsLayoutOf(buf: Buffer): PostingsLayout {
  const { n, v } = readHeader(buf, MAGIC.postings, 'postings.bin');
  return postingsLayout(n, v);
}

/** @internal The serialized bitmap of entry i of `buf` laid out as `at` (a view into the buffer). */
export function bitmapIn(buf: Buffer, at: BitmapsLayout, i: number): Buffer {
  if (i < 0 || i >= at.n) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'bitmap index out of range');
  const s = bitmapSlot(at, i, (p) => buf.readUInt32LE(p));
  return buf.subarray(at.dataAt + readOffset(buf, at.offAt + at.offWidth * s, at.offWidth), at.dataAt + readOffset(buf, at.offAt + at.offWidth * (s + 1), at.offWidth));
}

/** @internal Postings of entry i of `buf` laid out as `at`. */
export function postingsIn(buf: Buffer, at: PostingsLayout, i: number): Posting[] {
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

