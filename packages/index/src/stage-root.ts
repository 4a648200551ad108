import { mkdir, mkdtemp, readdir, realpath, rm, stat, utimes, writeFile } from 'node:fs/promises';
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
  /** How often the owner file is touched and stale siblings are looked for (default 60 s). */
  heartbeatMs?: number;
  /** A sibling whose owner file (else the directory) was last touched longer ago than this is removed (default 5 min). */
  staleMs?: number;
  /** Told of each stale sibling removed (its path). */
  onStale?: (dir: string) => void;
}

const PREFIX = 'ccpipe-index-';
const OWNER = 'owner.json';
/** Stage directories open in this process (never swept, whatever their clock says). */
const live = new Set<string>();

/**
 * A fresh directory `ccpipe-index-*` under `base` (created if missing) with an `owner.json` (host, pid, start) that a
 * heartbeat touches every `heartbeatMs`. At open and at each heartbeat, siblings whose owner file has not been touched
 * for `staleMs` are removed: what a process that is gone left behind (a crash, a SIGKILL, a container restarted or
 * replaced), whatever host it ran on. Liveness is the heartbeat, not host and pid: replicas that share a volume, a
 * hostname or pid numbers (separate pid namespaces) never take each other's directories. A sweep is best-effort: a
 * sibling it cannot read or remove is left for the next one. @throws CcpError CCP_ERR_INDEX_OPTIONS when the
 * directory cannot be made
 */
export async function openStageRoot(base: string, opts: StageRootOptions = {}): Promise<StageRoot> {
  const heartbeatMs = opts.heartbeatMs ?? 60_000;
  const staleMs = opts.staleMs ?? 5 * 60_000;
  let dir: string | undefined;
  let parent: string;
  try {
    await mkdir(base, { recursive: true });
    parent = await realpath(base);
    dir = await mkdtemp(join(parent, PREFIX));
    live.add(dir);
    await writeFile(join(dir, OWNER), JSON.stringify({ host: hostname(), pid: process.pid, started: new Date(Date.now() - process.uptime() * 1000).toISOString() }));
  } catch (err) {
    if (dir !== undefined) {
      live.delete(dir);
      await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
    throw new CcpError('CCP_ERR_INDEX_OPTIONS', 'cannot create a directory for the index files under indexCacheDir', { cause: err, detail: { dir: base } });
  }
  const own = dir;
  const sweep = async (): Promise<void> => {
    const names = await readdir(parent).catch(() => [] as string[]);
    for (const name of names) {
      const sibling = join(parent, name);
      if (!name.startsWith(PREFIX) || live.has(sibling)) continue;
      try {
        const touched = await stat(join(sibling, OWNER)).catch(() => stat(sibling));
        if (Date.now() - touched.mtimeMs <= staleMs) continue;
        await rm(sibling, { recursive: true, force: true });
        opts.onStale?.(sibling);
      } catch {
        // gone meanwhile, or not ours to read: the next sweep looks again
      }
    }
  };
  await sweep();
  let beat: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    beat = (async () => {
      const now = new Date();
      await utimes(join(own, OWNER), now, now).catch(() => undefined);
      await sweep();
    })();
  }, heartbeatMs);
  timer.unref();
  let closed: Promise<void> | null = null;
  return {
    dir: own,
    close() {
      closed ??= (async () => {
        clearInterval(timer);
        await beat;
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
