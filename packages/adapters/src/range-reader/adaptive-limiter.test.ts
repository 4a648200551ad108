import { CcpError } from '@ccpipe/core';
import { AdaptiveLimiter, type Permit } from './adaptive-limiter';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('AdaptiveLimiter', () => {
  it('grants up to the ceiling at once, then first-in first-out as permits return', async () => {
    const l = new AdaptiveLimiter({ ceiling: 2 });
    const a = await l.acquire();
    const b = await l.acquire();
    const order: string[] = [];
    const c = l.acquire().then((p) => (order.push('c'), p));
    const d = l.acquire().then((p) => (order.push('d'), p));
    await tick();
    expect(order).toEqual([]);
    l.release(a, 'success');
    await tick();
    expect(order).toEqual(['c']);
    l.release(b, 'other');
    await tick();
    expect(order).toEqual(['c', 'd']);
    l.release(await c, 'success');
    l.release(await d, 'success');
    expect(l.inFlight).toBe(0);
  });

  it('halves once per epoch, never below the floor, and grows by one per increaseAfter successes up to the ceiling', async () => {
    const changes: number[] = [];
    const l = new AdaptiveLimiter({ ceiling: 8, increaseAfter: 2, onChange: (n) => changes.push(n) });
    const burst: Permit[] = await Promise.all(Array.from({ length: 8 }, () => l.acquire()));
    for (const p of burst) l.release(p, 'overload');
    expect(changes).toEqual([4]);
    for (const expected of [2, 1, 1]) {
      l.release(await l.acquire(), 'overload');
      expect(l.limit).toBe(expected);
    }
    expect(changes).toEqual([4, 2, 1]);
    for (let i = 0; i < 20; i++) l.release(await l.acquire(), 'success');
    expect(changes).toEqual([4, 2, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(l.limit).toBe(8);
  });

  it('gives up a place in line when the signal aborts, with CCP_ERR_ABORTED', async () => {
    const l = new AdaptiveLimiter({ ceiling: 1 });
    const held = await l.acquire();
    const ac = new AbortController();
    const waiting = l.acquire(ac.signal).catch((e: unknown) => e);
    const next = l.acquire();
    ac.abort();
    expect(((await waiting) as CcpError).code).toBe('CCP_ERR_ABORTED');
    l.release(held, 'success');
    await expect(next).resolves.toEqual(expect.objectContaining({ epoch: 0 }));
  });

  it('rejectAll fails every waiter', async () => {
    const l = new AdaptiveLimiter({ ceiling: 1 });
    await l.acquire();
    const w = l.acquire().catch((e: unknown) => e);
    l.rejectAll(new Error('closed'));
    expect(((await w) as Error).message).toBe('closed');
  });
});
