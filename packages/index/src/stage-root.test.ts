import { mkdir, readFile, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { tempDirEach } from '../../../tests/support/temp-dir';
import { openStageRoot } from './stage-root';

describe('openStageRoot (a process\'s own directory of index copies under a shared cache dir)', () => {
  let base: string;
  tempDirEach('ccpipe-stage-root-', (d) => (base = d));

  /**
   * A directory as another process would have left it, last touched `ageMs` ago (its owner file, or itself without
   * one): made under another name and renamed into place, so a running sweep never sees it half made.
   */
  const leftBehind = async (name: string, ageMs: number, owner: boolean | 'foreign' = true): Promise<void> => {
    const dir = join(base, `making-${name}`);
    await mkdir(join(dir, 'v000001-1'), { recursive: true });
    const at = new Date(Date.now() - ageMs);
    if (owner) {
      await writeFile(join(dir, 'owner.json'), JSON.stringify(owner === 'foreign' ? { name: 'another tool' } : { kind: 'ccpipe-stage', host: 'elsewhere', pid: 1 }));
      await utimes(join(dir, 'owner.json'), at, at);
    }
    await utimes(dir, at, at);
    await rename(dir, join(base, name));
    await utimes(join(base, name), at, at); // a rename stamps the directory's parent, not always the directory: set again
  };
  const eventually = async (check: () => Promise<boolean>): Promise<void> => {
    for (const until = Date.now() + 5000; !(await check());) {
      if (Date.now() > until) throw new Error('condition not met within 5 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('makes a directory with an owner file; removes, at open, the siblings untouched for longer than staleMs and nothing else', async () => {
    await leftBehind('ccpipe-index-gone', 10 * 60_000);
    // a name with our prefix is not enough: without a ccpipe owner file (another tool's or a test's directory in the
    // shared temp dir, or a process gone before it wrote its owner file) it stays
    await leftBehind('ccpipe-index-unowned', 10 * 60_000, false);
    await leftBehind('ccpipe-index-foreign', 10 * 60_000, 'foreign');
    await leftBehind('ccpipe-index-fresh', 1000); // another replica, alive: its heartbeat is recent
    await leftBehind('other-tool', 10 * 60_000); // not ours
    const removed: string[] = [];
    const root = await openStageRoot(base, { onStale: (d) => removed.push(d) });
    try {
      expect(removed).toEqual([join(base, 'ccpipe-index-gone')]);
      expect((await readdir(base)).sort()).toEqual(['ccpipe-index-foreign', 'ccpipe-index-fresh', 'ccpipe-index-unowned', root.dir.slice(base.length + 1), 'other-tool'].sort());
      expect(JSON.parse(await readFile(join(root.dir, 'owner.json'), 'utf8'))).toMatchObject({ host: hostname(), pid: process.pid });
    } finally {
      await root.close();
    }
    expect((await readdir(base)).sort()).toEqual(['ccpipe-index-foreign', 'ccpipe-index-fresh', 'ccpipe-index-unowned', 'other-tool']);
  });

  it('a heartbeat keeps a live directory fresh for the others, and sweeps what goes stale while it runs', async () => {
    const a = await openStageRoot(base, { heartbeatMs: 40, staleMs: 1500 });
    try {
      const born = (await stat(join(a.dir, 'owner.json'))).mtimeMs;
      await eventually(async () => (await stat(join(a.dir, 'owner.json'))).mtimeMs > born);
      // after more than the stale age, a's owner file is still fresh: a second process (its own copy of the module, so
      // nothing but the file tells it a is alive) leaves a alone
      await new Promise((r) => setTimeout(r, 1800));
      let other!: typeof import('./stage-root');
      jest.isolateModules(() => {
        other = jest.requireActual<typeof import('./stage-root')>('./stage-root');
      });
      expect(other.openStageRoot).not.toBe(openStageRoot);
      const b = await other.openStageRoot(base, { heartbeatMs: 40, staleMs: 1500 });
      await b.close();
      expect(await readdir(base)).toEqual([a.dir.slice(base.length + 1)]);
      // what goes stale later is swept by a's own heartbeat, not only by the next process to start
      await leftBehind('ccpipe-index-crashed', 60_000);
      await eventually(async () => !(await readdir(base)).includes('ccpipe-index-crashed'));
    } finally {
      await a.close();
    }
    expect(await readdir(base)).toEqual([]);
  });

  it('a directory removed under a live process is made again by its next heartbeat, owner file included', async () => {
    const a = await openStageRoot(base, { heartbeatMs: 40, staleMs: 60_000 });
    try {
      await rm(a.dir, { recursive: true, force: true });
      await eventually(async () => (await stat(join(a.dir, 'owner.json')).catch(() => null)) !== null);
    } finally {
      await a.close();
    }
    expect(await readdir(base)).toEqual([]);
  });

  it('a directory that cannot be made is CCP_ERR_INDEX_OPTIONS naming the base', async () => {
    await writeFile(join(base, 'file'), 'x');
    await expect(openStageRoot(join(base, 'file', 'sub'))).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_OPTIONS', detail: { dir: join(base, 'file', 'sub') } });
  });
});
