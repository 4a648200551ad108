/**
 * `ccpipe merge` killed with SIGKILL at each phase of a merge (the process, not an exception): the previous version
 * keeps serving, and rerunning completes a version whose answers and lake rows are those of a merge never killed.
 */
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IndexView, ObjectStore } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { openIndexSource } from '@ccpipe/index';
import { partRow, putBatch } from './support/batches';
import { killAll, spawnCcpipe, type CcpipeProcess } from './support/processes';

const procs: CcpipeProcess[] = [];
const dirs: string[] = [];
let scratch = '';

beforeAll(async () => {
  scratch = await newDir();
});

afterAll(async () => {
  await killAll(procs);
  await closeDuckDbParquetEngine();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function newDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'ccpipe-merge-crash-'));
  dirs.push(d);
  return d;
}

/** Batch `id` of dataset 1: `n` captures over 1,500 domains (all 256 lake partitions), sorted as a worker writes them. */
async function putCaptures(store: ObjectStore, id: string, n: number, ts: string, from = 0): Promise<void> {
  const rows = Array.from({ length: n }, (_, k) => partRow(1, `https://www.site${(from + k) % 1500}.example/page/${from + k}`, ts, { title: `page ${from + k}`, warcOffset: (from + k) * 1000 }));
  rows.sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  await putBatch(store, 1, id, rows);
}

/**
 * Runs `ccpipe merge --data DIR` to its end; with `killAfter`, SIGKILLs it as soon as it logs that phase's end (its
 * progress lines go to stderr).
 */
async function merge(dir: string, killAfter?: string): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  // temp dirs under the test's own (a killed merge cannot remove its own; a later merge does once it is stale)
  const p = spawnCcpipe(['merge', '--data', dir, '--grace-ms', '0'], { TMPDIR: scratch });
  procs.push(p);
  if (killAfter !== undefined) {
    let seen = '';
    p.child.stderr!.on('data', (chunk: string) => {
      seen += chunk;
      if (seen.includes(`"phase":"${killAfter}"`)) p.child.kill('SIGKILL');
    });
  }
  return p.exited;
}

const manifestOf = async (dir: string): Promise<unknown> => JSON.parse(await readFile(join(dir, 'index', 'manifest.json'), 'utf8').catch(() => 'null')) as unknown;

/** Everything the API answers for the test's domains, from the current version of `dir`. */
async function answers(dir: string): Promise<unknown[]> {
  const source = await openIndexSource({ store: new FsObjectStore({ root: dir }), dataDir: dir, pollMs: 0 });
  try {
    const v = (await source.current()) as IndexView;
    const out: unknown[] = [v.version];
    for (let d = 0; d < 1500; d += 7) {
      const name = `site${d}.example`;
      const found = v.domain(name);
      out.push(name, found?.domain64, found?.datasets);
      if (found !== null) out.push((await v.urls(name, 1, 0, 1000)).items.map((i) => [i.url, i.ts, i.title]));
    }
    return out;
  } finally {
    await source.close();
  }
}

describe('ccpipe merge killed with SIGKILL', () => {
  it('at each phase keeps the previous version serving; rerunning publishes what an uninterrupted merge does', async () => {
    // one data dir, copied per kill point: a first merge of two batches, then a third batch (new and recaptured URLs)
    const base = await newDir();
    const store = new FsObjectStore({ root: base });
    await putCaptures(store, 'b1', 30_000, '20300101000000');
    await putCaptures(store, 'b2', 30_000, '20300102000000', 30_000);
    expect(await merge(base)).toEqual({ code: 0, signal: null });
    const v1 = await manifestOf(base);
    expect(v1).toMatchObject({ current: 'v000001' });
    await putCaptures(store, 'b3', 20_000, '20300103000000', 50_000); // 10,000 recaptures of b2's URLs, 10,000 new

    const clean = await newDir();
    await cp(base, clean, { recursive: true });
    expect(await merge(clean)).toEqual({ code: 0, signal: null });
    const want = await answers(clean);
    expect(want[0]).toBe('v000002');

    for (const phase of ['read', 'domains', 'collisions', 'lake', 'index']) {
      const dir = await newDir();
      await cp(base, dir, { recursive: true });
      expect({ phase, exit: await merge(dir, phase) }).toEqual({ phase, exit: { code: null, signal: 'SIGKILL' } });
      // killed before its manifest flip: the previous version still serves, untouched (after the index phase only the
      // small JSON files and the flip are left, so the kill may land before or after the flip: either version whole)
      const m = (await manifestOf(dir)) as { current: string };
      if (phase !== 'index' || m.current === 'v000001') {
        expect({ phase, manifest: m }).toEqual({ phase, manifest: v1 });
        expect((await answers(dir))[0]).toBe('v000001');
      } else expect({ phase, answers: await answers(dir) }).toEqual({ phase, answers: want });
      // rerun: the same version as the merge never killed, with the same answers
      expect(await merge(dir)).toEqual({ code: 0, signal: null });
      expect({ phase, answers: await answers(dir) }).toEqual({ phase, answers: want });
      const files = async (d: string) => (JSON.parse(await readFile(join(d, 'index', 'v000002', 'files.json'), 'utf8')) as { key: string; rows: number }[]).map((f) => [f.key, f.rows]);
      expect(await files(dir)).toEqual(await files(clean));
    }
  }, 600_000);
});
