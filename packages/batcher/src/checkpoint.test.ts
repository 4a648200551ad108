import { layout } from '@ccpipe/core';
import { MemoryObjectStore } from '@ccpipe/adapters';
import { completeCheckpoint, saveCheckpoint, type Checkpoint } from './checkpoint';

const at = new Date('2030-01-02T03:04:05Z');
const cp = (over: Partial<Checkpoint>): Checkpoint => ({
  v: 1, crawl: 'CC-MAIN-2030-44', dataset: 'CC-MAIN-2030-44', fingerprint: 'f', nextPlanIndex: 20, planLength: 20,
  batchesPublished: 34, recordsPublished: 653, done: false, updatedAt: '2030-01-01T00:00:00.000Z', ...over,
});
const stored = async (store: MemoryObjectStore): Promise<unknown> => JSON.parse(Buffer.from((await store.get(layout.batcherCheckpoint('CC-MAIN-2030-44')))!).toString('utf8'));

describe('completeCheckpoint', () => {
  it('marks done, and saves, a checkpoint past every planned block that a stopped run left not done', async () => {
    const store = new MemoryObjectStore();
    await saveCheckpoint(store, cp({}));
    const want = cp({ done: true, updatedAt: at.toISOString() });
    expect(await completeCheckpoint(store, cp({}), 20, at)).toEqual(want);
    expect(await stored(store)).toEqual(want);
  });

  it('leaves a checkpoint short of the plan, or done already, as it is and writes nothing', async () => {
    const store = new MemoryObjectStore();
    const short = cp({ nextPlanIndex: 19 });
    const done = cp({ done: true });
    expect(await completeCheckpoint(store, short, 20, at)).toBe(short);
    expect(await completeCheckpoint(store, done, 20, at)).toBe(done);
    expect(await store.get(layout.batcherCheckpoint('CC-MAIN-2030-44'))).toBeNull();
  });
});
