import { RowGroupCache } from './row-group-cache';

describe('RowGroupCache', () => {
  it('evicts the least recently used entries to stay within its byte bound', () => {
    const c = new RowGroupCache<string>(100);
    c.set('a', 'A', 40);
    c.set('b', 'B', 40);
    expect(c.get('a')).toBe('A'); // a is now the most recent
    c.set('c', 'C', 40); // over 100: b goes, not a
    expect([c.get('a'), c.get('b'), c.get('c')]).toEqual(['A', undefined, 'C']);
    expect(c.stats()).toMatchObject({ bytes: 80, entries: 2, evictions: 1 });
    c.set('big', 'X', 101); // larger than the bound: not kept, nothing evicted for it
    expect([c.get('big'), c.stats().bytes]).toEqual([undefined, 80]);
    c.set('a', 'A2', 10); // replacing an entry re-counts its size
    expect(c.stats()).toMatchObject({ bytes: 50, entries: 2 });
  });

  it('shares one load between concurrent callers and does not cache a failure', async () => {
    const c = new RowGroupCache<number>(1000);
    let loads = 0;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const load = async () => {
      loads++;
      await gate;
      return { value: 7, bytes: 10 };
    };
    const all = Promise.all([c.getOrLoad('k', load), c.getOrLoad('k', load), c.getOrLoad('k', load)]);
    release();
    expect(await all).toEqual([7, 7, 7]);
    expect(loads).toBe(1);
    expect(await c.getOrLoad('k', load)).toBe(7);
    expect(loads).toBe(1);
    expect(c.stats()).toMatchObject({ misses: 1, hits: 3 });

    await expect(c.getOrLoad('bad', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await c.getOrLoad('bad', async () => ({ value: 1, bytes: 1 }))).toBe(1);
  });
});
