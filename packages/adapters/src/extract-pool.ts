import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ExtractError, type DomImpl, type ExtractErrorCode, type Extracted } from '@ccpipe/core';
import type { ExtractReady, ExtractReply, ExtractRequest, ExtractWorkerConfig } from './extract-messages';

/** Options of {@link ExtractionPool}. */
export interface ExtractionPoolOptions {
  /** Worker threads; default 1. */
  size?: number;
  /** Per-document time limit; past it the worker is killed and replaced. Default 5,000 ms. */
  timeoutMs?: number;
  /**
   * A document that ran past `timeoutMs` is tried once more, first in the queue, with this limit before it fails
   * with `CCP_ERR_EXTRACT_TIMEOUT`: on a busy machine a page that takes 2 s alone ran past a 10 s limit. Default
   * 3 × `timeoutMs`; 0 turns the retry off.
   */
  retryTimeoutMs?: number;
  /** Told how each retried document ended (once per retry), for metrics. Must not throw. */
  onTimeoutRetry?: (outcome: TimeoutRetryOutcome) => void;
  /** DOM for Readability; default `linkedom`. */
  dom?: DomImpl;
  /** Passed to extractDocument (defaults there: 2 MiB, 100,000 elements, depth 128, 1,000 links). */
  maxBytes?: number;
  maxElements?: number;
  maxDepth?: number;
  maxOutlinks?: number;
  /** Passed to extractDocument: `false` keeps Readability's article text as it is (default true: boilerplate dropped). */
  boilerplate?: boolean;
  /** Worker heap cap; a worker over it dies and its document fails with `CCP_ERR_EXTRACT_WORKER`. Default 512. */
  maxOldGenerationSizeMb?: number;
  /** Worker young-generation cap; unset leaves V8's default. */
  maxYoungGenerationSizeMb?: number;
  /** Worker stack; default 4 (Node's default). */
  stackSizeMb?: number;
  /**
   * Compiled worker script. Default: `extract-worker.js` beside this file in dist/. When this file
   * runs as TypeScript source (jest), the default is `../dist/extract-worker.js`, so tests need a
   * build first: `npx tsc -b packages/adapters`.
   */
  workerPath?: string;
  /**
   * A replacement worker that cannot start (too many open files, no memory, its script briefly missing) is tried
   * again after this pause, doubling each time (capped at 30 s), up to 5 times in a row; then the pool is
   * unavailable. Default 500 ms.
   */
  respawnDelayMs?: number;
}

/** Replacement workers in a row that may fail to start before the pool gives up (`CCP_ERR_EXTRACT_UNAVAILABLE`). */
export const MAX_RESPAWN_FAILURES = 5;

/**
 * How a document retried after a timeout ended: extracted, timed out again, or failed otherwise (its page refused,
 * its worker died, aborted, pool closed). A closed set, safe as a metric label.
 */
export type TimeoutRetryOutcome = 'ok' | 'timeout' | 'failed';

/** Counters since start, for metrics. */
export interface ExtractionPoolStats {
  completed: number;
  failed: number;
  /** Attempts that ran past their limit (a retried document that times out again counts twice). */
  timeouts: number;
  /** Retried documents by how they ended. */
  retried: Record<TimeoutRetryOutcome, number>;
  restarts: number;
  queued: number;
  busy: number;
}

interface Job {
  id: number;
  /** What the worker script is sent, besides the id: `{html, url}` for {@link ExtractionPool.extract}. */
  message: Record<string, unknown>;
  resolve(v: unknown): void;
  reject(e: unknown): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** True once the document timed out and was queued again with the retry limit. */
  retried: boolean;
}

interface Slot {
  worker: Worker;
  /** True once the worker has loaded its modules (its `ready` message). */
  online: boolean;
  /** Settles when the worker is ready, or fails if it dies first. */
  ready: Promise<void>;
  markReady(): void;
  markFailed(err: unknown): void;
  dead: boolean;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** The worker script beside the compiled pool, or in ../dist when running from TypeScript source. */
export function defaultExtractWorkerPath(): string {
  return __filename.endsWith('.ts') ? join(__dirname, '../dist/extract-worker.js') : join(__dirname, 'extract-worker.js');
}

/**
 * Runs extractDocument() in worker threads with a heap cap and a per-document time limit. A document
 * that runs past `timeoutMs` is tried once more with `retryTimeoutMs` (default 3×) and then fails with
 * `CCP_ERR_EXTRACT_TIMEOUT`; each time its worker is terminated and replaced and the pool keeps serving. A worker that dies (heap cap, crash) fails its document with
 * `CCP_ERR_EXTRACT_WORKER` and is replaced too; a replacement that cannot start is tried again with backoff, and a
 * pool whose workers cannot start at all fails every document with `CCP_ERR_EXTRACT_UNAVAILABLE` (not a document
 * failure: the caller should stop). Documents wait in an unbounded FIFO queue: bound
 * concurrency in the caller. Idle workers do not keep the process alive.
 *
 * Lifecycle: `start()` (also implied by the first `extract`), then `close()`, which is idempotent.
 */
export class ExtractionPool {
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly retryTimeoutMs: number;
  private readonly onTimeoutRetry: ((outcome: TimeoutRetryOutcome) => void) | undefined;
  private readonly retried: Record<TimeoutRetryOutcome, number> = { ok: 0, timeout: 0, failed: 0 };
  private readonly workerPath: string;
  private readonly config: ExtractWorkerConfig;
  private readonly limits: NonNullable<ConstructorParameters<typeof Worker>[1]>['resourceLimits'];
  private slots: Slot[] = [];
  private queue: Job[] = [];
  private seq = 0;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private broken: unknown;
  private readonly counts = { completed: 0, failed: 0, timeouts: 0, restarts: 0 };
  private readonly respawnDelayMs: number;
  /** A worker has started since the pool did: a later start failure is the machine's moment, not a broken build. */
  private everReady = false;
  private respawnFailures = 0;
  private readonly respawnTimers = new Set<NodeJS.Timeout>();

  constructor(opts: ExtractionPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(opts.size ?? 1));
    this.timeoutMs = opts.timeoutMs ?? 5_000;
    this.retryTimeoutMs = Math.max(0, opts.retryTimeoutMs ?? 3 * this.timeoutMs);
    this.onTimeoutRetry = opts.onTimeoutRetry;
    this.respawnDelayMs = opts.respawnDelayMs ?? 500;
    this.workerPath = opts.workerPath ?? defaultExtractWorkerPath();
    const options: ExtractWorkerConfig['options'] = { dom: opts.dom ?? 'linkedom' };
    if (opts.maxBytes !== undefined) options.maxBytes = opts.maxBytes;
    if (opts.maxElements !== undefined) options.maxElements = opts.maxElements;
    if (opts.maxDepth !== undefined) options.maxDepth = opts.maxDepth;
    if (opts.maxOutlinks !== undefined) options.maxOutlinks = opts.maxOutlinks;
    if (opts.boilerplate !== undefined) options.boilerplate = opts.boilerplate;
    this.config = { options };
    this.limits = {
      maxOldGenerationSizeMb: opts.maxOldGenerationSizeMb ?? 512,
      stackSizeMb: opts.stackSizeMb ?? 4,
      ...(opts.maxYoungGenerationSizeMb === undefined ? {} : { maxYoungGenerationSizeMb: opts.maxYoungGenerationSizeMb }),
    };
  }

  /**
   * Starts the workers; resolves once all are running. Idempotent.
   * @throws ExtractError `CCP_ERR_EXTRACT_WORKER` when a worker cannot start (bad workerPath, not built).
   */
  start(): Promise<void> {
    if (this.closing) return Promise.reject(this.closedError());
    this.starting ??= Promise.all(
      Array.from({ length: this.size }, () => {
        const slot = this.spawn();
        this.slots.push(slot);
        return slot.ready;
      }),
    ).then(
      () => undefined,
      (err: unknown) => {
        throw this.workerError('extraction worker failed to start', err);
      },
    );
    return this.starting;
  }

  /**
   * Extracts one page in a worker. Starts the pool if needed.
   * @throws ExtractError with the code extractDocument throws, or `CCP_ERR_EXTRACT_TIMEOUT`,
   *   `CCP_ERR_EXTRACT_WORKER`, `CCP_ERR_EXTRACT_ABORTED` (signal fired), `CCP_ERR_EXTRACT_CLOSED`.
   */
  extract(html: string, url: string, signal?: AbortSignal): Promise<Extracted> {
    return this.request<Extracted>({ html, url } satisfies Omit<ExtractRequest, 'id'>, signal);
  }

  /**
   * Runs one request of a worker script of the caller's (`workerPath`) that speaks the pool's protocol (a `ready`
   * message, then one {@link ExtractReply} per request, its `result` whatever the script answers) — the worker's page
   * thread, which is sent a WARC record's bytes instead of a page — with the same queue, time limit, retry, abort and
   * replacement of dead workers as {@link extract}. `message` is posted as `{id, ...message}` (structured clone; posted
   * again when the request is retried after a timeout, so nothing in it may be transferred).
   * @throws ExtractError as {@link extract}: a reply with `ok: false` becomes an ExtractError with its code.
   */
  request<T>(message: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
    if (this.closing) return Promise.reject(this.closedError());
    if (this.broken) return Promise.reject(this.broken);
    if (signal?.aborted) return Promise.reject(abortedError());
    if (!this.starting) this.start().catch(() => {}); // failures reach the job through `broken`
    return new Promise<T>((resolve, reject) => {
      const job: Job = { id: ++this.seq, message, resolve: resolve as (v: unknown) => void, reject, signal, onAbort: undefined, retried: false };
      if (signal) {
        job.onAbort = () => this.abort(job);
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /** Counters since start. */
  stats(): ExtractionPoolStats {
    return { ...this.counts, retried: { ...this.retried }, queued: this.queue.length, busy: this.slots.filter((s) => s.job).length };
  }

  /** Terminates the workers; queued and running documents fail with `CCP_ERR_EXTRACT_CLOSED`. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const t of this.respawnTimers) clearTimeout(t);
      this.respawnTimers.clear();
      const err = this.closedError();
      for (const job of this.queue.splice(0)) this.settle(job, err);
      const slots = this.slots.splice(0);
      await Promise.all(
        slots.map(async (slot) => {
          slot.dead = true;
          if (slot.timer) clearTimeout(slot.timer);
          if (slot.job) this.settle(slot.job, err);
          slot.job = undefined;
          await slot.worker.terminate();
        }),
      );
    })();
    return this.closing;
  }

  private spawn(): Slot {
    const worker = new Worker(this.workerPath, { workerData: this.config, resourceLimits: this.limits });
    let markReady = (): void => {};
    let markFailed = (_err: unknown): void => {};
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    ready.catch(() => {}); // observed through start() or `broken`
    const slot: Slot = { worker, online: false, ready, markReady, markFailed, dead: false, job: undefined, timer: undefined };
    worker.unref();
    worker.on('message', (msg: ExtractReply<unknown> | ExtractReady) => {
      if ('ready' in msg) {
        slot.online = true;
        this.everReady = true;
        this.respawnFailures = 0;
        slot.markReady();
        this.pump();
      } else this.onReply(slot, msg);
    });
    worker.on('error', (err) => this.onDeath(slot, err));
    worker.on('exit', (code) => this.onDeath(slot, new Error(`worker exited with code ${code}`)));
    return slot;
  }

  private pump(): void {
    if (this.closing) return;
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (!slot.online || slot.dead || slot.job) continue;
      const job = this.queue.shift() as Job;
      slot.job = job;
      slot.timer = setTimeout(() => this.onTimeout(slot, job), job.retried ? this.retryTimeoutMs : this.timeoutMs);
      slot.worker.ref();
      slot.worker.postMessage({ ...job.message, id: job.id });
    }
  }

  /**
   * A document ran past its limit: its worker is replaced either way. The first time, the document goes back to the
   * front of the queue with the retry limit (the machine may have been busy); the second time it fails.
   */
  private onTimeout(slot: Slot, job: Job): void {
    if (slot.dead || slot.job !== job) return;
    this.counts.timeouts++;
    if (!job.retried && this.retryTimeoutMs > 0) {
      job.retried = true;
      slot.job = undefined; // kept out of replace(): it is not settled
      this.replace(slot, undefined);
      this.queue.unshift(job);
      this.pump();
      return;
    }
    this.replace(slot, new ExtractError('CCP_ERR_EXTRACT_TIMEOUT', 'document took longer than the time limit', {
      detail: job.retried ? { timeoutMs: this.timeoutMs, retryTimeoutMs: this.retryTimeoutMs } : { timeoutMs: this.timeoutMs },
    }));
  }

  private onReply(slot: Slot, reply: ExtractReply<unknown>): void {
    const job = slot.job;
    if (slot.dead || !job || job.id !== reply.id) return;
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.timer = undefined;
    slot.worker.unref();
    if (reply.ok) {
      this.counts.completed++;
      this.settle(job, undefined, reply.result);
    } else {
      const { code, message, detail } = reply.error;
      this.settle(job, new ExtractError(code, message, detail ? { detail } : {}));
    }
    this.pump();
  }

  private onDeath(slot: Slot, err: unknown): void {
    if (slot.dead || this.closing) return;
    if (!slot.online) {
      slot.dead = true;
      slot.markFailed(err);
      this.startFailed(slot, err);
      return;
    }
    this.replace(slot, this.workerError('extraction worker died', err));
  }

  /**
   * A worker in `slot` died before it was ready. After the pool has run (descriptors, memory, a deploy swapping
   * files) it is tried again with backoff while its documents wait; a pool that never ran (a missing or broken
   * worker script: respawning would loop), or whose replacements keep failing, cannot extract here, and every
   * document fails with a code the worker treats as a failure of the machine.
   */
  private startFailed(slot: Slot, err: unknown): void {
    if (this.everReady && ++this.respawnFailures <= MAX_RESPAWN_FAILURES) {
      const t = setTimeout(() => {
        this.respawnTimers.delete(t);
        if (!this.closing) this.respawn(slot);
      }, Math.min(30_000, this.respawnDelayMs * 2 ** (this.respawnFailures - 1)));
      this.respawnTimers.add(t);
      return;
    }
    // other workers still running carry on with a smaller pool; with none left, extraction cannot run here
    if (this.everReady && this.slots.some((s) => s.online && !s.dead)) {
      this.slots = this.slots.filter((s) => s !== slot);
      this.respawnFailures = 0; // the next slot that fails to start gets its own tries
      return;
    }
    this.broken = new ExtractError('CCP_ERR_EXTRACT_UNAVAILABLE', 'extraction workers cannot start', {
      cause: err, detail: { respawnFailures: this.respawnFailures },
    });
    for (const job of this.queue.splice(0)) this.settle(job, this.broken);
  }

  /** Fails the slot's document (if any) with `err`, kills its worker and puts a fresh one in its place. */
  private replace(slot: Slot, err: unknown): void {
    if (slot.dead) return;
    slot.dead = true;
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.job) this.settle(slot.job, err);
    slot.job = undefined;
    void slot.worker.terminate();
    if (this.closing) return;
    this.counts.restarts++;
    this.respawn(slot);
  }

  /** Puts a fresh worker in `slot`'s place; one that cannot even be created (no descriptors, no memory) is a failed start. */
  private respawn(slot: Slot): void {
    let fresh: Slot;
    try {
      fresh = this.spawn();
    } catch (e) {
      this.startFailed(slot, e);
      return;
    }
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots[i] = fresh;
    else this.slots.push(fresh);
  }

  private abort(job: Job): void {
    const qi = this.queue.indexOf(job);
    if (qi >= 0) {
      this.queue.splice(qi, 1);
      this.settle(job, abortedError());
      return;
    }
    const slot = this.slots.find((s) => s.job === job);
    if (slot) this.replace(slot, abortedError());
  }

  private settle(job: Job, err: unknown, result?: unknown): void {
    if (job.signal && job.onAbort) job.signal.removeEventListener('abort', job.onAbort);
    job.onAbort = undefined;
    if (job.retried) {
      const outcome: TimeoutRetryOutcome = err === undefined ? 'ok' : err instanceof ExtractError && err.code === 'CCP_ERR_EXTRACT_TIMEOUT' ? 'timeout' : 'failed';
      this.retried[outcome]++;
      this.onTimeoutRetry?.(outcome);
    }
    if (err === undefined) job.resolve(result);
    else {
      if (err instanceof ExtractError && err.code !== 'CCP_ERR_EXTRACT_CLOSED' && err.code !== 'CCP_ERR_EXTRACT_ABORTED') {
        this.counts.failed++;
      }
      job.reject(err);
    }
  }

  private workerError(message: string, cause: unknown): ExtractError {
    const code = (cause as { code?: unknown } | null)?.code;
    return new ExtractError('CCP_ERR_EXTRACT_WORKER', message, {
      cause,
      detail: typeof code === 'string' ? { errorCode: code } : {},
    });
  }

  private closedError(): ExtractError {
    return new ExtractError('CCP_ERR_EXTRACT_CLOSED' satisfies ExtractErrorCode, 'extraction pool is closed');
  }
}

function abortedError(): ExtractError {
  return new ExtractError('CCP_ERR_EXTRACT_ABORTED', 'extraction aborted by the caller');
}
