import { batchId, layout } from '@ccpipe/core';
import { BatchSet } from './batch-set';

const marker = (datasetId: number, crawl: string, block: number, seq: number): string => layout.batchMarker(datasetId, batchId(crawl, block, seq));

/** Markers as a crawl's batcher makes them: blocks in order, each with a few batches, some not done yet. */
function crawlMarkers(datasetId: number, crawl: string, blocks: number, seed: number): string[] {
  const out: string[] = [];
  let x = seed;
  const rnd = (): number => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let b = 0; b < blocks; b++) {
    const n = 1 + Math.floor(rnd() * 4);
    for (let s = 0; s < n; s++) if (rnd() > 0.05) out.push(marker(datasetId, crawl, b * 3 + Math.floor(rnd() * 2), s));
  }
  return out;
}

describe('BatchSet (batches.json)', () => {
  const irregular = ['batches/dataset_id=7/urls-list-0001/_SUCCESS.json', 'batches/dataset_id=01/CC-MAIN-2030-40__00000001__0000/_SUCCESS.json'];
  const keys = [
    ...crawlMarkers(1, 'CC-MAIN-2030-40', 2000, 1),
    ...crawlMarkers(2, 'CC-MAIN-2030-44', 500, 2),
    ...crawlMarkers(2, 'my__crawl', 300, 3), // a crawl name holding the separator itself
    marker(3, 'edge', 99_999_999, 9_999), marker(3, 'edge', 0, 0),
    ...irregular,
  ];
  const unique = [...new Set(keys)];

  it('holds exactly the markers it was given, through its file and back, and says so for each key', () => {
    const set = BatchSet.empty().with([...keys].reverse());
    const back = BatchSet.parse(set.toBytes());
    for (const s of [set, back]) {
      expect(s.size).toBe(unique.length);
      expect([...s.keys()].sort()).toEqual([...unique].sort());
      for (const k of unique) expect(s.has(k)).toBe(true);
      // near misses: the next seq, another block, crawl or dataset, the irregular key's neighbour
      const absent = [marker(1, 'CC-MAIN-2030-40', 7000, 0), marker(9, 'CC-MAIN-2030-40', 0, 0), marker(1, 'CC-MAIN-2030-41', 0, 0), marker(3, 'edge', 99_999_999, 9_998), 'batches/dataset_id=7/urls-list-0002/_SUCCESS.json'];
      for (const k of absent) expect([k, s.has(k)]).toEqual([k, unique.includes(k)]);
      let missing = 0;
      for (let b = 0; b < 6000 && missing < 50; b++) {
        const k = marker(1, 'CC-MAIN-2030-40', b, 0);
        if (!unique.includes(k)) {
          missing++;
          expect(s.has(k)).toBe(false);
        }
      }
      expect(missing).toBeGreaterThan(0);
    }
    expect(Object.fromEntries(back.countByDataset())).toEqual(
      Object.fromEntries([1, 2, 3, 7].map((d) => [d, unique.filter((k) => layout.batchDatasetOf(k) === d).length])),
    );
  });

  it('adds to a set read from a file without losing or repeating a marker (also markers it already holds)', () => {
    const first = BatchSet.parse(BatchSet.empty().with(keys.slice(0, 3000)).toBytes());
    const both = BatchSet.parse(first.with(keys.slice(2500)).toBytes());
    expect(both.size).toBe(unique.length);
    expect([...both.keys()].sort()).toEqual([...unique].sort());
    expect(first.size).toBe(new Set(keys.slice(0, 3000)).size); // unchanged
  });

  it('reads version 1, a JSON array of keys, as the same set', () => {
    const v1 = BatchSet.parse(Buffer.from(JSON.stringify([...unique].sort())));
    expect(v1.size).toBe(unique.length);
    expect(v1.toBytes()).toEqual(BatchSet.empty().with(unique).toBytes());
  });

  it('is a few bytes per marker for a crawl numbered densely, against ≈ 70 for the list of keys', () => {
    const dense: string[] = [];
    for (let b = 0; b < 20_000; b++) for (let s = 0; s < 1 + (b % 4); s++) dense.push(marker(1, 'CC-MAIN-2030-40', b, s));
    const bytes = BatchSet.empty().with(dense).toBytes().length;
    const v1 = Buffer.from(JSON.stringify(dense)).length;
    expect(bytes / dense.length).toBeLessThan(2);
    expect(v1 / dense.length).toBeGreaterThan(60);
  });

  it('refuses a file whose counts or runs do not add up', () => {
    const good = JSON.parse(BatchSet.empty().with(unique).toBytes().toString()) as { count: number; sets: { count: number; runs: string }[] };
    const bad = (f: unknown): (() => unknown) => () => {
      const s = BatchSet.parse(Buffer.from(JSON.stringify(f)));
      return [...s.keys()]; // runs are decoded when first used
    };
    expect(bad({ ...good, count: good.count + 1 })).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    const sets = good.sets.map((s, i) => (i === 0 ? { ...s, count: s.count + 1 } : s));
    expect(bad({ ...good, count: good.count + 1, sets })).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    expect(bad({ ...good, sets: good.sets.map((s, i) => (i === 0 ? { ...s, runs: s.runs.replace(',', ',!') } : s)) })).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    expect(bad({ v: 3, sets: [], other: [], count: 0 })).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
  });
});
