import { textKept } from './text-versions';

describe('textKept', () => {
  it('keeps the text of the newest N captures, in the input order', () => {
    const caps = [
      { datasetId: 1, ts: 100 },
      { datasetId: 2, ts: 300 },
      { datasetId: 3, ts: 200 },
      { datasetId: 4, ts: 400 },
    ];
    expect(textKept(caps, 2)).toEqual([false, true, false, true]);
    expect(textKept(caps, 3)).toEqual([false, true, true, true]);
    expect(textKept(caps, 10)).toEqual([true, true, true, true]);
    expect(textKept(caps, null)).toEqual([true, true, true, true]);
  });

  it('breaks a tie in time by the higher dataset id', () => {
    expect(textKept([{ datasetId: 7, ts: 5 }, { datasetId: 9, ts: 5 }, { datasetId: 8, ts: 5 }], 1)).toEqual([false, true, false]);
  });

  it('refuses a policy that is not a whole number ≥ 1', () => {
    expect(() => textKept([], 0)).toThrow(RangeError);
    expect(() => textKept([], 1.5)).toThrow(/whole number/);
  });
});
