import { join } from 'node:path';
import { CcpError, errorCode, type BatchConsumer, type Delivery, type ObjectStore } from '@ccpipe/core';
import { systemClock } from '@ccpipe/adapters';
import { mergeTaskLayout, runMergeTask, type AnyMergeTask, type AnyMergeTaskResult, type MergeTaskRunner } from './merge-task';
import { runStageTask } from './merge-stage';

/** Runs a task of either kind ({@link runMergeTask}, {@link runStageTask}) with a temp dir of its own under `tmpDir`. */
export async function runAnyMergeTask(store: ObjectStore, t: AnyMergeTask, opts: { tmpDir: string; dataDir?: string; memoryLimit?: string }): Promise<AnyMergeTaskResult> {
  const own = { ...opts, tmpDir: join(opts.tmpDir, `${t.run}-${t.n}`) };
  return t.kind === 'merge-stage' ? runStageTask(store, t, own) : runMergeTask(store, t, own);
}

/** Runs the tasks here, one after another: the coordinator is its own merge-worker. */
export function inProcessTaskRunner(store: ObjectStore, opts: { tmpDir: string; dataDir?: string; memoryLimit?: string }): MergeTaskRunner {
  return {
    run: async (tasks) => {
      const out: AnyMergeTaskResult[] = [];
      for await (const t of tasks) out.push(await runAnyMergeTask(store, t, opts));
      return out;
    },
  };
}

/** Publishes merge tasks durably (an AmqpBatchPublisher on the merge-task queue: it takes any JSON message with an id). */
export interface MergeTaskPublisher {
  publish(task: AnyMergeTask, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link queueTaskRunner}. */
export interface QueueTaskRunnerOptions {
  store: ObjectStore;
  /** A publisher per run (closed when the tasks are published). */
  publisher: () => MergeTaskPublisher;
  /** How often the store is looked at for results (default 500 ms). */
  pollMs?: number;
  /** How long a run waits for its last result before the merge fails (default 6 h). */
  timeoutMs?: number;
  /** Told each result as it comes (progress). */
  onResult?: (r: AnyMergeTaskResult, done: number, of: number) => void;
}

/**
 * Rounds of the coordinator's wait between listings of a whole run's folder (every 10 s at the default poll): the
 * results of merge-workers from before the results folder are found there. A whole run holds every task's inputs, a
 * listing that cost the coordinator ≈ 17 ms of CPU at a 5M-row merge's 220 files (FsObjectStore), on the cores the
 * merge-workers use.
 */
const WHOLE_RUN_EVERY = 20;

/**
 * The coordinator's runner of `ccpipe merge --distribute`: publishes each task of the feed on the merge-task queue as it
 * comes (confirmed), and meanwhile waits for each published task's result in the data store (`results/<n>.json`,
 * written last by the merge-worker). A task a merge-worker could not do for good (`results/<n>.error.json`, the task dead-lettered) fails
 * the merge with its code; so do the timeout and a feed that throws. Results come back in any order.
 */
export function queueTaskRunner(o: QueueTaskRunnerOptions): MergeTaskRunner {
  return {
    run: async (tasks, signal) => {
      const pending = new Map<string, AnyMergeTask>();
      const runs = new Set<string>();
      let published = 0;
      let fed = false;
      let feedError: { err: unknown } | null = null;
      // the feed is published as it comes (the coordinator is still exporting the next tasks); its failure is seen
      // by the next round of the wait below
      void (async () => {
        const pub = o.publisher();
        try {
          for await (const t of tasks) {
            await pub.publish(t, signal);
            pending.set(t.id, t);
            runs.add(t.run);
            published++;
          }
        } finally {
          await pub.close();
        }
        fed = true;
      })().catch((err: unknown) => {
        feedError = { err };
      });
      const results: AnyMergeTaskResult[] = [];
      const deadline = Date.now() + (o.timeoutMs ?? 6 * 3_600_000);
      /** The first of `keys` the last listing saw. */
      const seen = (present: ReadonlySet<string>, ...keys: string[]): string | null => keys.find((k) => present.has(k)) ?? null;
      for (let round = 1; ; round++) {
        if (feedError !== null) throw (feedError as { err: unknown }).err;
        // One listing of the run's results folder a round (not two GETs per pending task): then only what has come is
        // read. Every WHOLE_RUN_EVERY rounds the whole run's folder, for merge-workers that still write beside the task.
        const present = new Set<string>();
        const whole = round % WHOLE_RUN_EVERY === 0;
        if (pending.size > 0) {
          for (const run of runs) for await (const f of o.store.list(whole ? mergeTaskLayout.prefix(run) : mergeTaskLayout.results(run))) present.add(f.key);
        }
        for (const [id, t] of [...pending]) {
          const resultKey = seen(present, mergeTaskLayout.result(t.run, t.n), mergeTaskLayout.resultBefore34(t.run, t.n));
          const r = resultKey !== null ? await o.store.get(resultKey) : null;
          if (r !== null) {
            results.push(JSON.parse(Buffer.from(r).toString('utf8')) as AnyMergeTaskResult);
            pending.delete(id);
            o.onResult?.(results.at(-1)!, results.length, published);
            continue;
          }
          const errorKey = seen(present, mergeTaskLayout.error(t.run, t.n), mergeTaskLayout.errorBefore34(t.run, t.n));
          const e = errorKey !== null ? await o.store.get(errorKey) : null;
          if (e !== null) {
            const why = JSON.parse(Buffer.from(e).toString('utf8')) as { code?: string; message?: string };
            throw new CcpError('CCP_ERR_MERGE_TASK', `a merge task failed on a merge-worker: ${why.message ?? 'no message'}`, {
              retryable: false, detail: { task: t.id, code: why.code ?? null },
            });
          }
        }
        if (fed && pending.size === 0) return results;
        if (Date.now() > deadline) {
          throw new CcpError('CCP_ERR_MERGE_TASK', 'merge tasks did not report in time: are merge-workers running (ccpipe merge-worker)?', {
            retryable: true, detail: { pending: pending.size, of: published },
          });
        }
        await systemClock.sleep(o.pollMs ?? 500, signal);
      }
    },
  };
}

/** Parses a merge-task message. @throws CcpError CCP_ERR_BATCH_FORMAT (never retryable) for anything else */
export function decodeMergeTask(body: Uint8Array): AnyMergeTask {
  let t: AnyMergeTask;
  try {
    t = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as AnyMergeTask;
  } catch (cause) {
    throw new CcpError('CCP_ERR_BATCH_FORMAT', 'merge task message is not JSON', { retryable: false, cause });
  }
  const run = typeof t?.run === 'string' && /^v\d+\.[0-9a-f]+$/.test(t.run);
  const lake = t?.kind === 'merge-lake' && (t.v === 1 || (t.v === 2 && Array.isArray(t.stagedFrom))) && Number.isInteger(t.n) && Array.isArray(t.targets);
  const stage = t?.kind === 'merge-stage' && t.v === 2 && typeof t.n === 'string' && /^s\d+$/.test(t.n) && Array.isArray(t.parts) && Number.isInteger(t.firstF) && Array.isArray(t.groups);
  if (!run || !(lake || stage)) {
    throw new CcpError('CCP_ERR_BATCH_FORMAT', 'merge task message does not match the schema', { retryable: false });
  }
  return t;
}

/** Hooks of a merge-worker (closed-set labels only). */
export interface MergeWorkerEvents {
  onTaskDone?(e: { task: string; files: number; ms: number }): void;
  onTaskFailed?(e: { task: string | null; action: 'requeue' | 'dead-letter'; code: string; error: unknown }): void;
}

/** A running merge-worker. */
export interface RunningMergeWorker {
  /** Stops taking tasks, lets the one in hand finish, closes the consumer. */
  drain(): Promise<void>;
}

/**
 * `ccpipe merge-worker`: consumes merge tasks one at a time and runs each ({@link runMergeTask}) in a temp dir of its
 * own under `tmpDir`. Done → ack. A task that can never be done (not a task; its inputs gone; CCP_ERR_* not
 * retryable) → its `error.json` (when its run is still there) and the DLQ. Anything else → requeued after a pause (the
 * queue's delivery limit bounds the retries). A merge-worker killed mid-task leaves it unacked: the broker gives it
 * to another, which writes the same files.
 */
export async function startMergeWorker(
  consumer: BatchConsumer, store: ObjectStore, opts: { tmpDir: string; dataDir?: string; memoryLimit?: string; retryPauseMs?: number }, events: MergeWorkerEvents = {},
): Promise<RunningMergeWorker> {
  const inFlight = new Set<Promise<void>>();
  const handle = async (d: Delivery): Promise<void> => {
    const started = Date.now();
    let task: AnyMergeTask | null = null;
    try {
      task = decodeMergeTask(d.body);
      const r = await runAnyMergeTask(store, task, { tmpDir: opts.tmpDir, ...(opts.dataDir !== undefined && { dataDir: opts.dataDir }), ...(opts.memoryLimit !== undefined && { memoryLimit: opts.memoryLimit }) });
      events.onTaskDone?.({ task: task.id, files: 'outputs' in r ? r.outputs.length : r.entries.length, ms: Date.now() - started });
      await d.ack();
    } catch (error) {
      const code = errorCode(error);
      const forGood = error instanceof CcpError && !error.retryable;
      events.onTaskFailed?.({ task: task?.id ?? null, action: forGood ? 'dead-letter' : 'requeue', code, error });
      if (forGood) {
        if (task !== null && code !== 'CCP_ERR_MERGE_TASK_GONE' && (await store.head(mergeTaskLayout.task(task.run, task.n)).catch(() => null)) !== null) {
          await store.put(mergeTaskLayout.error(task.run, task.n), Buffer.from(JSON.stringify({ code, message: (error as Error).message }))).catch(() => undefined);
        }
        await d.deadLetter(code);
      } else {
        await systemClock.sleep(opts.retryPauseMs ?? 1_000).catch(() => undefined);
        await d.requeue();
      }
    }
  };
  await consumer.start((d) => {
    const p = handle(d).catch(() => undefined); // settling failed: the broker redelivers
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    return p;
  });
  return {
    drain: async () => {
      await consumer.stop();
      await Promise.allSettled([...inFlight]);
      await consumer.close();
    },
  };
}
