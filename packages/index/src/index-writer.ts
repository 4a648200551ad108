import { IndexFormatError, type IndexShardFiles, type Posting } from './version-format';
import { FACTS_MAGIC, factsDataAt } from './domain-facts';
import { MAGIC, REC, bitmapsLayout, domainsLayout, offsetTableEnd, postingsLayout, shardHeader, type ShardFormat } from './shard-layout';

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
  /** The shard's facts-<k>.bin (domain-facts.ts), when the writer keeps facts. */
  facts?: () => Buffer;
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
  private readonly facts: boolean;

  /** `opts.facts`: write each shard's facts file too (each {@link add} then gives the domain's facts records). */
  constructor(private readonly serializeSet: (datasetIds: number[]) => Uint8Array, limits: ShardLimits = {}, opts: { facts?: boolean } = {}) {
    this.facts = opts.facts === true;
    this.maxDomains = limits.maxDomains ?? DEFAULT_SHARD_DOMAINS;
    this.maxBytes = limits.maxBytes ?? DEFAULT_SHARD_BYTES;
    this.format = limits.format ?? 2;
    if (!(this.maxDomains >= 1) || !(this.maxBytes >= 1) || !(this.maxBytes < 2 ** 32) || (this.format !== 1 && this.format !== 2)) {
      throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'shard limits must be ≥ 1 (maxBytes below 4 GiB), format 1 or 2', { ...limits });
    }
    this.cur = new IndexShardWriter(this.format, this.facts);
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
   * dataset, at least one; a dataset whose rows sit in several runs has one posting per run, in paging order) and,
   * when the writer keeps facts, its facts records in dataset order (domain-facts.ts; empty: none).
   * @throws IndexFormatError when names come out of order
   */
  add(name: Uint8Array, d64: bigint, postings: readonly Posting[], facts: Uint8Array = NO_FACTS): void {
    if (this.spent) throw new Error('IndexWriter.add(): the writer is spent');
    const b = Buffer.from(name.buffer, name.byteOffset, name.byteLength);
    // the previous name is kept as a copy in one reused buffer (no allocation per domain; the caller's bytes may be
    // a view it reuses)
    if (this.n > 0 && b.compare(this.last, 0, this.lastLength) <= 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index domains out of order', { domain: b.toString('utf8') });
    if (b.length > this.last.length) this.last = Buffer.allocUnsafe(Math.max(b.length, 2 * this.last.length));
    this.lastLength = b.copy(this.last);
    const bm = this.bitmapOf(postings);
    if (this.cur.size > 0 && (this.cur.size >= this.maxDomains || this.cur.bytesWith(b.length, d64, bm, postings, facts.length) > this.maxBytes)) {
      this.done.push(this.cur);
      this.cur = new IndexShardWriter(this.format, this.facts);
    }
    this.cur.add(b, d64, bm, postings, facts);
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

  /** Every shard's files at once, facts files included (a writer with facts). The writer is spent. */
  finishWithFacts(): (IndexShardFiles & { facts: Buffer })[] {
    return this.shards().map((f) => ({ domains: f.domains(), bitmaps: f.bitmaps(), postings: f.postings(), facts: f.facts!() }));
  }
}

const NO_FACTS = new Uint8Array(0);

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

  /** facts-<k>.bin: `u32 recordOffset[n+1]`, then the records (null: the writer keeps no facts). */
  private readonly factOffs: ByteSink | null;
  private readonly factRecs: ByteSink | null;

  constructor(
    private readonly format: ShardFormat,
    facts: boolean,
  ) {
    this.factOffs = facts ? new ByteSink() : null;
    this.factRecs = facts ? new ByteSink() : null;
  }

  get size(): number {
    return this.n;
  }

  /** Size of this shard's biggest file once a domain of this name length, key, bitmap and postings is added (exact). */
  bytesWith(nameBytes: number, d64: bigint, bitmap: Uint8Array, postings: readonly Posting[], factsBytes: number): number {
    const n = this.n + 1;
    const facts = this.factRecs === null ? 0 : factsDataAt(n) + this.factRecs.length + factsBytes;
    const names = this.names.length + nameBytes;
    const recs = this.recCount + postings.length;
    if (this.format === 1) return Math.max(facts, offsetTableEnd(n) + Math.max(12 * n + names, this.bitmaps.length + bitmap.length, REC * recs));
    const domains = this.blockKeys && isBlockKey(d64) ? domainsLayout(n, 2).strAt + names : domainsLayout(n, 1).strAt + names;
    const fresh = !this.setOf.has(bitmap);
    const bitmaps = bitmapsLayout(n, 2, this.setOf.size + (fresh ? 1 : 0)).dataAt + this.bitmaps.length + (fresh ? bitmap.length : 0);
    const wide = this.firstHigh.size > 0 || postings.some((p) => p.first >= 2 ** 32);
    const postingsFile = postingsLayout(n, wide ? 1 : 2).recAt + (wide ? REC : 16) * recs;
    return Math.max(domains, bitmaps, postingsFile, facts);
  }

  add(name: Buffer, d64: bigint, bitmap: Uint8Array, postings: readonly Posting[], facts: Uint8Array): void {
    this.d64.u64(d64);
    if (this.factRecs !== null) {
      this.factOffs!.u32(this.factRecs.length);
      this.factRecs.bytes(facts);
    }
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
    const facts = this.factRecs === null ? {} : { facts: once('facts', () => {
      this.factOffs!.u32(this.factRecs!.length);
      return assemble(shardHeader(FACTS_MAGIC, n, 1), [this.factOffs!, this.factRecs!]);
    }) };
    if (this.format === 1) {
      return {
        domains: once('domains', () => {
          const d64 = drained(this.d64);
          return assemble(shardHeader(MAGIC.domains, n, 1), [d64, byIdOrder(d64, n), this.nameOffs, this.names]);
        }),
        bitmaps: once('bitmaps', () => assemble(shardHeader(MAGIC.bitmaps, n, 1), [this.bitmapOffs, this.bitmaps])),
        postings: once('postings', () => assemble(shardHeader(MAGIC.postings, n, 1), [this.recOffs, this.recs])),
        ...facts,
      };
    }
    return {
      domains: once('domains', () => {
        const d64 = drained(this.d64);
        const byId = byIdOrder(d64, n);
        // a key that is not a domain block: this file in format 1 (u64 keys and offsets)
        if (!this.blockKeys) return assemble(shardHeader(MAGIC.domains, n, 1), [d64, byId, widen(drained(this.nameOffs)), this.names]);
        const high = Buffer.allocUnsafe(4 * n);
        for (let i = 0; i < n; i++) high.writeUInt32LE(d64.readUInt32LE(8 * i + 4), 4 * i);
        return assemble(shardHeader(MAGIC.domains, n, 2), [high, byId, this.nameOffs, this.names]);
      }),
      bitmaps: once('bitmaps', () => {
        const m = Buffer.allocUnsafe(4);
        m.writeUInt32LE(this.setOf.size, 0);
        this.setOf.clear();
        return assemble(shardHeader(MAGIC.bitmaps, n, 2), [this.setIdx, m, this.bitmapOffs, this.bitmaps]);
      }),
      postings: once('postings', () => {
        if (this.firstHigh.size === 0) return assemble(shardHeader(MAGIC.postings, n, 2), [this.recOffs, this.recs]);
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
        return assemble(shardHeader(MAGIC.postings, n, 1), [offs, wide]);
      }),
      ...facts,
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
