import { randomBytes } from 'node:crypto';
import { existsSync, readlinkSync } from 'node:fs';
import { mkdir, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { CcpError, type ObjectStore } from '@ccpipe/core';

/** Where the lease lives in the data store (beside the manifest; GC never touches it). */
export const MERGE_LEASE_KEY = 'index/merger.lease';

/** What the lease object holds. */
interface LeaseBody {
  v: 1;
  /** This holder, one per merge (random). */
  owner: string;
  host: string;
  /** The holder's pid namespace (`/proc/self/ns/pid`; '' where there is none): its pid means something only there. */
  pidns?: string;
  pid: number;
  startedAt: string;
  heartbeatAt: string;
}

/** A merge's hold on the data store. */
export interface MergeLease {
  /** @throws CcpError CCP_ERR_MERGE_BUSY when another merger has taken the lease over (this merge must write no more). */
  check(): Promise<void>;
  /** Without I/O: throws CCP_ERR_MERGE_BUSY when the lease is lost or could not be renewed lately (call before each write). */
  assertHeld(): void;
  /** Stops the heartbeat and deletes the lease if it is still this merge's. Idempotent. */
  release(): Promise<void>;
}

export interface MergeLeaseOptions {
  /**
   * A lease whose heartbeat is older than this is free. Default 30 min: three heartbeats (after which its holder
   * writes nothing more) plus the longest store write with its retries (S3: 5 attempts of at most 300 s, plus pauses).
   */
  ttlMs?: number;
  /** Pause between writing the lease and reading it back, so that a merger that wrote at the same moment is seen. Default 100 ms. */
  settleMs?: number;
  now?: () => Date;
}

/** This process's pid namespace ('' where there is none). */
const PIDNS = ((): string => {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return '';
  }
})();
/** Leases this process wrote and let go of (a release that could not delete one leaves it behind). */
const letGo = new Set<string>();
/**
 * Where a merger marks the leases it took, on this machine's own file system (`/tmp`, not `TMPDIR`, which compose puts
 * on a volume another container may share): a marker there for a lease written in another pid namespace means an
 * earlier incarnation of this container wrote it (restarted in place), since a container holds one merger.
 */
const MARKS = '/tmp/ccpipe-merge-lease';

const busy = (held: LeaseBody | null, why: string): CcpError =>
  new CcpError('CCP_ERR_MERGE_BUSY', `another merger holds the data store (${why}): merges are single-writer; stop the other one or wait`, {
    retryable: true,
    detail: held === null ? {} : { host: held.host, pid: held.pid, startedAt: held.startedAt, heartbeatAt: held.heartbeatAt },
  });

/**
 * Takes the data store's merge lease (`index/merger.lease`): merges are single-writer, and two at once would write the
 * same version's files over each other (the version name is the next number for both) and publish a mix. A lease
 * another merger holds is refused (`CCP_ERR_MERGE_BUSY`) while its heartbeat is younger than `ttlMs`, unless its
 * holder is known to be gone ({@link isFree}). After writing it the lease is read back: of two mergers starting
 * together, the one that wrote last wins. While held, a heartbeat rewrites it every `min(60 s, ttlMs / 4)`; the merge
 * calls `check()` before each step that writes under the version name and before the manifest flip, and
 * `assertHeld()` before every single write (a fenced store): a merge whose last good heartbeat is three beats old
 * writes nothing more, so its writes end before a successor may take over (`ttlMs` exceeds three beats plus the
 * longest store write). Without conditional writes (not every S3-compatible server has them) this is not a proof
 * against every race, but it turns the operator's mistake — a second `ccpipe merge` beside the service — into a clear
 * error instead of a corrupt version.
 */
export async function acquireMergeLease(store: ObjectStore, opts: MergeLeaseOptions = {}): Promise<MergeLease> {
  const ttlMs = opts.ttlMs ?? 1_800_000;
  const beatMs = Math.max(10, Math.min(60_000, Math.floor(ttlMs / 4)));
  const now = opts.now ?? (() => new Date());
  const me = randomBytes(8).toString('hex');
  const host = hostname();
  const read = async (): Promise<LeaseBody | null> => {
    const b = await store.get(MERGE_LEASE_KEY);
    if (b === null) return null;
    try {
      const body = JSON.parse(Buffer.from(b).toString('utf8')) as LeaseBody;
      return body.v === 1 && typeof body.owner === 'string' ? body : null;
    } catch {
      return null; // a damaged lease holds nothing
    }
  };
  const started = now().toISOString();
  let goodBeatAt = Date.now();
  const write = async (): Promise<void> => {
    const at = Date.now();
    await store.put(MERGE_LEASE_KEY, Buffer.from(JSON.stringify({ v: 1, owner: me, host, pidns: PIDNS, pid: process.pid, startedAt: started, heartbeatAt: now().toISOString() } satisfies LeaseBody)));
    goodBeatAt = at;
  };

  const held = await read();
  if (held !== null && held.owner !== me && !isFree(held, host, now().getTime(), ttlMs)) throw busy(held, `since ${held.startedAt}, last heartbeat ${held.heartbeatAt}`);
  await write();
  await new Promise((r) => setTimeout(r, opts.settleMs ?? 100));
  const back = await read();
  if (back?.owner !== me) throw busy(back, 'it started at the same moment');
  await mkdir(MARKS, { recursive: true }).then(() => writeFile(join(MARKS, me), '')).catch(() => undefined);
  // markers of crashed mergers older than a lease can live say nothing any more
  for (const f of await readdir(MARKS).catch(() => [] as string[])) {
    const path = join(MARKS, f);
    if (f !== me && Date.now() - ((await stat(path).catch(() => null))?.mtimeMs ?? Date.now()) > ttlMs) await rm(path, { force: true }).catch(() => undefined);
  }

  let lost: CcpError | null = null;
  let released = false;
  let beating: Promise<void> | null = null;
  const timer = setInterval(() => {
    if (beating !== null || lost !== null || released) return; // one beat at a time: a stalled store does not pile them up
    beating = (async () => {
      try {
        const cur = await read();
        if (released) return;
        if (cur?.owner !== me) lost = busy(cur, 'it took the lease over while this merge stalled');
        else {
          await write();
          const t = new Date();
          await utimes(join(MARKS, me), t, t).catch(() => undefined); // the marker of a live merger never looks stale
        }
      } catch {
        // a store hiccup: the next beat tries again; check() reads the lease itself
      } finally {
        beating = null;
      }
    })();
  }, beatMs);
  timer.unref();
  return {
    assertHeld() {
      if (lost !== null) throw lost;
      if (Date.now() - goodBeatAt > 3 * beatMs) {
        throw (lost = busy(null, 'this merge could not renew its lease for three heartbeats, so another merger may take it over'));
      }
    },
    async check() {
      if (lost !== null) throw lost;
      const cur = await read();
      if (cur?.owner !== me) throw (lost = busy(cur, 'it took the lease over while this merge stalled'));
    },
    async release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      letGo.add(me);
      await rm(join(MARKS, me), { force: true }).catch(() => undefined);
      // a stalled store is not waited for long: a lease left behind is this process's to take again, and another's
      // once its heartbeat is stale. Past the wait, nothing is deleted any more (a later lease could be there)
      let abandoned = false;
      const deleting = (async () => {
        if (beating !== null) await beating;
        if ((await read())?.owner === me && !abandoned) await store.delete(MERGE_LEASE_KEY);
      })().catch(() => undefined);
      await Promise.race([deleting, new Promise((r) => setTimeout(r, 5_000).unref())]);
      abandoned = true;
    },
  };
}

/**
 * A lease nobody holds any more: its heartbeat is stale; or this process let go of it; or it was written on this
 * host in this pid namespace by a process that is gone (a `ccpipe merge` killed and run again); or it was written on
 * this host in another pid namespace and this machine's `/tmp` holds its marker (the same container, restarted in
 * place). Otherwise only its heartbeat counts.
 */
function isFree(held: LeaseBody, host: string, nowMs: number, ttlMs: number): boolean {
  const beat = Date.parse(held.heartbeatAt);
  if (!Number.isFinite(beat) || nowMs - beat > ttlMs) return true;
  if (letGo.has(held.owner)) return true;
  if (held.host !== host) return false;
  if ((held.pidns ?? '') !== PIDNS || PIDNS === '') return /^[0-9a-f]{16}$/.test(held.owner) && existsSync(join(MARKS, held.owner));
  if (held.pid === process.pid) return false; // a merge of this very process, still running
  try {
    process.kill(held.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
