import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AmqpConnection, deleteTopology, topologyNames } from '@ccpipe/adapters';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { CC_MIRROR_DEV } from './corpus';
import { killAll, type CcpipeProcess } from './processes';

/** What a test file's own run of ccpipe processes uses: a queue prefix, a data dir and a mirror server of its own. */
export interface OwnRun {
  readonly prefix: string;
  /** Set by beforeAll. */
  data: string;
  mirror: MirrorServer;
  /** Processes the file started: killed after all its tests. */
  procs: CcpipeProcess[];
}

/**
 * Registers the file's beforeAll/afterAll: a fresh data dir and a mirror server over cc-mirror-dev before its tests;
 * after them, every process it started killed, its queues on the shared RabbitMQ deleted, the mirror closed and the
 * data dir removed. Call at the top level of a test file.
 */
export function ownRun(name: string): OwnRun {
  const run = { prefix: `ccpipe-${name}-${randomBytes(4).toString('hex')}`, data: '', mirror: undefined as unknown as MirrorServer, procs: [] as CcpipeProcess[] };
  beforeAll(async () => {
    run.data = await mkdtemp(join(tmpdir(), `ccpipe-${name}-`));
    run.mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
  });
  afterAll(async () => {
    await killAll(run.procs);
    const conn = new AmqpConnection({ url: 'amqp://guest:guest@127.0.0.1:5672', reconnect: { maxAttempts: 3 } });
    await conn.start();
    const ch = await conn.createChannel();
    await deleteTopology(ch, topologyNames(run.prefix)).catch(() => undefined);
    await ch.close().catch(() => undefined);
    await conn.close();
    await run.mirror?.close();
    if (run.data !== '') await rm(run.data, { recursive: true, force: true });
  });
  return run;
}

/** One of a test file's runs ({@link ownRuns}): a queue prefix and a data dir of its own, and the processes it started. */
export interface RunDirs {
  readonly prefix: string;
  readonly data: string;
  procs: CcpipeProcess[];
}

/**
 * For a file whose tests each want fresh runs: returns `newRun()`, which makes a queue prefix and a data dir each time;
 * after the file's tests, every process of every run is killed, their queues on the shared RabbitMQ deleted and their
 * data dirs removed. Call at the top level of a test file.
 */
export function ownRuns(name: string): () => Promise<RunDirs> {
  const runs: RunDirs[] = [];
  afterAll(async () => {
    for (const run of runs) await killAll(run.procs);
    const conn = new AmqpConnection({ url: 'amqp://guest:guest@127.0.0.1:5672', reconnect: { maxAttempts: 3 } });
    await conn.start();
    const ch = await conn.createChannel();
    for (const run of runs) await deleteTopology(ch, topologyNames(run.prefix)).catch(() => undefined);
    await ch.close().catch(() => undefined);
    await conn.close();
    for (const run of runs) await rm(run.data, { recursive: true, force: true });
  });
  return async () => {
    const run = { prefix: `ccpipe-${name}-${randomBytes(4).toString('hex')}`, data: await mkdtemp(join(tmpdir(), `ccpipe-${name}-`)), procs: [] };
    runs.push(run);
    return run;
  };
}
