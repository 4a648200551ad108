import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { CcpError } from '@ccpipe/core';
import { checkFactsFile, factsDataAt } from './domain-facts';
import {
  IndexFormatError, MAGIC, ShardedDomainIndex, bitmapSetCountAt, bitmapSlot, bitmapsLayout, checkShardOrder, checkShardSize, decodePostings, domainsLayout,
  postingsLayout, readHeader, readKey, readOffset, shardCount, type IndexShardFiles, type Posting, type ShardLayout, type ShardView,
} from './format';

/** Every SAMPLE-th name of a shard is kept in memory: a lookup finds its block there, then reads the block. */
const SAMPLE = 64;
const CHUNK = 1 << 20;

/** Where one shard file is and what version.json says of it. */
export interface ShardFileRef {
  path: string;
  size: number;
  crc32: number;
  /** For errors: the file's name in its version. */
  name: string;
}

/** A shard whose three files are read by positional reads (the page cache holds what is hot), not held in memory. */
class FileShard implements ShardView {
  constructor(
    private readonly fds: Record<keyof IndexShardFiles, number>,
    readonly size: number,
    private readonly at: ShardLayout,
    private readonly alive: () => void,
    /** Names of entries 0, SAMPLE, 2·SAMPLE, … packed: sample i is sampleBytes[sampleEnds[i-1] ?? 0, sampleEnds[i]). */
    private readonly sampleBytes: Buffer,
    private readonly sampleEnds: Uint32Array,
    /** The shard's facts file (null: the version has none). */
    private readonly factsFd: number | null,
  ) {}

  facts(j: number): Buffer | null {
    if (this.factsFd === null) return null;
    const b = this.readAt(this.factsFd, 'facts', 12 + 4 * j, 8);
    const s = b.readUInt32LE(0);
    return this.readAt(this.factsFd, 'facts', factsDataAt(this.size) + s, b.readUInt32LE(4) - s);
  }

  /** Entry 0's name (the sample's first; empty for an empty shard). */
  get firstName(): Buffer {
    return this.sampleBytes.subarray(0, this.sampleEnds[0] ?? 0);
  }

  /** Bytes this shard holds in memory: its name sample. */
  get memoBytes(): number {
    return this.sampleBytes.length + this.sampleEnds.byteLength;
  }

  private read(file: keyof IndexShardFiles, at: number, length: number): Buffer {
    return this.readAt(this.fds[file], file, at, length);
  }

  private readAt(fd: number, file: string, at: number, length: number): Buffer {
    this.alive();
    if (length < 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index offsets out of order', { file });
    const b = Buffer.allocUnsafe(length);
    for (let got = 0; got < length; ) {
      const n = readSync(fd, b, got, length - got, at + got);
      if (n === 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index file shorter than its offsets say', { file });
      got += n;
    }
    return b;
  }

  /** [start, end) of the offset pair `[i], [i+1]` (each `width` bytes) at `table` in `file`, times `scale`, plus `base`. */
  private span(file: keyof IndexShardFiles, table: number, width: 4 | 8, base: number, i: number, scale = 1): [number, number] {
    const b = this.read(file, table + width * i, 2 * width);
    return [base + scale * readOffset(b, 0, width), base + scale * readOffset(b, width, width)];
  }

  nameBytes(j: number): Buffer {
    const d = this.at.domains;
    const [s, e] = this.span('domains', d.offAt, d.offWidth, d.strAt, j);
    return this.read('domains', s, e - s);
  }

  name(j: number): string {
    return this.nameBytes(j).toString('utf8');
  }

  d64(j: number): bigint {
    const d = this.at.domains;
    return readKey(this.read('domains', d.d64At + d.keyWidth * j, d.keyWidth), 0, d.keyWidth);
  }

  indexOfBytes(key: Buffer): number {
    this.alive(); // the sample could answer without a read
    // the last sample at or before the key: its block holds the key if any entry does
    const ends = this.sampleEnds;
    let lo = 0;
    let hi = ends.length - 1;
    let block = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = key.compare(this.sampleBytes, mid === 0 ? 0 : ends[mid - 1]!, ends[mid]!);
      if (c === 0) return mid * SAMPLE;
      if (c > 0) {
        block = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (block < 0) return -1;
    // the block's offsets and names, one read each, searched in memory (its first entry is the sample: not equal)
    const { offAt, offWidth: w, strAt } = this.at.domains;
    const from = block * SAMPLE;
    const count = Math.min(SAMPLE, this.size - from);
    const offs = this.read('domains', offAt + w * from, w * (count + 1));
    const base = readOffset(offs, 0, w);
    const names = this.read('domains', strAt + base, readOffset(offs, w * count, w) - base);
    lo = 1;
    hi = count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = key.compare(names, readOffset(offs, w * mid, w) - base, readOffset(offs, w * (mid + 1), w) - base);
      if (c === 0) return from + mid;
      if (c > 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  bitmap(j: number): Buffer {
    const b = this.at.bitmaps;
    const s = bitmapSlot(b, j, (at) => this.read('bitmaps', at, 4).readUInt32LE(0));
    const [from, to] = this.span('bitmaps', b.offAt, b.offWidth, b.dataAt, s);
    return this.read('bitmaps', from, to - from);
  }

  postings(j: number): Posting[] {
    const p = this.at.postings;
    const [s, e] = this.span('postings', 12, p.offWidth, p.recAt, j, p.rec);
    return decodePostings(this.read('postings', s, e - s), p);
  }
}

/** Closes the handles of an index that was dropped without close(). */
const orphans = new FinalizationRegistry<FileHandle[]>((handles) => {
  for (const h of handles) h.close().catch(() => undefined);
});

/**
 * A version's domain index read in place from its local shard files by positional reads: the same entries as the
 * resident `DomainIndex`, but what it holds in memory is every 64th name of each shard (≈ 0.5 B per domain), not ≈ 50 B
 * per domain (format 2; ≈ 2 GB at Common Crawl's ≈ 40M domains); the operating system's page cache keeps the hot pages. A
 * lookup finds its block of 64 names in the sample, then reads the block's offsets and names (two reads). Opened by {@link open}, which
 * checks every file as `loadVersion` does (size and CRC32 in one streamed pass, headers, counts, shard order).
 * Holds three descriptors per shard (four with a facts file) until {@link close} (or until it is collected).
 */
export class FileDomainIndex extends ShardedDomainIndex {
  private closed = false;

  private constructor(
    private readonly handles: FileHandle[],
    private readonly shards: FileShard[],
    private readonly onClose: (() => Promise<void>) | undefined,
  ) {
    super(shards.map((s) => s.size));
    orphans.register(this, handles, this);
  }

  /**
   * Opens and checks the shards, each given as its three files. `expected`: shards.json's domains per shard (null for
   * a version written before it). `onClose` runs once {@link close} has closed the files (e.g. deleting staged copies;
   * not on a failed open); `signal` aborts the checks between chunks. @throws IndexFormatError CCP_ERR_INDEX_MISSING
   * when a file is gone, CCP_ERR_INDEX_CRC on a size or CRC32 mismatch, CCP_ERR_INDEX_FORMAT on bad headers, counts or
   * order; CcpError CCP_ERR_ABORTED once `signal` aborted
   */
  static async open(
    shards: readonly Record<keyof IndexShardFiles, ShardFileRef>[], expected: readonly number[] | null,
    opts: { onClose?: () => Promise<void>; signal?: AbortSignal; facts?: readonly ShardFileRef[] } = {},
  ): Promise<FileDomainIndex> {
    if (shards.length === 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'an index has at least one shard');
    const handles: FileHandle[] = [];
    try {
      const built: FileShard[] = [];
      let lastBefore: Buffer | null = null;
      let index: FileDomainIndex | null = null;
      const alive = (): void => {
        if (index?.closed === true) throw new CcpError('CCP_ERR_INDEX_CLOSED', 'the index version was closed');
      };
      for (const [k, refs] of shards.entries()) {
        const heads = {} as Record<keyof IndexShardFiles, Buffer>;
        const fds = {} as Record<keyof IndexShardFiles, number>;
        let domainsHandle: FileHandle | null = null;
        let bitmapsHandle: FileHandle | null = null;
        for (const file of ['domains', 'bitmaps', 'postings'] as const) {
          const { handle, head } = await openChecked(refs[file], opts.signal);
          handles.push(handle);
          if (file === 'domains') domainsHandle = handle;
          if (file === 'bitmaps') bitmapsHandle = handle;
          fds[file] = handle.fd;
          heads[file] = head;
        }
        const n = shardCount(heads, k, shards.length);
        if (expected !== null) checkShardSize(n, expected[k]!, k);
        const domains = domainsLayout(n, readHeader(heads.domains, MAGIC.domains, 'domains.bin').v);
        const { offAt, offWidth, strAt } = domains;
        // the layout's sizes must add up: the names end where the file does
        const lastOffset = Buffer.alloc(offWidth);
        if (refs.domains.size >= strAt) await readFully(domainsHandle!, lastOffset, offWidth, strAt - offWidth);
        if (refs.domains.size < strAt || strAt + readOffset(lastOffset, 0, offWidth) !== refs.domains.size) {
          throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'domains.bin size mismatch', { shard: k });
        }
        const bv = readHeader(heads.bitmaps, MAGIC.bitmaps, 'domain-datasets.bin').v;
        let m = n;
        if (bv === 2) {
          const mb = Buffer.alloc(4);
          if (refs.bitmaps.size < bitmapSetCountAt(n) + 4) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'domain-datasets.bin size mismatch', { shard: k });
          await readFully(bitmapsHandle!, mb, 4, bitmapSetCountAt(n));
          m = mb.readUInt32LE(0);
          // the table of m offsets must fit: a wrong m would send reads past the file (or allocate for them)
          if (refs.bitmaps.size < bitmapsLayout(n, 2, m).dataAt) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'domain-datasets.bin size mismatch', { shard: k });
        }
        const pv = readHeader(heads.postings, MAGIC.postings, 'postings.bin').v;
        const layout: ShardLayout = { domains, bitmaps: bitmapsLayout(n, bv, m), postings: postingsLayout(n, pv) };
        const sample = await sampleNames(domainsHandle!, n, offAt, offWidth, strAt, refs.domains.size);
        let factsFd: number | null = null;
        const factsRef = opts.facts?.[k];
        if (factsRef !== undefined) {
          const { handle, head } = await openChecked(factsRef, opts.signal);
          handles.push(handle);
          const last = Buffer.alloc(4);
          if (factsRef.size >= factsDataAt(n)) await readFully(handle, last, 4, factsDataAt(n) - 4);
          checkFactsFile(head, factsRef.size, factsRef.size >= factsDataAt(n) ? last.readUInt32LE(0) : -1, n, k);
          factsFd = handle.fd;
        }
        const shard = new FileShard(fds, n, layout, alive, sample.bytes, sample.ends, factsFd);
        if (n > 0) {
          if (lastBefore !== null) checkShardOrder(lastBefore, shard.firstName, k);
          lastBefore = shard.nameBytes(n - 1);
        }
        built.push(shard);
      }
      index = new FileDomainIndex(handles, built, opts.onClose);
      return index;
    } catch (err) {
      await Promise.all(handles.map((h) => h.close().catch(() => undefined)));
      throw err;
    }
  }

  /** Bytes held in memory: the name samples (the files stay in the page cache). */
  get bytes(): number {
    return this.shards.reduce((a, s) => a + s.memoBytes, 0);
  }

  /** Closes the files, then runs the open's `onClose`; reads afterwards throw. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    orphans.unregister(this);
    await Promise.all(this.handles.map((h) => h.close().catch(() => undefined)));
    await this.onClose?.();
  }

  protected shard(k: number): ShardView {
    return this.shards[k]!;
  }

  protected firstName(k: number): Uint8Array {
    return this.shards[k]!.firstName;
  }
}

/**
 * Every SAMPLE-th name of a shard's domains.bin, packed, read in chunks: the offsets table, then the names region in
 * windows of about 1 MiB (the sampled names lie in order, SAMPLE names apart). @throws IndexFormatError on offsets
 * outside the file or out of order
 */
async function sampleNames(h: FileHandle, n: number, offAt: number, w: 4 | 8, strAt: number, fileSize: number): Promise<{ bytes: Buffer; ends: Uint32Array }> {
  const count = Math.ceil(n / SAMPLE);
  const starts = new Float64Array(count);
  const stops = new Float64Array(count);
  const PER = 1 << 16; // offsets per read
  const buf = Buffer.allocUnsafe(w * (PER + 1));
  for (let first = 0; first < n; first += PER) {
    const m = Math.min(PER, n - first); // entries [first, first + m), plus the offset after the last
    await readFully(h, buf, w * (m + 1), offAt + w * first);
    for (let e = Math.ceil(first / SAMPLE) * SAMPLE; e < first + m; e += SAMPLE) {
      starts[e / SAMPLE] = readOffset(buf, w * (e - first), w);
      stops[e / SAMPLE] = readOffset(buf, w * (e - first + 1), w);
    }
  }
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (stops[i]! < starts[i]! || (i > 0 && starts[i]! < stops[i - 1]!) || strAt + stops[i]! > fileSize) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'domains.bin name offsets out of order');
    total += stops[i]! - starts[i]!;
  }
  const bytes = Buffer.allocUnsafeSlow(total);
  const ends = new Uint32Array(count);
  let at = 0;
  for (let i = 0; i < count; ) {
    // a window from sample i's name to the last sampled name ending within CHUNK of it (at least one name)
    let j = i + 1;
    while (j < count && stops[j]! - starts[i]! <= CHUNK) j++;
    const w = Buffer.allocUnsafe(stops[j - 1]! - starts[i]!);
    await readFully(h, w, w.length, strAt + starts[i]!);
    for (let q = i; q < j; q++) {
      at += w.copy(bytes, at, starts[q]! - starts[i]!, stops[q]! - starts[i]!);
      ends[q] = at;
    }
    i = j;
  }
  return { bytes, ends };
}

/** Reads exactly `length` bytes at `position` into `buf`. */
async function readFully(h: FileHandle, buf: Buffer, length: number, position: number): Promise<void> {
  for (let got = 0; got < length; ) {
    const { bytesRead } = await h.read(buf, got, length - got, position + got);
    if (bytesRead === 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index file shorter than its offsets say');
    got += bytesRead;
  }
}

/** Opens a file, checks its size and CRC32 in one streamed pass, returns its handle and its first 12 bytes. */
async function openChecked(ref: ShardFileRef, signal: AbortSignal | undefined): Promise<{ handle: FileHandle; head: Buffer }> {
  let handle: FileHandle;
  try {
    handle = await open(ref.path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new IndexFormatError('CCP_ERR_INDEX_MISSING', 'index file is missing', { file: ref.name });
    throw err;
  }
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    const head = Buffer.alloc(12);
    let crc = 0;
    let size = 0;
    for (;;) {
      if (signal?.aborted === true) throw new CcpError('CCP_ERR_ABORTED', 'opening the index files was aborted', { detail: { file: ref.name } });
      const { bytesRead } = await handle.read(buf, 0, CHUNK, size);
      if (bytesRead === 0) break;
      if (size < 12) buf.copy(head, size, 0, Math.min(bytesRead, 12 - size));
      crc = crc32(buf.subarray(0, bytesRead), crc);
      size += bytesRead;
    }
    if (size !== ref.size || crc !== ref.crc32) throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'index file CRC32 mismatch', { file: ref.name });
    return { handle, head };
  } catch (err) {
    await handle.close().catch(() => undefined);
    throw err;
  }
}
