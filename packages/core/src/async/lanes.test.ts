import { runLanes } from './lanes';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('runLanes', () => {
  it('runs every item with at most `concurrency` in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const done: number[] = [];
    await runLanes(10, 3, async (i) => {
      peak = Math.max(peak, ++inFlight);
      await tick(5);
      inFlight--;
      done.push(i);
    });
    expect(done.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(3);
  });

  it('after a failure starts nothing new and settles only when the items in flight have finished', async () => {
    const events: string[] = [];
    const p = runLanes(20, 4, async (i) => {
      events.push(`start ${i}`);
      if (i === 1) throw new Error('boom');
      await tick(20);
      events.push(`end ${i}`);
    });
    await expect(p).rejects.toThrow('boom');
    events.push('settled');
    expect(events.filter((e) => e.startsWith('start')).sort()).toEqual(['start 0', 'start 1', 'start 2', 'start 3']);
    expect(events.slice(-1)).toEqual(['settled']);
    expect(events.filter((e) => e.startsWith('end'))).toHaveLength(3); // 0, 2, 3 finished before the call settled
  });

  it('does nothing for no items', async () => {
    await runLanes(0, 4, async () => {
      throw new Error('never called');
    });
  });
});
