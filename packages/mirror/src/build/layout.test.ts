import { fixedShardRanges, mergeCollInfo, segmentFromDate, segmentFromPath, shardRanges } from './layout';

describe('layout helpers', () => {
  it('spreads blocks evenly over shards, first shards one longer, never an empty shard', () => {
    expect(shardRanges(20, 3)).toEqual([[0, 7], [7, 14], [14, 20]]);
    expect(shardRanges(24, 3)).toEqual([[0, 8], [8, 16], [16, 24]]);
    expect(shardRanges(2, 5)).toEqual([[0, 1], [1, 2]]);
    expect(shardRanges(0, 3)).toEqual([[0, 0]]);
    expect(fixedShardRanges(20, 8)).toEqual([[0, 8], [8, 16], [16, 20]]);
    expect(fixedShardRanges(0, 8)).toEqual([[0, 0]]);
  });

  it('takes the segment from a CC-style path, else from the first WARC-Date', () => {
    expect(segmentFromPath('/x/crawl-data/C/segments/1700003000.00/warc/a.warc.gz')).toBe('1700003000.00');
    expect(segmentFromPath('/tmp/a.warc.gz')).toBeUndefined();
    expect(segmentFromDate('2030-11-10T21:16:51Z')).toBe(`${Date.UTC(2030, 10, 10, 21, 16, 51) / 1000}.00`);
    expect(segmentFromDate('not a date')).toBe('0000000000.00');
  });

  it('merges collinfo entries by id, newest id first, replacing a rebuilt crawl', () => {
    const a = { id: 'CC-MAIN-2030-40', name: 'a', 'cdx-api': 'x' };
    const b = { id: 'CC-MAIN-2030-44', name: 'b', 'cdx-api': 'y' };
    const merged = mergeCollInfo([a, b], { ...a, name: 'a2' });
    expect(merged.map((e) => [e.id, e.name])).toEqual([['CC-MAIN-2030-44', 'b'], ['CC-MAIN-2030-40', 'a2']]);
  });
});
