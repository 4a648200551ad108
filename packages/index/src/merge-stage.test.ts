import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsObjectStore, closeDuckDbParquetEngine, type PartRow } from '@ccpipe/adapters';
import { partRow, putBatch } from '../../../tests/support/batches';
import { mergeOutputs, outputDifferences } from '../../../tests/support/store-files';
import { runMerge, type MergeOptions } from './run-merge';
import type { MergeTaskRunner } from './merge-task';
import type { StageTask } from './merge-stage';
import { decodeMergeTask, inProcessTaskRunner } from './merge-task-queue';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ccpipe-merge-stage-'));
});
afterAll(async () => {
  await closeDuckDbParquetEngine();
  await rm(root, { recursive: true, force: true });
});

const url = (d: number, p: number): string => `https://www.site${d}.example/page-${p}.html`;

describe('stage tasks (a distributed merge stages its rows in tasks)', () => {
  it('writes the one-process merge byte for byte through recaptures, url_id collisions and the content-versions policy', async () => {
    const plain = join(root, 'plain');
    const tasked = join(root, 'tasked');
    const stages: StageTask[] = [];
    const runner = (dir: string): MergeTaskRunner => {
      const inner = inProcessTaskRunner(new FsObjectStore({ root: dir }), { tmpDir: join(root, 'tmp'), dataDir: dir });
      return { run: async (feed) => {
        const tasks = [];
        for await (const t of feed) {
          if (t.kind === 'merge-stage') stages.push(t);
          tasks.push(t);
        }
        return inner.run(tasks);
      } };
    };
    const opts = (dir: string): MergeOptions => ({ store: new FsObjectStore({ root: dir }), dataDir: dir, rowGroupSize: 2048, keepVersions: 5, graceMs: 60_000, passRows: 6, textVersions: 1 });
    // three merges of batches in two datasets over 8 domains
    const rounds: [number, string, PartRow[]][][] = [];
    const first = (d: number): PartRow[] => Array.from({ length: 12 }, (_, p) => partRow(d, url(p % 8, p), `2030010${d}000000`, { text: `text ${p} of ${d}` }));
    rounds.push([[1, 'a1', first(1).slice(0, 6)], [1, 'a2', first(1).slice(6)], [2, 'a3', first(2)]]);
    const collider = partRow(1, url(3, 100), '20300110000000', { urlId: first(1)[3]!.urlId }); // another URL, the id of page 3
    rounds.push([
      // a newer capture of page 0 (the lake's row loses), an older one of page 1 (the new row loses), page 2 twice in
      // the delta (the older loses), and the collider; dataset 2's newer captures take the text of dataset 1's
      [1, 'b1', [partRow(1, url(0, 0), '20300120000000'), partRow(1, url(1, 1), '20291231000000'), partRow(1, url(2, 2), '20300115000000'), collider]],
      [1, 'b2', [partRow(1, url(2, 2), '20300116000000'), partRow(1, url(5, 13), '20300116000000')]],
      [2, 'b3', [partRow(2, url(4, 4), '20300125000000'), partRow(2, url(6, 6), '20300125000000'), partRow(2, url(7, 14), '20300125000000')]],
    ]);
    rounds.push([[1, 'c1', [partRow(1, url(3, 100), '20300201000000', { urlId: first(1)[3]!.urlId }), partRow(1, url(0, 15), '20300201000000')]]]);
    const results = [];
    for (const batches of rounds) {
      for (const dir of [plain, tasked]) for (const [d, id, rows] of batches) await putBatch(new FsObjectStore({ root: dir }), d, id, rows);
      const a = await runMerge(opts(plain));
      const b = await runMerge({ ...opts(tasked), tasks: runner(tasked) });
      expect(b).toMatchObject({ version: a.version, rowsIn: a.rowsIn, urls: a.urls, domains: a.domains, rewrittenFiles: a.rewrittenFiles, newCollisions: a.newCollisions, textDropped: a.textDropped });
      results.push(a);
    }
    // what the rounds were built to exercise happened
    expect(results[1]!.newCollisions).toBe(1);
    expect(results[1]!.textDropped).toBeGreaterThan(0);
    expect(stages.length).toBeGreaterThan(3);
    expect(stages.some((s) => s.fix !== null)).toBe(true);
    expect(outputDifferences(await mergeOutputs(plain), await mergeOutputs(tasked))).toEqual([]);
  }, 120_000);

  it('a merge-worker takes stage tasks and the lake tasks that read them, and refuses a lake task of the new form without its files', () => {
    const enc = (o: unknown): Uint8Array => Buffer.from(JSON.stringify(o));
    const stage = { v: 2, kind: 'merge-stage', id: 'v000002.00aa/s0', run: 'v000002.00aa', n: 's0', parts: [], firstF: 1, types: {}, dom: 'd', fix: null, groups: [], columns: [], dropText: false };
    expect(decodeMergeTask(enc(stage)).kind).toBe('merge-stage');
    const lake = { v: 2, kind: 'merge-lake', id: 'v000002.00aa/0', run: 'v000002.00aa', n: 0, targets: [], staged: null, stagedFrom: ['k'] };
    expect(decodeMergeTask(enc(lake)).kind).toBe('merge-lake');
    expect(() => decodeMergeTask(enc({ ...lake, stagedFrom: undefined }))).toThrow(/schema/);
    expect(() => decodeMergeTask(enc({ ...stage, n: 3 }))).toThrow(/schema/);
  });
});
