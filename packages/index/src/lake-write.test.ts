import { runsToFold } from './lake-write';

const fold = (runs: number[], newRows: number, losing: number[] = [], maxRuns = 4): number[] => [...runsToFold(runs, newRows, losing, maxRuns)].sort((a, b) => a - b);

describe('runsToFold (which runs of a partition its next file folds in)', () => {
  it('a first file folds nothing; small new rows beside a big run make a run of their own', () => {
    expect(fold([], 1000)).toEqual([]);
    expect(fold([5000], 1500)).toEqual([]);
    expect(fold([5000, 1500], 700)).toEqual([]);
  });

  it('folds the newest runs no bigger than what the new file holds so far, and stops at the first bigger one', () => {
    expect(fold([5000, 1500], 1500)).toEqual([1]);
    expect(fold([5000, 1500, 700], 800)).toEqual([1, 2]); // 800 takes 700 (1,500 held), then 1,500
    expect(fold([100, 5000, 50], 60)).toEqual([2]); // 5,000 stops it: the older 100 stays too
  });

  it('always folds runs holding superseded rows, and what they bring counts toward the size rule', () => {
    expect(fold([5000, 1500], 10, [0])).toEqual([0, 1]);
    expect(fold([5000, 9000], 10, [0])).toEqual([0]); // 9,000 > 5,010
  });

  it('keeps a partition at maxRuns files by folding the newest others; maxRuns 1 rewrites the partition whole', () => {
    expect(fold([8000, 4000, 2000], 1, [], 3)).toEqual([2]);
    expect(fold([8000, 4000, 2000], 1, [], 2)).toEqual([1, 2]);
    expect(fold([8000, 4000, 2000], 1, [], 1)).toEqual([0, 1, 2]);
  });

  it('no new rows and nothing superseded: no file, so nothing folded even at the cap', () => {
    expect(fold([8, 4, 2, 1], 0, [], 4)).toEqual([]);
    expect(fold([8, 4, 2], 0, [], 1)).toEqual([]);
    expect(fold([8, 4, 2, 1], 0, [1], 4)).toEqual([1, 2, 3]); // a superseded run is rewritten, and the size rule goes on
  });

  /** `merges` merges of one row each into one partition: the runs after each merge and the rows written in all. */
  const equalMerges = (merges: number, maxRuns: number): { after: number[][]; written: number } => {
    let runs: number[] = [];
    let written = 0;
    const after: number[][] = [];
    for (let m = 1; m <= merges; m++) {
      const f = runsToFold(runs, 1, [], maxRuns);
      const held = 1 + [...f].reduce((s, k) => s + runs[k]!, 0);
      written += held;
      runs = [...runs.filter((_, k) => !f.has(k)), held];
      after.push(runs);
    }
    return { after, written };
  };

  it('over many equal merges acts as a binary counter: few runs, each row rewritten about log2(merges) times', () => {
    const { after, written } = equalMerges(64, 64);
    // after merge m the run sizes are the binary digits of m
    after.forEach((runs, k) => expect(runs).toEqual((k + 1).toString(2).split('').flatMap((b, i, a) => (b === '1' ? [2 ** (a.length - 1 - i)] : []))));
    // merge m writes lowbit(m) rows: 256 in all (each row ≈ 1 + log2(64)/2 times), against 64·65/2 = 2,080 when
    // every merge rewrites the partition whole
    expect(written).toBe(256);
  });

  it('under a cap the counter keeps carrying: equal merges never rewrite the partition whole', () => {
    const { after, written } = equalMerges(1024, 4);
    for (const runs of after) expect(runs.length).toBeLessThanOrEqual(4);
    expect(after[1023]).toEqual([1024]); // 1024 = one carry all the way back
    // 22,954 rows written; the whole-partition rewrite writes 1024·1025/2 = 524,800. A cap applied after the size
    // rule kept folding one ever-growing newest run ([16, 8, 4, 996] at merge 1024) and wrote 496,582.
    expect(written).toBeLessThan(524_800 / 20);
  });
});
