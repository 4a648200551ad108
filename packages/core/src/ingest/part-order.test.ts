import { sortPartRows } from './part-order';

describe('sortPartRows', () => {
  it('puts each domain in one contiguous run, sorted by url then time', () => {
    const rows = [
      { domain: 'b.com', url: 'https://b.com/2', timestamp: '20300000000002' },
      { domain: 'a.org', url: 'https://x.a.org/', timestamp: '20300000000001' },
      { domain: 'b.com', url: 'https://b.com/1', timestamp: '20300000000009' },
      { domain: null, url: 'http://10.0.0.1/', timestamp: '20300000000001' },
      { domain: 'b.com', url: 'https://b.com/1', timestamp: '20300000000003' },
    ];
    sortPartRows(rows);
    expect(rows.map((r) => [r.domain, r.url, r.timestamp.slice(-1)])).toEqual([
      [null, 'http://10.0.0.1/', '1'],
      ['a.org', 'https://x.a.org/', '1'],
      ['b.com', 'https://b.com/1', '3'],
      ['b.com', 'https://b.com/1', '9'],
      ['b.com', 'https://b.com/2', '2'],
    ]);
  });

  it('handles an empty batch', () => {
    const rows: { domain: string | null; url: string; timestamp: string }[] = [];
    sortPartRows(rows);
    expect(rows).toEqual([]);
  });
});
