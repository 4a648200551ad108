import { sortAndPost } from './postings';

describe('sortAndPost', () => {
  it('groups each domain into one contiguous run, sorted by url then time', () => {
    const rows = [
      { domain: 'b.com', url: 'https://b.com/2', timestamp: '20300000000002' },
      { domain: 'a.org', url: 'https://x.a.org/', timestamp: '20300000000001' },
      { domain: 'b.com', url: 'https://b.com/1', timestamp: '20300000000009' },
      { domain: null, url: 'http://10.0.0.1/', timestamp: '20300000000001' },
      { domain: 'b.com', url: 'https://b.com/1', timestamp: '20300000000003' },
    ];
    const postings = sortAndPost(rows);
    expect(postings).toEqual([
      { domain: '', first: 0, rows: 1 },
      { domain: 'a.org', first: 1, rows: 1 },
      { domain: 'b.com', first: 2, rows: 3 },
    ]);
    expect(rows.slice(2).map((r) => [r.url, r.timestamp.slice(-1)])).toEqual([
      ['https://b.com/1', '3'],
      ['https://b.com/1', '9'],
      ['https://b.com/2', '2'],
    ]);
    const covered = postings.reduce((n, p) => n + p.rows, 0);
    expect(covered).toBe(rows.length);
  });

  it('handles an empty batch', () => expect(sortAndPost([])).toEqual([]));
});
