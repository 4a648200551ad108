import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RoaringBitmap32 } from 'roaring';
import { FileDomainIndex, type ShardFileRef } from './file-index';
import { DomainIndex, IndexWriter, crcOf, type IndexShardFiles, type Posting, type ShardFormat } from './format';
import { tempDirEach } from '../../../tests/support/temp-dir';

const serialize = (ids: number[]): Uint8Array => new RoaringBitmap32(ids).serialize('portable');

/** n domains in UTF-8 byte order, ASCII and non-ASCII, each with 1–3 postings over two datasets. */
function entries(n: number, far = false): { domain: string; d64: bigint; postings: Posting[] }[] {
  const names = Array.from({ length: n }, (_, i) => [`d${i}.example`, `é${i}.fr`, `😀${i}.io`][i % 3]!);
  names.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return names.map((domain, i) => ({
    domain,
    d64: BigInt((i * 7919) % n + 1) << 32n,
    // far: runs past row 2³² − 1 of their files (a format-2 shard writes postings.bin in format 1 then)
    postings: Array.from({ length: 1 + (i % 3) }, (_, k) => ({ datasetId: 1 + (k % 2), file: i % 4, first: i * 10 + k + (far ? 2 ** 33 : 0), rows: 1 + k })),
  }));
}

describe('FileDomainIndex', () => {
  let dir: string;
  tempDirEach('ccpipe-file-index-', (d) => (dir = d));

  /** Writes the shards as files and returns their refs (size and CRC32 as version.json would list them). */
  async function written(shards: IndexShardFiles[]): Promise<Record<keyof IndexShardFiles, ShardFileRef>[]> {
    return Promise.all(
      shards.map(async (files, k) => {
        const refs = {} as Record<keyof IndexShardFiles, ShardFileRef>;
        for (const f of ['domains', 'bitmaps', 'postings'] as const) {
          const path = join(dir, `${f}-${k}.bin`);
          await writeFile(path, files[f]);
          refs[f] = { path, size: files[f].length, crc32: crcOf(files[f]), name: `${f}-${k}.bin` };
        }
        return refs;
      }),
    );
  }

  function build(n: number, maxDomains?: number, format?: ShardFormat, far = false): IndexShardFiles[] {
    const w = new IndexWriter(serialize, { ...(maxDomains === undefined ? {} : { maxDomains }), ...(format === undefined ? {} : { format }) });
    for (const e of entries(n, far)) w.add(Buffer.from(e.domain), e.d64, e.postings);
    return w.finish();
  }

  it.each<[number | undefined, ShardFormat | undefined, boolean]>([[undefined, undefined, false], [300, undefined, false], [300, 1, false], [300, 2, true]])(
    'answers exactly like the resident index over the same files (shards of %s domains, format %s, runs past 2³²: %s)', async (maxDomains, format, far) => {
    const shards = build(2000, maxDomains, format, far);
    expect(shards[0]!.postings.readUInt32LE(4)).toBe(format === 1 || far ? 1 : 2);
    const resident = new DomainIndex(shards);
    const files = await FileDomainIndex.open(await written(shards), resident.shardSizes());
    try {
      expect([files.size, files.shardSizes()]).toEqual([2000, resident.shardSizes()]);
      for (let i = 0; i < 2000; i++) {
        const name = resident.name(i);
        expect([files.name(i), files.nameBytes(i).toString('utf8'), files.d64(i), files.indexOf(name), files.postings(i)]).toEqual([name, name, resident.d64(i), i, resident.postings(i)]);
        expect(files.bitmap(i).equals(resident.bitmap(i))).toBe(true);
      }
      for (const absent of ['', 'a.example', `${resident.name(299)}0`, '😀😀.io', 'zzzz']) expect(files.indexOf(absent)).toBe(-1);
      expect([files.postings(2000), files.postings(-1)]).toEqual([[], []]);
      // what it holds: every 64th name of each shard (and each shard's first), not the files
      let longest = 0;
      for (let i = 0; i < 2000; i++) longest = Math.max(longest, resident.nameBytes(i).length);
      expect(files.bytes).toBeGreaterThan(0);
      expect(files.bytes).toBeLessThanOrEqual((Math.ceil(2000 / 64) + 2 * shards.length) * (longest + 4));
    } finally {
      await files.close();
    }
  },
  );

  it.each<[number, ShardFormat]>([1, 63, 64, 65, 128, 129].flatMap((n) => [[n, 2], [n, 1]] as [number, ShardFormat][]))('finds every name and no name between them around the 64-name blocks (%s domains, format %s)', async (n, format) => {
    const shards = build(n, undefined, format);
    const resident = new DomainIndex(shards);
    const files = await FileDomainIndex.open(await written(shards), [n]);
    try {
      for (let i = 0; i < n; i++) {
        const name = resident.name(i);
        expect(files.indexOf(name)).toBe(i);
        // just after a name and just before the next: not found
        expect(files.indexOf(`${name}\u0000`)).toBe(-1);
      }
      expect(files.indexOf('')).toBe(-1);
      expect(files.indexOf('\u{10FFFF}')).toBe(-1);
    } finally {
      await files.close();
    }
  });

  it('an empty index is one empty shard', async () => {
    const files = await FileDomainIndex.open(await written(new IndexWriter(serialize).finish()), [0]);
    expect([files.size, files.indexOf('a.example')]).toEqual([0, -1]);
    await files.close();
  });

  it('checks every file when opened: CRC32, size, a missing file, counts against shards.json, shards out of order', async () => {
    const shards = build(900, 300);
    const refs = await written(shards);
    const reopen = (r: typeof refs, expected: number[] | null = [300, 300, 300]) => FileDomainIndex.open(r, expected);
    const ok = await reopen(refs);
    await ok.close();
    const fds = readdirSync('/proc/self/fd').length;
    // one byte changed in the last shard's postings
    const bad = Buffer.from(shards[2]!.postings);
    bad.writeUInt8(bad.readUInt8(bad.length - 1) ^ 0xff, bad.length - 1);
    await writeFile(refs[2]!.postings.path, bad);
    await expect(reopen(refs)).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC' });
    await writeFile(refs[2]!.postings.path, shards[2]!.postings);
    await expect(reopen([refs[0]!, refs[1]!, { ...refs[2]!, domains: { ...refs[2]!.domains, size: refs[2]!.domains.size + 1 } }])).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_CRC' });
    await expect(reopen([refs[0]!, refs[1]!, { ...refs[2]!, bitmaps: { ...refs[2]!.bitmaps, path: join(dir, 'gone.bin') } }])).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_MISSING' });
    await expect(reopen(refs, [300, 299, 301])).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_FORMAT' });
    await expect(reopen([refs[0]!, refs[2]!, refs[1]!])).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_FORMAT', message: 'index shards out of order' });
    // every failed open closed the files it had opened
    expect(readdirSync('/proc/self/fd').length).toBe(fds);
  });

  it('format 2: a set index past the bitmap table is refused when read, a table bigger than its file when opened', async () => {
    const shards = build(100);
    const n = 100;
    const setAt = (i: number) => 12 + 4 * i;
    const badSet = Buffer.from(shards[0]!.bitmaps);
    badSet.writeUInt32LE(77, setAt(5));
    const files = await FileDomainIndex.open(await written([{ ...shards[0]!, bitmaps: badSet }]), [n]);
    try {
      expect(files.bitmap(4).length).toBeGreaterThan(0);
      expect(() => files.bitmap(5)).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    } finally {
      await files.close();
    }
    const badCount = Buffer.from(shards[0]!.bitmaps);
    badCount.writeUInt32LE(2 ** 30, setAt(n)); // m, the number of distinct bitmaps
    await expect(FileDomainIndex.open(await written([{ ...shards[0]!, bitmaps: badCount }]), [n])).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_FORMAT' });
  });

  it('after close, reads throw a clear error instead of reading a reused descriptor', async () => {
    const files = await FileDomainIndex.open(await written(build(50)), [50]);
    const first = files.name(0);
    expect([files.indexOf(files.name(7)), files.indexOf(first)]).toEqual([7, 0]);
    await files.close();
    await files.close(); // idempotent
    expect(() => files.name(7)).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_CLOSED' }));
    expect(() => files.indexOf(first)).toThrow(/closed/); // though the search's memo holds that name
  });
});
