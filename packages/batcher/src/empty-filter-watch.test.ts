import { emptyFilterWatch, type EmptySample } from './empty-filter-watch';

const block = (records: number, kept: number, dropped: Record<string, number>) => ({ records, kept, dropped, lineErrors: 0, bytes: 1 });

describe('emptyFilterWatch', () => {
  it('reports once when a block-sized sample kept nothing, with the drops by reason', () => {
    const seen: EmptySample[] = [];
    const w = emptyFilterWatch((e) => seen.push(e), 3000);
    w.onBlock!(block(2000, 0, { language: 1500, status: 500 }));
    expect(seen).toEqual([]);
    w.onBlock!(block(2000, 0, { language: 2000 }));
    w.onBlock!(block(2000, 0, { language: 2000 }));
    expect(seen).toEqual([{ records: 4000, dropped: { language: 3500, status: 500 } }]);
  });

  it('says nothing once a record was kept, or when records were dropped only as outside the targets', () => {
    const seen: EmptySample[] = [];
    const kept = emptyFilterWatch((e) => seen.push(e), 3000);
    kept.onBlock!(block(10, 1, { language: 9 }));
    kept.onBlock!(block(5000, 0, { language: 5000 }));
    const targeted = emptyFilterWatch((e) => seen.push(e), 3000);
    targeted.onBlock!(block(3000, 0, { not_targeted: 3000 }));
    expect(seen).toEqual([]);
  });
});
