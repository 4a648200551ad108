import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ObjectStore } from '@ccpipe/core';
import { FsObjectStore, MemoryObjectStore, closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { partRow, putBatch } from '../../../tests/support/batches';
import { indexLayout, type IndexManifest } from './format';
import { MERGE_LEASE_KEY, acquireMergeLease } from './merge-lease';
import { runMerge, type MergeOptions } from './run-merge';
import { verifyVersion } from './verify';

const lease = (over: Record<string, unknown>): Uint8Array =>
  Buffer.from(JSON.stringify({ v: 1, owner: 'other', host: 'another-host', pid: 4242, startedAt: new Date().toISOString(), heartbeatAt: new Date().toISOString(), ...over }));

describe('merge lease', () => {
  it('refuses a lease another merger holds, until its heartbeat is stale or its process is gone', async () => {
    const store = new MemoryObjectStore();
    await store.put(MERGE_LEASE_KEY, lease({}));
    await expect(acquireMergeLease(store, { settleMs: 1 })).rejects.toMatchObject({ code: 'CCP_ERR_MERGE_BUSY', detail: { host: 'another-host', pid: 4242 } });
    // stale heartbeat
    await store.put(MERGE_LEASE_KEY, lease({ heartbeatAt: new Date(Date.now() - 61_000).toISOString() }));
    await (await acquireMergeLease(store, { settleMs: 1, ttlMs: 60_000 })).release();
    // this host and pid namespace: a process that is alive holds it, one that is gone does not
    const here = { host: hostname(), pidns: readlinkSync('/proc/self/ns/pid') };
    await store.put(MERGE_LEASE_KEY, lease({ ...here, pid: process.ppid }));
    await expect(acquireMergeLease(store, { settleMs: 1 })).rejects.toMatchObject({ code: 'CCP_ERR_MERGE_BUSY' });
    // another pid namespace (another container): its pids mean nothing here, only its heartbeat counts
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    await store.put(MERGE_LEASE_KEY, lease({ ...here, pidns: 'pid:[1]', pid: gone }));
    await expect(acquireMergeLease(store, { settleMs: 1 })).rejects.toMatchObject({ code: 'CCP_ERR_MERGE_BUSY' });
    // ...unless this machine's /tmp holds its marker: the same container, restarted in place (new pid namespace)
    const owner = randomBytes(8).toString('hex');
    mkdirSync('/tmp/ccpipe-merge-lease', { recursive: true });
    writeFileSync(join('/tmp/ccpipe-merge-lease', owner), '');
    await store.put(MERGE_LEASE_KEY, lease({ ...here, owner, pidns: 'pid:[1]', pid: 1 }));
    await (await acquireMergeLease(store, { settleMs: 1 })).release();
    rmSync(join('/tmp/ccpipe-merge-lease', owner), { force: true });
    // this very pid in this namespace: a merge still running in this process
    await store.put(MERGE_LEASE_KEY, lease({ ...here, pid: process.pid }));
    await expect(acquireMergeLease(store, { settleMs: 1 })).rejects.toMatchObject({ code: 'CCP_ERR_MERGE_BUSY' });
    await store.put(MERGE_LEASE_KEY, lease({ ...here, pid: gone }));
    const mine = await acquireMergeLease(store, { settleMs: 1 });
    expect(JSON.parse(Buffer.from((await store.get(MERGE_LEASE_KEY))!).toString())).toMatchObject({ host: hostname(), pid: process.pid });
    await mine.release();
    expect(await store.get(MERGE_LEASE_KEY)).toBeNull();
  });

  it('a merge that could not renew its lease for three beats writes nothing more (assertHeld)', async () => {
    const inner = new MemoryObjectStore();
    let stalled = false;
    const store = Object.create(inner) as ObjectStore;
    store.get = async (key) => {
      if (stalled && key === MERGE_LEASE_KEY) await new Promise(() => undefined);
      return inner.get(key);
    };
    const held = await acquireMergeLease(store, { settleMs: 1, ttlMs: 80 }); // a beat every 20 ms
    held.assertHeld();
    stalled = true;
    await new Promise((r) => setTimeout(r, 150));
    expect(() => held.assertHeld()).toThrow(expect.objectContaining({ code: 'CCP_ERR_MERGE_BUSY' }));
    stalled = false;
    await held.release();
  });

  it('a stalled store gets one heartbeat at a time, and release does not wait on it for long', async () => {
    const inner = new MemoryObjectStore();
    let stall: Promise<void> | null = null;
    let reads = 0;
    const store = Object.create(inner) as ObjectStore;
    store.get = async (key) => {
      if (key === MERGE_LEASE_KEY) {
        reads++;
        if (stall !== null) await stall;
      }
      return inner.get(key);
    };
    const held = await acquireMergeLease(store, { settleMs: 1, ttlMs: 40 }); // a beat every 10 ms
    // the store stalls for 200 ms (≈ 20 beats' time): beats queued behind the stalled one would all run once it ends
    let answer!: () => void;
    stall = new Promise((r) => (answer = r));
    reads = 0;
    await new Promise((r) => setTimeout(r, 200));
    expect(reads).toBe(1);
    stall = null;
    answer();
    await new Promise((r) => setTimeout(r, 25));
    expect(reads).toBeLessThanOrEqual(4); // the stalled beat, then one every 10 ms
    // stalled for good: release does not wait for it
    stall = new Promise(() => undefined);
    await new Promise((r) => setTimeout(r, 30));
    const t0 = Date.now();
    await held.release();
    expect(Date.now() - t0).toBeLessThan(8_000);
  }, 15_000);

  it('a merge that lost its lease learns it at its next check, and does not delete the new holder', async () => {
    const store = new MemoryObjectStore();
    const held = await acquireMergeLease(store, { settleMs: 1, ttlMs: 60_000 });
    await held.check();
    await store.put(MERGE_LEASE_KEY, lease({})); // another merger took it over
    await expect(held.check()).rejects.toMatchObject({ code: 'CCP_ERR_MERGE_BUSY' });
    await held.release();
    expect(JSON.parse(Buffer.from((await store.get(MERGE_LEASE_KEY))!).toString())).toMatchObject({ owner: 'other' });
    await store.delete(MERGE_LEASE_KEY);
    const next = await acquireMergeLease(store, { settleMs: 1 });
    await next.release();
    expect(await store.get(MERGE_LEASE_KEY)).toBeNull();
  });
});

describe('runMerge under the lease', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccpipe-lease-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await closeDuckDbParquetEngine();
  });
  const opts = (store: ObjectStore, over: Partial<MergeOptions> = {}): MergeOptions => ({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 3, graceMs: 60_000, ...over });
  const manifest = async (store: ObjectStore): Promise<IndexManifest> => JSON.parse(Buffer.from((await store.get(indexLayout.manifest()))!).toString()) as IndexManifest;

  it('a second merger beside a running one is refused before it reads or writes anything', async () => {
    const store = new FsObjectStore({ root: dir });
    await putBatch(store, 1, 'b1', [partRow(1, 'https://one.example/', '20300101000000')]);
    await runMerge(opts(store));
    await putBatch(store, 1, 'b2', [partRow(1, 'https://two.example/', '20300101000000')]);
    await store.put(MERGE_LEASE_KEY, lease({}));
    await expect(runMerge(opts(store))).rejects.toMatchObject({ code: 'CCP_ERR_MERGE_BUSY' });
    const keys: string[] = [];
    for (const prefix of ['urls/', 'index/v000002/']) for await (const o of store.list(prefix)) if (o.key.includes('v000002')) keys.push(o.key);
    expect([(await manifest(store)).current, keys]).toEqual(['v000001', []]);
    await store.delete(MERGE_LEASE_KEY);
    expect(await runMerge(opts(store))).toMatchObject({ version: 'v000002', published: true });
    expect(await store.get(MERGE_LEASE_KEY)).toBeNull(); // released
  });

  it('a merger that stalled past the lease and lost it to another stops before it writes its index: the other one publishes a whole version', async () => {
    const raw = new FsObjectStore({ root: dir });
    await putBatch(raw, 1, 'b1', [partRow(1, 'https://one.example/', '20300101000000')]);
    await runMerge(opts(raw));
    await putBatch(raw, 1, 'b2', [partRow(1, 'https://two.example/', '20300101000000')]);
    // merger A stalls once it has written a lake file: every read of the lease (its heartbeat, its checks) waits
    let stall = false;
    let release!: () => void;
    const resumed = new Promise<void>((r) => (release = r));
    const a = Object.create(raw) as ObjectStore;
    a.put = async (key, data) => {
      await raw.put(key, data);
      if (key.startsWith('urls/')) stall = true;
    };
    a.get = async (key) => {
      if (stall && key === MERGE_LEASE_KEY) await resumed;
      return raw.get(key);
    };
    const merging = runMerge(opts(a, { leaseTtlMs: 400 })).then(() => null, (e: unknown) => e);
    const until = Date.now() + 20_000;
    while (!stall && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(stall).toBe(true);
    // merger B, once A's heartbeat is stale, with one more batch: it takes the lease over and publishes v000002
    await putBatch(raw, 1, 'b3', [partRow(1, 'https://three.example/', '20300101000000')]);
    await new Promise((r) => setTimeout(r, 600));
    expect(await runMerge(opts(raw, { leaseTtlMs: 400 }))).toMatchObject({ version: 'v000002', published: true, batches: 2 });
    release();
    expect(await merging).toMatchObject({ code: 'CCP_ERR_MERGE_BUSY' });
    // B's version is whole and current
    const m = await manifest(raw);
    expect(m.current).toBe('v000002');
    const v = await verifyVersion(raw, {});
    expect(v.problems).toEqual([]);
  });
});
