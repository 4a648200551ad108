import { readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { CcpError } from '@ccpipe/core';
import {
  IndexFormatError, MAGIC, REC, ShardedDomainIndex, checkHeader, checkShardOrder, checkShardSize, postingAt, readU64,
  type IndexShardFiles, type Posting, type ShardView,
} from './format';

/** Levels of a shard's name search whose probes are kept in memory (2¹⁰ − 1 names per shard at most). */
const MEMO_LEVELS = 10;
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
  private readonly byIdAt: number;
  private readonly offAt: number;
  private readonly strAt: number;
  /** Names of the search's first levels, by entry. */
  private readonly memo = new Map<number, Buffer>();

  constructor(
    private readonly fds: Record<keyof IndexShardFiles, number>,
    readonly size: number,
    private readonly alive: () => void,
  ) {
    this.byIdAt = 12 + 8 * size;
    this.offAt = this.byIdAt + 4 * size;
    this.strAt = this.offAt + 8 * (size + 1);
  }

  /** Bytes of the memo (what this shard holds in memory): each name in its own allocation, ≈ 100 B of overhead. */
  get memoBytes(): number {
    let n = 0;
    for (const b of this.memo.values()) n += b.length + 100;
    return n;
  }

  private read(file: keyof IndexShardFiles, at: number, length: number): Buffer {
    this.alive();
    if (length < 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index offsets out of order', { file });
    const b = Buffer.allocUnsafe(length);
    for (let got = 0; got < length; ) {
      const n = readSync(this.fds[file], b, got, length - got, at + got);
      if (n === 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index file shorter than its offsets say', { file });
      got += n;
    }
    return b;
  }

  /** [start, end) of a u64 offset pair `[i], [i+1]` at `table` in `file`, plus `base`. */
  private span(file: keyof IndexShardFiles, table: number, base: number, i: number, scale = 1): [number, number] {
    const b = this.read(file, table + 8 * i, 16);
    return [base + scale * readU64(b, 0), base + scale * readU64(b, 8)];
  }

  nameBytes(j: number): Buffer {
    const [s, e] = this.span('domains', this.offAt, this.strAt, j);
    return this.read('domains', s, e - s);
  }

  name(j: number): string {
    return this.nameBytes(j).toString('utf8');
  }

  d64(j: number): bigint {
    return this.read('domains', 12 + 8 * j, 8).readBigUInt64LE(0);
  }

  indexOfBytes(key: Buffer): number {
    this.alive(); // the memo could answer without a read
    let lo = 0;
    let hi = this.size - 1;
    for (let depth = 0; lo <= hi; depth++) {
      const mid = (lo + hi) >>> 1;
      let name = depth < MEMO_LEVELS ? this.memo.get(mid) : undefined;
      if (name === undefined) {
        name = this.nameBytes(mid);
        // a memo entry gets its own memory: a pooled Buffer would keep its whole 8 KiB pool block alive
        if (depth < MEMO_LEVELS) this.memo.set(mid, (name = copySlow(name)));
      }
      const c = Buffer.compare(name, key);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  bitmap(j: number): Buffer {
    const [s, e] = this.span('bitmaps', 12, 12 + 8 * (this.size + 1), j);
    return this.read('bitmaps', s, e - s);
  }

  postings(j: number): Posting[] {
    const base = 12 + 8 * (this.size + 1);
    const [s, e] = this.span('postings', 12, base, j, REC);
    const b = this.read('postings', s, e - s);
    const out: Posting[] = [];
    for (let at = 0; at < b.length; at += REC) out.push(postingAt(b, at));
    return out;
  }
}

/** Closes the handles of an index that was dropped without close(). */
const orphans = new FinalizationRegistry<FileHandle[]>((handles) => {
  for (const h of handles) h.close().catch(() => undefined);
});

/**
 * A version's domain index read in place from its local shard files by positional reads: the same entries as the
 * resident `DomainIndex`, but what it holds in memory is the first levels of each shard's name search (≤ 1,023 names
 * a shard), not ≈ 90 B per domain (≈ 3.6 GB at Common Crawl's ≈ 40M domains); the operating system's page cache
 * keeps the hot pages. A lookup is ≈ 10 probes past the memo, two small reads each. Opened by {@link open}, which
 * checks every file as `loadVersion` does (size and CRC32 in one streamed pass, headers, counts, shard order).
 * Holds three descriptors per shard until {@link close} (or until it is collected).
 */
export class FileDomainIndex extends ShardedDomainIndex {
  private closed = false;

  private constructor(
    private readonly handles: FileHandle[],
    private readonly shards: FileShard[],
    private readonly firsts: Buffer[],
  ) {
    super(shards.map((s) => s.size));
    orphans.register(this, handles, this);
  }

  /**
   * Opens and checks the shards, each given as its three files. `expected`: shards.json's domains per shard (null for
   * a version written before it). @throws IndexFormatError CCP_ERR_INDEX_MISSING when a file is gone,
   * CCP_ERR_INDEX_CRC on a size or CRC32 mismatch, CCP_ERR_INDEX_FORMAT on bad headers, counts or order
   */
  static async open(shards: readonly Record<keyof IndexShardFiles, ShardFileRef>[], expected: readonly number[] | null): Promise<FileDomainIndex> {
    if (shards.length === 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'an index has at least one shard');
    const handles: FileHandle[] = [];
    try {
      const built: FileShard[] = [];
      const firsts: Buffer[] = [];
      let lastBefore: Buffer | null = null;
      let index: FileDomainIndex | null = null;
      const alive = (): void => {
        if (index?.closed === true) throw new CcpError('CCP_ERR_INDEX_CLOSED', 'the index version was closed');
      };
      for (const [k, refs] of shards.entries()) {
        const heads = {} as Record<keyof IndexShardFiles, Buffer>;
        const fds = {} as Record<keyof IndexShardFiles, number>;
        for (const file of ['domains', 'bitmaps', 'postings'] as const) {
          const { handle, head } = await openChecked(refs[file]);
          handles.push(handle);
          fds[file] = handle.fd;
          heads[file] = head;
        }
        const n = checkHeader(heads.domains, MAGIC.domains, 'domains.bin');
        if (checkHeader(heads.bitmaps, MAGIC.bitmaps, 'domain-datasets.bin') !== n || checkHeader(heads.postings, MAGIC.postings, 'postings.bin') !== n) {
          throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'shard files disagree on their number of domains', { shard: k });
        }
        if (shards.length > 1 && n === 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'empty index shard', { shard: k });
        if (expected !== null) checkShardSize(n, expected[k]!, k);
        const shard = new FileShard(fds, n, alive);
        // the layout's sizes must add up: the names end where the file does
        const strAt = 12 + 8 * n + 4 * n + 8 * (n + 1);
        if (refs.domains.size < strAt || strAt + readU64(readAt(fds.domains, strAt - 8, 8), 0) !== refs.domains.size) {
          throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'domains.bin size mismatch', { shard: k });
        }
        if (n > 0) {
          const first = shard.nameBytes(0);
          if (lastBefore !== null) checkShardOrder(lastBefore, first, k);
          lastBefore = shard.nameBytes(n - 1);
          firsts.push(first);
        } else firsts.push(Buffer.alloc(0));
        built.push(shard);
      }
      index = new FileDomainIndex(handles, built, firsts);
      return index;
    } catch (err) {
      await Promise.all(handles.map((h) => h.close().catch(() => undefined)));
      throw err;
    }
  }

  /** Bytes held in memory: the name memos (the files stay in the page cache). */
  get bytes(): number {
    return this.shards.reduce((a, s) => a + s.memoBytes, 0) + this.firsts.reduce((a, b) => a + b.length, 0);
  }

  /** Closes the files; reads afterwards throw. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    orphans.unregister(this);
    await Promise.all(this.handles.map((h) => h.close().catch(() => undefined)));
  }

  protected shard(k: number): ShardView {
    return this.shards[k]!;
  }

  protected firstName(k: number): Uint8Array {
    return this.firsts[k]!;
  }
}

function copySlow(b: Buffer): Buffer {
  const out = Buffer.allocUnsafeSlow(b.length);
  b.copy(out);
  return out;
}

function readAt(fd: number, at: number, length: number): Buffer {
  const b = Buffer.alloc(length);
  if (readSync(fd, b, 0, length, at) !== length) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index file shorter than its header says');
  return b;
}

/** Opens a file, checks its size and CRC32 in one streamed pass, returns its handle and its first 12 bytes. */
async function openChecked(ref: ShardFileRef): Promise<{ handle: FileHandle; head: Buffer }> {
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
