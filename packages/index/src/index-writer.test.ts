import { RoaringBitmap32 } from 'roaring';
import { DomainDictionary, IndexWriter, bitmapBytes, postingsOf, type Posting } from './format';

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

describe('IndexWriter', () => {
  it.each([true, false])('writes files the readers take back whole: names, keys both ways, postings, bitmaps (domain block keys: %s)', (blockKeys) => {
    const list = entries(5000, blockKeys);
    const w = new IndexWriter(serialize);
    for (const e of list) w.add(Buffer.from(e.domain), e.d64, e.postings);
    expect(w.size).toBe(5000);
    const got = w.finish();
    const dict = new DomainDictionary(got.domains);
    expect(dict.size).toBe(5000);
    list.forEach((e, i) => {
      // indexOfD64 binary-searches byId: it finds every key only if byId is in domain64 order
      expect([dict.name(i), dict.d64(i), dict.indexOf(e.domain), dict.indexOfD64(e.d64)]).toEqual([e.domain, e.d64, i, i]);
      expect(postingsOf(got.postings, i)).toEqual(e.postings);
      expect([...RoaringBitmap32.deserialize(bitmapBytes(got.bitmaps, i), 'portable')]).toEqual(e.postings.map((p) => p.datasetId));
    });
  });

  it('builds each file once: a second call throws instead of returning a file whose parts were let go of', () => {
    const w = new IndexWriter(serialize);
    w.add(Buffer.from('a.example'), 1n << 32n, [{ datasetId: 1, file: 0, first: 0, rows: 3 }]);
    const f = w.files();
    expect(postingsOf(f.postings(), 0)).toEqual([{ datasetId: 1, file: 0, first: 0, rows: 3 }]);
    expect(() => f.postings()).toThrow(/already built/);
    expect(() => w.files()).toThrow(/spent/);
    expect(new DomainDictionary(f.domains()).name(0)).toBe('a.example');
  });

  it('refuses names out of dictionary order', () => {
    const w = new IndexWriter(serialize);
    w.add(Buffer.from('b.example'), 1n << 32n, [{ datasetId: 1, file: 0, first: 0, rows: 1 }]);
    expect(() => w.add(Buffer.from('a.example'), 2n << 32n, [{ datasetId: 1, file: 0, first: 0, rows: 1 }])).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    expect(() => w.add(Buffer.from('b.example'), 2n << 32n, [{ datasetId: 1, file: 0, first: 0, rows: 1 }])).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
  });
});
