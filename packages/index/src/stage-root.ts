import { mkdir, mkdtemp, readFile, readdir, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CcpError } from '@ccpipe/core';

/** A directory of one process's own under a shared cache directory, kept alive by a heartbeat. */
export interface StageRoot {
  readonly dir: string;
  /** Stops the heartbeat and removes the directory. Idempotent. */
  close(): Promise<void>;
}

export interface StageRootOptions {
  /** How often the owner file is rewritten and stale siblings are looked for (default 60 s). */
  heartbeatMs?: number;
  /** A sibling whose ccpipe owner file is this much older than ours is removed (default 5 min); one without is never removed. */
  staleMs?: number;
  /** Told of each stale sibling removed (its path). */
  onStale?: (dir: string) => void;
  /** Name prefix of this kind of directory, and of the siblings swept (default `ccpipe-index-`; the merger's: `ccpipe-merge-`). */
  prefix?: string;
  /** The error when the directory cannot be made (default CcpError CCP_ERR_INDEX_OPTIONS naming indexCacheDir). */
  createError?: (cause: unknown, base: string) => Error;
}

const PREFIX = 'ccpipe-index-';
const OWNER = 'owner.json';
/** What an owner file says it is: only a directory whose owner file says so is swept. */
const OWNER_KIND = 'ccpipe-stage';
/** Stage directories open in this process (never swept, whatever their clock says). */
const live = new Set<string>();

/**
 * A fresh directory `ccpipe-index-*` (or `prefix`*) under `base` (created if missing) with an `owner.json` (host, pid, start) that a
 * heartbeat rewrites every `heartbeatMs`. At open and at each heartbeat, siblings whose owner file is more than
 * `staleMs` older than this one's fresh write are removed: what a process that is gone left behind (a crash, a
 * SIGKILL, a container restarted or replaced), whatever host it ran on; a directory without an owner file is never
 * removed, whatever its name, nor one whose owner file is not a ccpipe stage root's (`kind`): the default base, the OS
 * temp dir, is shared with other tools. Liveness is the heartbeat, not host and pid:
 * replicas that share a volume, a hostname or pid numbers (separate pid namespaces) do not take each other's
 * directories. Ages are compared between modification times the file system stamped, so clients' clocks do not
 * matter; a process that has itself missed beats (suspended, or its machine paused) does not sweep until it has
 * beaten again, and one whose directory was removed makes it again. A sibling it cannot read is left alone; a sweep
 * is best-effort. @throws CcpError CCP_ERR_INDEX_OPTIONS when the directory cannot be made
 */
export async function openStageRoot(base: string, opts: StageRootOptions = {}): Promise<StageRoot> {
  const heartbeatMs = opts.heartbeatMs ?? 60_000;
  const prefix = opts.prefix ?? PREFIX;
  const staleMs = opts.staleMs ?? 5 * 60_000;
  const owner = JSON.stringify({ kind: OWNER_KIND, host: hostname(), pid: process.pid, started: new Date(Date.now() - process.uptime() * 1000).toISOString() });
  let dir: string | undefined;
  let parent: string;
  try {
    await mkdir(base, { recursive: true });
    parent = await realpath(base);
    dir = await mkdtemp(join(parent, prefix));
    live.add(dir);
    await writeOwner(dir, owner);
  } catch (err) {
    if (dir !== undefined) {
      live.delete(dir);
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
    throw opts.createError?.(err, base) ?? new CcpError('CCP_ERR_INDEX_OPTIONS', 'cannot create a directory for the index files under indexCacheDir', { cause: err, detail: { dir: base } });
  }
  const own = dir;
  /** Rewrites the owner file (its directory again if someone removed it); its new modification time, or null. */
  const touch = async (): Promise<number | null> => {
    try {
      await mkdir(own, { recursive: true });
      await writeOwner(own, owner);
      return (await stat(join(own, OWNER))).mtimeMs;
    } catch {
      return null;
    }
  };
  const sweep = async (now: number): Promise<void> => {
    const names = await readdir(parent).catch(() => [] as string[]);
    for (const name of names) {
      const sibling = join(parent, name);
      if (!name.startsWith(prefix) || live.has(sibling)) continue;
      try {
        // only a directory with an owner file is ours to judge: a name with our prefix alone is not (the OS temp dir,
        // the default, is shared: other tools' and tests' directories may start the same way). A process gone before
        // it wrote its owner file leaves an empty directory, which stays. Any error (gone, not readable): left alone.
        const touched = await stat(join(sibling, OWNER));
        if (now - touched.mtimeMs <= staleMs) continue;
        if ((JSON.parse(await readFile(join(sibling, OWNER), 'utf8')) as { kind?: unknown }).kind !== OWNER_KIND) continue;
        await rm(sibling, { recursive: true, force: true });
        opts.onStale?.(sibling);
      } catch {
        // gone meanwhile, or not readable: the next sweep looks again
      }
    }
  };
  let lastBeat = Date.now();
  const beat = async (): Promise<void> => {
    const missed = Date.now() - lastBeat > staleMs / 2; // suspended: the others may look stale only to this clock
    lastBeat = Date.now();
    const now = await touch();
    if (now !== null && !missed) sweepFrom(now);
  };
  // Sweeps run beside the heartbeat, one at a time: removing a big stale directory can take longer than the stale
  // age on a slow volume, and the beats must go on meanwhile, or another process would take this one for gone.
  let sweeping: Promise<void> | null = null;
  const sweepFrom = (now: number): void => {
    if (sweeping !== null) return;
    sweeping = sweep(now).finally(() => {
      sweeping = null;
    });
  };
  let beating: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (beating !== null) return; // the last beat still runs: no overlap
    beating = beat().finally(() => {
      beating = null;
    });
  }, heartbeatMs);
  timer.unref();
  const first = await touch();
  if (first !== null) {
    sweepFrom(first);
    await sweeping; // the first sweep is done when the directory is handed out (the beats already run)
  }
  let closed: Promise<void> | null = null;
  return {
    dir: own,
    close() {
      closed ??= (async () => {
        clearInterval(timer);
        await beating;
        await sweeping;
        try {
          await rm(own, { recursive: true, force: true });
        } finally {
          live.delete(own);
        }
      })();
      return closed;
    },
  };
}

/**
 * Writes the owner file whole or not at all (a temp file renamed over it): a process that dies mid-write (a full
 * disk) leaves the previous owner file, which still says whose the directory is, never an empty one no sweep could
 * read.
 */
async function writeOwner(dir: string, owner: string): Promise<void> {
  const tmp = join(dir, `${OWNER}.tmp`);
  await writeFile(tmp, owner);
  await rename(tmp, join(dir, OWNER));
}
