import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Batch } from '@ccpipe/core';
import { FsObjectStore, FsRangeReader, closeDuckDbParquetEngine, writeParquetPart } from '@ccpipe/adapters';
import { processBatch, type BatchDeps } from '@ccpipe/worker';
import { CC_MIRROR_DEV, DEV_CRAWLS } from '../../../tests/support/corpus';
import { devBatches, devStore } from '../../../tests/support/dev-batches';
import { mergeOutputs, outputDifferences } from '../../../tests/support/store-files';
import { runMerge, type MergeOptions } from './run-merge';
import type { AnyMergeTask, AnyMergeTaskResult, MergeTask, MergeTaskRunner } from './merge-task';
import { inProcessTaskRunner, runAnyMergeTask } from './merge-task-queue';

const reader = new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true });
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ccpipe-merge-task-'));
});
afterAll(async () => {
  await closeDuckDbParquetEngine();
  await rm(root, { recursive: true, force: true });
});

/** Batches of both dev crawls written into `dir` (a fresh store with their datasets registered). */
async function writeBatches(dir: string, batches: Batch[]): Promise<void> {
  const store = new FsObjectStore({ root: dir });
  const deps: BatchDeps = {
    reader, store, extract: async (html) => ({ title: null, text: html.slice(0, 200), lang: null, outlinks: [], dom: 'linkedom', article: false, truncated: false, outlinksTruncated: false }),
    writePart: (rows) => writeParquetPart(rows, { engine: 'duckdb' }),
  };
  for (const b of batches) await processBatch(b, deps, { concurrency: 8, includeText: true });
}

describe('merge tasks (merge across machines)', () => {
  it('a merge whose lake groups run as tasks writes the same lake and index files, byte for byte, as one that writes them itself', async () => {
    const plain = join(root, 'plain');
    const tasked = join(root, 'tasked');
    const { ids } = await devStore(plain);
    await devStore(tasked);
    const first = await devBatches(DEV_CRAWLS[0], { datasetId: ids[DEV_CRAWLS[0]]!, batchSize: 40 });
    const half = Math.ceil(first.length / 2);
    const steps = [first.slice(0, half), [...first.slice(half), ...(await devBatches(DEV_CRAWLS[1], { datasetId: ids[DEV_CRAWLS[1]]!, batchSize: 40 }))]];
    const ran: MergeTask[] = [];
    let stageTasks = 0;
    let shardsByTasks = 0;
    const counting = (dir: string): MergeTaskRunner => {
      const inner = inProcessTaskRunner(new FsObjectStore({ root: dir }), { tmpDir: join(root, 'tasks-tmp'), dataDir: dir });
      return { run: async (feed) => {
        const tasks: AnyMergeTask[] = [];
        for await (const t of feed) tasks.push(t);
        for (const t of tasks) {
          if (t.kind === 'merge-lake') ran.push(t);
          else stageTasks++;
        }
        // the results in another order than the tasks': the merge puts them back in group order
        const results = await inner.run(tasks);
        for (const r of results) shardsByTasks += 'kind' in r ? 0 : r.search?.length ?? 0;
        return [...results].reverse();
      } };
    };
    const opts = (dir: string): MergeOptions => ({ store: new FsObjectStore({ root: dir }), dataDir: dir, rowGroupSize: 2048, keepVersions: 5, graceMs: 60_000, passRows: 150 });
    for (const batches of steps) {
      const staging = join(root, `batches-${ran.length}`);
      await writeBatches(staging, batches);
      for (const d of [plain, tasked]) {
        await cp(join(staging, 'batches'), join(d, 'batches'), { recursive: true });
        await cp(join(staging, 'inbox'), join(d, 'inbox'), { recursive: true });
      }
      const a = await runMerge(opts(plain));
      const b = await runMerge({ ...opts(tasked), tasks: counting(tasked) });
      expect(b).toMatchObject({ version: a.version, rowsIn: a.rowsIn, urls: a.urls, domains: a.domains, rewrittenFiles: a.rewrittenFiles, rowsWritten: a.rowsWritten });
    }
    // several groups each merge (passRows), old runs folded by the second; the new rows staged by stage tasks
    expect(ran.length).toBeGreaterThan(4);
    expect(stageTasks).toBeGreaterThanOrEqual(2);
    expect(ran.every((t) => t.v === 2 && t.staged === null && (t.stagedFrom!.length > 0) === t.targets.some((x) => x.fresh))).toBe(true);
    expect(ran.some((t) => t.targets.some((x) => x.old.length > 0))).toBe(true);
    const [fa, fb] = [await mergeOutputs(plain), await mergeOutputs(tasked)];
    expect([...fa.keys()].filter((k) => k.startsWith('urls/')).length).toBeGreaterThan(4);
    expect([...fa.keys()].some((k) => k.startsWith('index/v000002/'))).toBe(true);
    // the tasks built the search shards of the files they wrote (the coordinator built none of those)
    expect(shardsByTasks).toBe([...fb.keys()].filter((k) => k.startsWith('search/')).length);
    expect(shardsByTasks).toBeGreaterThan(4);
    expect(outputDifferences(fa, fb)).toEqual([]);
    // the tasks' inputs and results are gone with the merge
    const left: string[] = [];
    for await (const o of new FsObjectStore({ root: tasked }).list('merge-tasks/')) left.push(o.key);
    expect(left).toEqual([]);
  }, 300_000);

  it('a task run twice (a redelivery after a crash) writes the same files and result', async () => {
    const dir = join(root, 'twice');
    const { store, ids } = await devStore(dir);
    await writeBatches(dir, (await devBatches(DEV_CRAWLS[0], { datasetId: ids[DEV_CRAWLS[0]]!, batchSize: 40 })).slice(0, 6));
    const seen: { task: AnyMergeTask; result: AnyMergeTaskResult }[] = [];
    const written = (r: AnyMergeTaskResult): string[] => ('kind' in r ? r.outputs.map((o) => o.key) : r.entries.map((e) => e.key));
    const twice: MergeTaskRunner = {
      run: async (tasks) => {
        const out: AnyMergeTaskResult[] = [];
        for await (const t of tasks) {
          const first = await runAnyMergeTask(store, t, { tmpDir: join(root, 'twice-tmp'), dataDir: dir });
          const bytes = new Map(await Promise.all(written(first).map(async (k) => [k, Buffer.from((await store.get(k))!)] as [string, Buffer])));
          const again = await runAnyMergeTask(store, t, { tmpDir: join(root, 'twice-tmp'), dataDir: dir });
          seen.push({ task: t, result: again });
          expect(again).toEqual(first);
          for (const k of written(again)) expect(Buffer.from((await store.get(k))!).equals(bytes.get(k)!)).toBe(true);
          out.push(again);
        }
        return out;
      },
    };
    const m = await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 3, graceMs: 60_000, tasks: twice });
    expect(m.published).toBe(true);
    // both kinds of task were run twice
    expect(seen.filter((s) => s.task.kind === 'merge-stage').length).toBeGreaterThan(0);
    expect(seen.filter((s) => s.task.kind === 'merge-lake').length).toBeGreaterThan(0);
  }, 120_000);
});
