import { checkFactsBuffer, factsIn } from './domain-facts';
import { IndexFormatError, type IndexShardFiles, type Posting } from './version-format';
import {
  MAGIC, bitmapIn, bitmapsLayoutOf, checkShardOrder, checkShardSize, domainsLayout, postingsIn, postingsLayoutOf, readHeader, readKey, readOffset, shardCount,
  type BitmapsLayout, type DomainsLayout, type PostingsLayout,
} from './shard-layout';

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

/**
 * The dictionary of shard k of `count`, its three files checked against each other: the same number of domains, and
 * none empty unless it is the only shard. @throws IndexFormatError CCP_ERR_INDEX_FORMAT
 */
function openShard(files: IndexShardFiles, k: number, count: number): DomainDictionary {
  shardCount(files, k, count);
  return new DomainDictionary(files.domains);
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
  /** Local entry j's facts records (domain-facts.ts), or null when the version has no facts files. */
  facts(j: number): Buffer | null;
}

/** A shard held in memory: its dictionary over its three buffers, the other two files' layouts read once. */
class LiveShard implements ShardView {
  private readonly bitmapsAt: BitmapsLayout;
  private readonly postingsAt: PostingsLayout;

  /** `factsFile`: the shard's facts-<k>.bin, checked against its size (none: the version has no facts). */
  constructor(
    readonly dict: DomainDictionary,
    readonly files: IndexShardFiles,
    private readonly factsFile: Buffer | null,
    k: number,
  ) {
    this.bitmapsAt = bitmapsLayoutOf(files.bitmaps);
    this.postingsAt = postingsLayoutOf(files.postings);
    if (factsFile !== null) checkFactsBuffer(factsFile, dict.size, k);
  }

  facts(j: number): Buffer | null {
    return this.factsFile === null ? null : factsIn(this.factsFile, this.dict.size, j);
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
  /** Entry i's facts records in dataset order (domain-facts.ts), or null when the version has no facts files. */
  facts(i: number): Buffer | null;
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

  /** Entry i's facts records in dataset order (domain-facts.ts), or null when the version has no facts files. */
  facts(i: number): Buffer | null {
    const [s, j] = this.at(i);
    return s.facts(j);
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
   * `expected`: the domains of each shard as shards.json gives them (null for a version written before it); `facts`:
   * each shard's facts file (null: the version has none).
   * @throws IndexFormatError when a shard's files disagree on its size or with `expected`, or shards are empty or out of order
   */
  constructor(shards: readonly IndexShardFiles[], expected: readonly number[] | null = null, facts: readonly Buffer[] | null = null) {
    const live = shards.map((files, k) => new LiveShard(openShard(files, k, shards.length), files, facts?.[k] ?? null, k));
    super(live.map((s) => s.dict.size));
    live.forEach((s, k) => {
      if (expected !== null) checkShardSize(s.size, expected[k]!, k);
      if (k > 0) checkShardOrder(live[k - 1]!.dict.nameBytes(live[k - 1]!.dict.size - 1), s.dict.nameBytes(0), k);
    });
    this.live = live;
    this.bytes = shards.reduce((a, s) => a + s.domains.length + s.bitmaps.length + s.postings.length, 0) + (facts ?? []).reduce((a, b) => a + b.length, 0);
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
  /** Shard k's three files and its facts file (when the version has facts), each checked against its size and CRC32. @throws IndexFormatError */
  read(k: number): IndexShardFiles & { facts?: Buffer };
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
    this.live = new LiveShard(dict, files, files.facts ?? null, k);
    return this.live;
  }

  protected firstName(k: number): Uint8Array {
    if (this.firsts[k] === null) this.shard(k);
    return this.firsts[k]!;
  }
}

