import { CcpError, Channel } from '@ccpipe/core';
import { MemoryObjectStore } from '@ccpipe/adapters';
import { mergeTaskLayout, type MergeTask, type MergeTaskResult } from './merge-task';
import { queueTaskRunner, type MergeTaskPublisher } from './merge-task-queue';

const RUN = 'v000003.0a1b2c3d';
const task = (n: number): MergeTask => ({
  v: 1, kind: 'merge-lake', id: `${RUN}/${n}`, run: RUN, n, targets: [], staged: null, rowLists: null, columns: [], rowGroupSize: 1024,
  compressionLevel: 1, parquetVersion: 'V2', dropText: false, facts: null,
});
const result = (n: number): MergeTaskResult => ({ v: 1, id: `${RUN}/${n}`, entries: [], postings: `p${n}`, facts: null });
const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A publisher that records what it was given and answers each task with a result in the store (a merge-worker). */
function working(store: MemoryObjectStore, published: number[]): () => MergeTaskPublisher {
  return () => ({
    publish: async (t) => {
      if (t.kind !== 'merge-lake') throw new Error('only lake tasks are published here');
      published.push(t.n);
      await store.put(mergeTaskLayout.result(t.run, t.n), Buffer.from(JSON.stringify(result(t.n))));
    },
    close: async () => undefined,
  });
}

describe('queueTaskRunner (the coordinator of merge --distribute)', () => {
  it('publishes each task of the feed as it comes, before the feed ends, and resolves with every result once it has', async () => {
    const store = new MemoryObjectStore();
    const published: number[] = [];
    const feed = new Channel<MergeTask>();
    const running = queueTaskRunner({ store, publisher: working(store, published), pollMs: 5 }).run(feed);
    feed.push(task(0));
    await tick(30);
    // task 0 went out while the coordinator had not made task 1 yet
    expect(published).toEqual([0]);
    feed.push(task(1));
    feed.push(task(2));
    await tick(30);
    let done = false;
    void running.then(() => (done = true));
    await tick(30);
    // every result is in, but the feed has not ended: more tasks may come
    expect(done).toBe(false);
    feed.close();
    const got = await running;
    expect(published).toEqual([0, 1, 2]);
    expect(got.map((r) => r.id).sort()).toEqual([0, 1, 2].map((n) => `${RUN}/${n}`));
  });

  it('fails with the feed\'s error when the coordinator cannot export a task, and with a merge-worker\'s error.json', async () => {
    const store = new MemoryObjectStore();
    const feed = new Channel<MergeTask>();
    const running = queueTaskRunner({ store, publisher: working(store, []), pollMs: 5 }).run(feed);
    feed.push(task(0));
    feed.fail(new Error('the store refused the staged rows'));
    await expect(running).rejects.toThrow('the store refused the staged rows');

    const failing = new MemoryObjectStore();
    const feed2 = new Channel<MergeTask>();
    const running2 = queueTaskRunner({
      store: failing, pollMs: 5,
      publisher: () => ({
        publish: async (t) => {
          await failing.put(mergeTaskLayout.error(t.run, t.n), Buffer.from(JSON.stringify({ code: 'CCP_ERR_MERGE_TASK_INPUT', message: 'gone' })));
        },
        close: async () => undefined,
      }),
    }).run(feed2);
    feed2.push(task(0));
    const err = await running2.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CcpError);
    expect(err).toMatchObject({ code: 'CCP_ERR_MERGE_TASK', detail: { task: `${RUN}/0`, code: 'CCP_ERR_MERGE_TASK_INPUT' } });
    feed2.close();
  });

  it('lists the results folder while it waits, the whole run only now and then, and still finds a result where older merge-workers wrote it', async () => {
    const store = new MemoryObjectStore();
    // a run's inputs: what a listing of the whole run would walk at every round
    for (let n = 0; n < 20; n++) await store.put(`merge-tasks/${RUN}/${n}/staged-0-0.parquet`, Buffer.from('x'));
    const listed: string[] = [];
    const list = store.list.bind(store);
    store.list = (prefix: string) => {
      listed.push(prefix);
      return list(prefix);
    };
    const feed = new Channel<MergeTask>();
    const running = queueTaskRunner({
      store, pollMs: 1,
      // a merge-worker from before the results folder answers beside the task
      publisher: () => ({
        publish: async (t) => {
          setTimeout(() => void store.put(mergeTaskLayout.resultBefore34(t.run, t.n), Buffer.from(JSON.stringify(result(t.n as number)))), 60);
        },
        close: async () => undefined,
      }),
    }).run(feed);
    feed.push(task(0));
    feed.close();
    const got = await running;
    expect(got.map((r) => r.id)).toEqual([`${RUN}/0`]);
    const whole = listed.filter((p) => p === mergeTaskLayout.prefix(RUN)).length;
    expect(listed.filter((p) => p === mergeTaskLayout.results(RUN)).length).toBeGreaterThan(10);
    expect(whole).toBeGreaterThanOrEqual(1);
    expect(whole).toBeLessThanOrEqual(listed.length / 10);
  });
});
