import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RoaringBitmap32 } from 'roaring';
import { decodeFactsRecords, encodeFactsRecord } from './domain-facts';
import { FileDomainIndex, type ShardFileRef } from './file-index';
import {
  DomainDictionary, DomainIndex, IndexWriter, OnDemandDomainIndex, bitmapBytes, crcOf, postingsOf, type IndexShardFiles, type Posting, type ShardFormat, type ShardLimits,
} from './format';

const serialize = (ids: number[]): Uint8Array => new RoaringBitmap32(ids).serialize('portable');

/** n domains in UTF-8 byte order (ASCII, Latin-1 and astral names mixed), each with 1–3 postings. */
function entries(n: number, blockKeys: boolean): { domain: string; d64: bigint; postings: Posting[] }[] {
  const names = Array.from({ length: n }, (_, i) => [`d${i}.example`, `é${i}.fr`, `😀${i}.io`][i % 3]!);
  names.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return names.map((domain, i) => ({
    domain,
    // shuffled keys, so byId is a real permutation; block keys have zero low 32 bits
    d64: (BigInt((i * 7919) % n + 1) << 32n) | (blockKeys ? 0n : BigInt(i % 5)),
    postings: Array.from({ length: 1 + (i % 3) }, (_, k) => ({ datasetId: k * 2 + 1, file: i % 4, first: i * 10, rows: 1 + k })),
  }));
}

function shardsOf(list: ReturnType<typeof entries>, limits?: ShardLimits): ReturnType<IndexWriter['finish']> {
  const w = new IndexWriter(serialize, limits);
  for (const e of list) w.add(Buffer.from(e.domain), e.d64, e.postings);
  expect(w.size).toBe(list.length);
  return w.finish();
}

const written = (list: ReturnType<typeof entries>, limits?: ShardLimits): DomainIndex => new DomainIndex(shardsOf(list, limits));

describe('IndexWriter', () => {
  /** The format version in a file's header. */
  const formatOf = (b: Buffer): number => b.readUInt32LE(4);

  it.each<[ShardFormat, boolean]>([[2, true], [2, false], [1, true], [1, false]])('writes format %s files the readers take back whole: names, keys both ways, postings, bitmaps (domain block keys: %s)', (format, blockKeys) => {
    const list = entries(5000, blockKeys);
    const w = new IndexWriter(serialize, { format });
    for (const e of list) w.add(Buffer.from(e.domain), e.d64, e.postings);
    const shards = w.finish();
    expect(shards).toHaveLength(1);
    const got = shards[0]!;
    // format 2 keeps a key's high half only for domain blocks: other keys make domains.bin format 1
    expect([formatOf(got.domains), formatOf(got.bitmaps), formatOf(got.postings)]).toEqual([format === 2 && blockKeys ? 2 : 1, format, format]);
    const dict = new DomainDictionary(got.domains);
    expect(dict.size).toBe(5000);
    list.forEach((e, i) => {
      // indexOfD64 binary-searches byId: it finds every key only if byId is in domain64 order
      expect([dict.name(i), dict.d64(i), dict.indexOf(e.domain), dict.indexOfD64(e.d64)]).toEqual([e.domain, e.d64, i, i]);
      expect(postingsOf(got.postings, i)).toEqual(e.postings);
      expect([...RoaringBitmap32.deserialize(bitmapBytes(got.bitmaps, i), 'portable')]).toEqual(e.postings.map((p) => p.datasetId));
    });
  });

  it('format 2 is smaller: u32 keys and offsets, 16-byte postings, each distinct bitmap once per shard', () => {
    const list = entries(5000, true);
    const [v1] = shardsOf(list, { format: 1 }) as [IndexShardFiles];
    const [v2] = shardsOf(list) as [IndexShardFiles];
    const names = list.reduce((s, e) => s + Buffer.byteLength(e.domain), 0);
    const runs = list.reduce((s, e) => s + e.postings.length, 0);
    expect(v1.domains.length - v2.domains.length).toBe(8 * 5000 + 4); // 4 B of key, 4 of offset per entry (and the last offset)
    expect(v2.domains.length).toBe(12 + 12 * 5000 + 4 + names);
    expect(v2.postings.length).toBe(12 + 4 * 5001 + 16 * runs);
    // three dataset sets ({1}, {1,3}, {1,3,5}): three bitmaps, a u32 per entry
    const sets = new Set(list.map((e) => e.postings.map((p) => p.datasetId).join())).size;
    expect(sets).toBe(3);
    const setBytes = [...new Set(list.map((e) => e.postings.map((p) => p.datasetId).join()))].reduce((s, k) => s + serialize(k.split(',').map(Number)).length, 0);
    expect(v2.bitmaps.length).toBe(12 + 4 * 5000 + 4 + 4 * (sets + 1) + setBytes);
  });

  it('format 2 writes postings.bin in format 1 when a run starts past row 2³² − 1, and the readers take it back', () => {
    const far = 2 ** 32 + 7;
    const list = entries(300, true).map((e, i) => (i === 150 ? { ...e, postings: [{ datasetId: 1, file: 2, first: far, rows: 9 }] } : e));
    const [f] = shardsOf(list) as [IndexShardFiles];
    expect([formatOf(f.domains), formatOf(f.bitmaps), formatOf(f.postings)]).toEqual([2, 2, 1]);
    const index = new DomainIndex([f]);
    list.forEach((e, i) => expect(index.postings(i)).toEqual(e.postings));
    expect(index.postings(150)).toEqual([{ datasetId: 1, file: 2, first: far, rows: 9 }]);
  });

  it('the byte limit counts the file as it will be written (format 2, or format 1 after a fallback)', () => {
    // limits at the exact size of a 3-domain shard: the 4th domain starts shard 2 in both formats
    for (const format of [1, 2] as const) {
      const list = entries(9, true);
      const [three] = shardsOf(list.slice(0, 3), { format }) as [IndexShardFiles];
      const limit = Math.max(three.domains.length, three.bitmaps.length, three.postings.length);
      const files = shardsOf(list, { format, maxBytes: limit });
      expect(new DomainIndex(files).shardSizes()).toEqual([3, 3, 3]);
    }
    // the fallbacks: keys that are not domain blocks (domains.bin in format 1), runs past row 2³² − 1 (postings.bin
    // in format 1): the limit is the size of the files as written, so a 3-domain shard is cut at the same place
    for (const [blockKeys, far] of [[false, false], [true, true], [false, true]] as const) {
      const list = entries(9, blockKeys).map((e) => (far ? { ...e, postings: e.postings.map((p) => ({ ...p, first: p.first + 2 ** 32 })) } : e));
      const [three] = shardsOf(list.slice(0, 3)) as [IndexShardFiles];
      expect([formatOf(three.domains), formatOf(three.postings)]).toEqual([blockKeys ? 2 : 1, far ? 1 : 2]);
      const limit = Math.max(three.domains.length, three.bitmaps.length, three.postings.length);
      const files = shardsOf(list, { maxBytes: limit });
      expect([blockKeys, far, new DomainIndex(files).shardSizes()]).toEqual([blockKeys, far, [3, 3, 3]]);
      expect(Math.max(...files.flatMap((f) => [f.domains.length, f.bitmaps.length, f.postings.length]))).toBeLessThanOrEqual(limit);
      list.forEach((e, i) => expect(new DomainIndex(files).postings(i)).toEqual(e.postings));
    }
    expect(() => new IndexWriter(serialize, { maxBytes: 2 ** 32 })).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
  });

  it('readers refuse a format-2 bitmap file whose set index points past its table', () => {
    const [f] = shardsOf(entries(10, true)) as [IndexShardFiles];
    const bad = Buffer.from(f.bitmaps);
    bad.writeUInt32LE(99, 12 + 4 * 3); // entry 3's set
    const index = new DomainIndex([{ ...f, bitmaps: bad }]);
    expect(index.bitmap(2).length).toBeGreaterThan(0);
    expect(() => index.bitmap(3)).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
  });

  it.each<[string, ShardLimits, number]>([
    ['domains', { maxDomains: 700 }, 8],
    ['bytes', { maxBytes: 20_000 }, 0],
  ])('splits the index into dictionary-range shards by %s, and the index over them answers as one dictionary', (_, limits, shardsWanted) => {
    const list = entries(5000, true);
    const one = written(list);
    const files = shardsOf(list, limits);
    const many = new DomainIndex(files);
    const sizes = many.shardSizes();
    if (shardsWanted > 0) expect(sizes).toEqual([...Array<number>(7).fill(700), 100]);
    else expect(sizes.length).toBeGreaterThan(4);
    expect([many.size, one.size]).toEqual([5000, 5000]);
    // under a byte limit every file of every shard stays within it
    if (limits.maxBytes !== undefined) expect(Math.max(...files.flatMap((f) => [f.domains.length, f.bitmaps.length, f.postings.length]))).toBeLessThanOrEqual(limits.maxBytes);
    list.forEach((e, i) => {
      expect([many.name(i), many.nameBytes(i).toString('utf8'), many.d64(i), many.indexOf(e.domain), many.indexOfD64(e.d64)]).toEqual([e.domain, e.domain, e.d64, i, i]);
      expect(many.postings(i)).toEqual(e.postings);
      expect(many.bitmap(i).equals(one.bitmap(i))).toBe(true);
    });
    // names before the first, between two shards and after the last are not found
    for (const absent of ['a.example', `${list[699]!.domain}0`, '😀😀.io', '']) expect(many.indexOf(absent)).toBe(-1);
    expect([many.indexOfD64(1n), many.postings(5000), many.postings(-1)]).toEqual([-1, [], []]);
  });

  it('takeClosed hands over each shard once the next one starts and keeps none of it; the shards taken and the rest make the whole index', async () => {
    const list = entries(2500, true);
    const w = new IndexWriter(serialize, { maxDomains: 1000 });
    const taken: IndexShardFiles[] = [];
    const at: number[] = [];
    list.forEach((e, i) => {
      w.add(Buffer.from(e.domain), e.d64, e.postings);
      if (w.closedPending) {
        at.push(i);
        for (const b of w.takeClosed()) taken.push({ domains: b.domains(), bitmaps: b.bitmaps(), postings: b.postings() });
      }
    });
    expect(at).toEqual([1000, 2000]); // the 1001st and 2001st domains open shards 1 and 2
    expect([w.closedPending, w.takeClosed(), w.shardSizes()]).toEqual([false, [], [1000, 1000, 500]]);
    const index = new DomainIndex([...taken, ...w.finish()]);
    expect(index.shardSizes()).toEqual([1000, 1000, 500]);
    list.forEach((e, i) => expect([index.indexOf(e.domain), index.postings(i)]).toEqual([i, e.postings]));
  });

  it('each file under the byte limit, a domain bigger than the limit alone in its shard', () => {
    const big: Posting[] = Array.from({ length: 100 }, (_, k) => ({ datasetId: k + 1, file: 0, first: 0, rows: 1 }));
    const w = new IndexWriter(serialize, { maxBytes: 1000 });
    const names = ['a.example', 'b.example', 'c.example', 'd.example', 'e.example'];
    names.forEach((n, i) => w.add(Buffer.from(n), BigInt(i + 1) << 32n, i === 2 ? big : [{ datasetId: 1, file: 0, first: 0, rows: 1 }]));
    const shards = w.finish();
    const index = new DomainIndex(shards);
    expect(index.shardSizes()).toEqual([2, 1, 2]);
    for (const [k, s] of shards.entries()) {
      if (k !== 1) for (const b of [s.domains, s.bitmaps, s.postings]) expect(b.length).toBeLessThanOrEqual(1000);
    }
    expect(index.postings(index.indexOf('c.example'))).toEqual(big);
  });

  it('a shard file may reach maxBytes exactly; one byte less starts a new shard a domain earlier', () => {
    const names = ['a0.example', 'a1.example', 'a2.example', 'a3.example', 'a4.example'];
    const files = (maxBytes: number) => {
      const w = new IndexWriter(serialize, { maxBytes });
      names.forEach((n, i) => w.add(Buffer.from(n), BigInt(i + 1) << 32n, [{ datasetId: 1, file: 0, first: i, rows: 1 }]));
      return w.finish();
    };
    // the biggest file of a shard holding the first four domains
    const w4 = new IndexWriter(serialize);
    names.slice(0, 4).forEach((n, i) => w4.add(Buffer.from(n), BigInt(i + 1) << 32n, [{ datasetId: 1, file: 0, first: i, rows: 1 }]));
    const limit = Math.max(...w4.finish().flatMap((f) => [f.domains.length, f.bitmaps.length, f.postings.length]));
    expect(new DomainIndex(files(limit)).shardSizes()).toEqual([4, 1]);
    expect(new DomainIndex(files(limit - 1)).shardSizes()).toEqual([3, 2]);
  });

  it('an empty index is one empty shard', () => {
    const index = new DomainIndex(new IndexWriter(serialize).finish());
    expect([index.size, index.shardSizes(), index.indexOf('a.example')]).toEqual([0, [0], -1]);
  });

  it('DomainIndex refuses shards out of order or whose files disagree', () => {
    const [a, b] = shardsOf(entries(10, true), { maxDomains: 5 }) as [IndexShardFiles, IndexShardFiles];
    expect(new DomainIndex([a, b]).shardSizes()).toEqual([5, 5]);
    expect(() => new DomainIndex([b, a])).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    const c = new IndexWriter(serialize);
    c.add(Buffer.from('zz.example'), 1n << 32n, [{ datasetId: 1, file: 0, first: 0, rows: 1 }]);
    const [z] = c.finish();
    expect(() => new DomainIndex([{ ...a, postings: z!.postings }])).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    expect(() => new DomainIndex([])).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
  });

  it('builds each file once: a second call throws instead of returning a file whose parts were let go of', () => {
    const w = new IndexWriter(serialize);
    w.add(Buffer.from('a.example'), 1n << 32n, [{ datasetId: 1, file: 0, first: 0, rows: 3 }]);
    const [f] = w.shards();
    expect(postingsOf(f!.postings(), 0)).toEqual([{ datasetId: 1, file: 0, first: 0, rows: 3 }]);
    expect(() => f!.postings()).toThrow(/already built/);
    expect(() => w.shards()).toThrow(/spent/);
    expect(() => w.add(Buffer.from('b.example'), 2n << 32n, [{ datasetId: 1, file: 0, first: 0, rows: 1 }])).toThrow(/spent/);
    expect(new DomainDictionary(f!.domains()).name(0)).toBe('a.example');
  });

  it('compares each name with the whole previous one: prefixes, equal names and names longer than the kept copy', () => {
    const one = [{ datasetId: 1, file: 0, first: 0, rows: 1 }];
    const w = new IndexWriter(serialize);
    const long = `${'x'.repeat(300)}.example`;
    w.add(Buffer.from('b.example'), 1n << 32n, one);
    for (const bad of ['b.exampl', 'b.example', 'a.example']) expect(() => w.add(Buffer.from(bad), 2n << 32n, one)).toThrow(/out of order/);
    w.add(Buffer.from('b.example0'), 2n << 32n, one);
    w.add(Buffer.from(long), 3n << 32n, one);
    expect(() => w.add(Buffer.from(long), 4n << 32n, one)).toThrow(/out of order/);
    expect(() => w.add(Buffer.from(long.slice(0, -1)), 4n << 32n, one)).toThrow(/out of order/);
    w.add(Buffer.from('y.example'), 4n << 32n, one);
    const index = new DomainIndex(w.finish());
    expect([0, 1, 2, 3].map((i) => index.name(i))).toEqual(['b.example', 'b.example0', long, 'y.example']);
  });

  it('refuses names out of dictionary order, across shards too', () => {
    const w = new IndexWriter(serialize, { maxDomains: 1 });
    w.add(Buffer.from('b.example'), 1n << 32n, [{ datasetId: 1, file: 0, first: 0, rows: 1 }]);
    expect(() => w.add(Buffer.from('a.example'), 2n << 32n, [{ datasetId: 1, file: 0, first: 0, rows: 1 }])).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    expect(() => w.add(Buffer.from('b.example'), 2n << 32n, [{ datasetId: 1, file: 0, first: 0, rows: 1 }])).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
  });
});

describe('OnDemandDomainIndex', () => {
  /** A source over built shards that records which shard each read was of. */
  const sourceOf = (files: IndexShardFiles[], sizes = files.map((f) => new DomainDictionary(f.domains).size)) => {
    const log: number[] = [];
    return { log, source: { sizes, read: (k: number) => (log.push(k), files[k]!) } };
  };

  it('answers like the resident index; a walk in order reads each shard once and keeps only the last one read', () => {
    const list = entries(2500, true);
    const files = shardsOf(list, { maxDomains: 700 });
    const whole = new DomainIndex(files);
    const { log, source } = sourceOf(files);
    const lazy = new OnDemandDomainIndex(source);
    expect([lazy.size, log]).toEqual([2500, []]); // entry numbers come from the sizes: nothing read yet
    list.forEach((e, i) => {
      expect([lazy.name(i), lazy.nameBytes(i).toString('utf8'), lazy.d64(i), lazy.postings(i)]).toEqual([e.domain, e.domain, e.d64, e.postings]);
      expect(lazy.bitmap(i).equals(whole.bitmap(i))).toBe(true);
    });
    expect(log).toEqual([0, 1, 2, 3]);
    // a second walk reads them again (one resident shard), a lookup reads only what its search passes
    expect(lazy.name(0)).toBe(list[0]!.domain);
    expect(log).toEqual([0, 1, 2, 3, 0]);
    // a lookup reads at most the shards of its binary search (2 of the 4 here) and the one it lands in
    for (const [i, e] of list.entries()) {
      if (i % 97 !== 0) continue;
      const before = log.length;
      expect(lazy.indexOf(e.domain)).toBe(i);
      expect(log.length - before).toBeLessThanOrEqual(3);
    }
    for (const absent of ['a.example', `${list[699]!.domain}0`, '😀😀.io']) expect(lazy.indexOf(absent)).toBe(-1);
    expect([lazy.postings(2500), lazy.postings(-1)]).toEqual([[], []]);
  });

  it('checks each shard as it is read: its size against shards.json, its names against the neighbours read before', () => {
    const files = shardsOf(entries(15, true), { maxDomains: 5 });
    const swapped = new OnDemandDomainIndex(sourceOf([files[0]!, files[2]!, files[1]!]).source);
    // shards 0 and 1 (the third) are in order; the third read (the second) is not
    expect([swapped.name(4), swapped.name(5)]).toEqual([new DomainDictionary(files[0]!.domains).name(4), new DomainDictionary(files[2]!.domains).name(0)]);
    expect(() => swapped.name(10)).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT', message: 'index shards out of order' }));
    // read backwards, the shard after is the one checked against
    const back = new OnDemandDomainIndex(sourceOf([files[0]!, files[2]!, files[1]!]).source);
    expect(back.name(14)).toBeTruthy();
    expect(() => back.name(7)).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT', message: 'index shards out of order' }));
    const wrongSize = new OnDemandDomainIndex(sourceOf(files, [5, 4, 6]).source);
    expect(() => wrongSize.name(6)).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    const mixed = sourceOf([{ ...files[0]!, postings: shardsOf(entries(4, true))[0]!.postings }, files[1]!, files[2]!]);
    const mixedIndex = new OnDemandDomainIndex(mixed.source);
    expect(() => mixedIndex.d64(0)).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    // a failed read leaves no shard resident: asking again reads again and fails again
    expect(() => mixedIndex.d64(0)).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    expect(mixed.log).toEqual([0, 0]);
    // verifyAll reads every shard in order and stops at the first bad one
    const bad = sourceOf([files[0]!, files[2]!, files[1]!]);
    expect(() => new OnDemandDomainIndex(bad.source).verifyAll()).toThrow(expect.objectContaining({ message: 'index shards out of order' }));
    expect(bad.log).toEqual([0, 1, 2]);
    const good = sourceOf(files);
    new OnDemandDomainIndex(good.source).verifyAll();
    expect(good.log).toEqual([0, 1, 2]);
    expect(() => new OnDemandDomainIndex({ sizes: [], read: () => files[0]! })).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
  });
});

describe('facts files (IndexWriter with facts)', () => {
  /** Entry i's records: one per dataset of its postings, an entry in three without any (a dataset with no facts). */
  const recordsOf = (e: ReturnType<typeof entries>[number], i: number): Buffer =>
    i % 3 === 2
      ? Buffer.alloc(0)
      : Buffer.concat([...new Set(e.postings.map((p) => p.datasetId))].map((datasetId) =>
        encodeFactsRecord({ datasetId, hosts: i + 1, status: [i, 1, 0, 2], firstTs: 1_900_000_000 + i, lastTs: 1_900_000_100 + i, median: i % 2 ? null : i, p90: i % 2 ? null : 2 * i, languages: i % 4 ? [] : [['eng', 3], ['deu', 1]] })));

  function build(list: ReturnType<typeof entries>, limits?: ShardLimits): (IndexShardFiles & { facts: Buffer })[] {
    const w = new IndexWriter(serialize, limits, { facts: true });
    list.forEach((e, i) => w.add(Buffer.from(e.domain), e.d64, e.postings, recordsOf(e, i)));
    return w.finishWithFacts();
  }

  it('one facts file per shard, entry for entry: resident, on demand and in place give each entry its records back', async () => {
    const list = entries(3000, true);
    const shards = build(list, { maxDomains: 1200 });
    expect(shards.map((s) => new DomainDictionary(s.domains).size)).toEqual([1200, 1200, 600]);
    const resident = new DomainIndex(shards, null, shards.map((s) => s.facts));
    const onDemand = new OnDemandDomainIndex({ sizes: shards.map((s) => new DomainDictionary(s.domains).size), read: (k) => shards[k]! });
    const dir = await mkdtemp(join(tmpdir(), 'ccpipe-facts-files-'));
    try {
      const refs = await Promise.all(shards.map(async (s, k) => {
        const ref = async (name: string, b: Buffer): Promise<ShardFileRef> => {
          await writeFile(join(dir, name), b);
          return { path: join(dir, name), size: b.length, crc32: crcOf(b), name };
        };
        return { shard: { domains: await ref(`d${k}`, s.domains), bitmaps: await ref(`b${k}`, s.bitmaps), postings: await ref(`p${k}`, s.postings) }, facts: await ref(`f${k}`, s.facts) };
      }));
      const inPlace = await FileDomainIndex.open(refs.map((r) => r.shard), null, { facts: refs.map((r) => r.facts) });
      try {
        const want = list.map((e, i) => recordsOf(e, i).toString('hex'));
        for (const index of [resident, onDemand, inPlace]) expect(list.map((_, i) => index.facts(i)!.toString('hex'))).toEqual(want);
        expect(decodeFactsRecords(resident.facts(3)!).map((x) => x.record.datasetId)).toEqual([1, 3, 5].slice(0, 1 + (3 % 3)));
      } finally {
        await inPlace.close();
      }
      // a facts file of another shard (another number of entries) is refused, resident and in place
      await expect(FileDomainIndex.open(refs.map((r) => r.shard), null, { facts: [refs[2]!.facts, refs[1]!.facts, refs[0]!.facts] })).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_FORMAT' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(() => new DomainIndex(shards, null, [shards[0]!.facts, shards[0]!.facts.subarray(0, 20), shards[2]!.facts])).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    // a version without facts: null for every entry
    expect(new DomainIndex(shards).facts(0)).toBeNull();
  });

  it('the byte limit counts the facts file: a shard starts earlier when its facts would pass maxBytes', () => {
    const list = entries(2000, true);
    const without = shardsOf(list, { maxBytes: 40_000 });
    // records the writer takes as they are: 200 bytes an entry make the facts file each shard's biggest
    const w = new IndexWriter(serialize, { maxBytes: 40_000 }, { facts: true });
    for (const e of list) w.add(Buffer.from(e.domain), e.d64, e.postings, Buffer.alloc(200, 7));
    const withFacts = w.finishWithFacts();
    expect(withFacts.length).toBeGreaterThan(without.length);
    for (const s of withFacts) for (const b of [s.domains, s.bitmaps, s.postings, s.facts]) expect(b.length).toBeLessThanOrEqual(40_000);
  });
});
