import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { CcpError, SearchError, parseSearchQuery, type ParsedQuery, type SearchErrorCode, type SearchRunnerCounters } from '@ccpipe/core';
import { DEFAULT_TIME_LIMIT_MS, checkOptions, type SearchOptions } from './open-search-shard';
import type { ShardsResult } from './search-shards';
import type { SearchReady, SearchReply, SearchRequest, SearchWorkerConfig, WireError } from './search-messages';

/** How long past a search's deadline the runner waits for its worker's answer before replacing the worker. */
export const DEFAULT_GRACE_MS = 250;
/** Shard files each worker keeps open when none is given. */
export const DEFAULT_MAX_OPEN_SHARDS = 256;

/** Options of {@link SearchRunner}. */
export interface SearchRunnerOptions {
  /** Worker threads, each running one search at a time; default 1. */
  threads?: number;
  /** Time limit of a search when `run` is given none; default {@link DEFAULT_TIME_LIMIT_MS}. */
  timeLimitMs?: number;
  /**
   * A worker that has not answered this long past its search's deadline (a query that reads long posting lists and
   * matches nothing checks no deadline) is given up on: the search fails, the worker is replaced. Default
   * {@link DEFAULT_GRACE_MS}.
   */
  graceMs?: number;
  /** Shard files each worker keeps open, least recently used closed first; default {@link DEFAULT_MAX_OPEN_SHARDS}. */
  maxOpenShards?: number;
  /**
   * Compiled worker script. Default: `search-worker.js` beside this file in dist/. When this file runs as TypeScript
   * source (jest), the default is `../dist/search-worker.js`, so tests need a build first: `npx tsc -b packages/search`.
   */
  workerPath?: string;
  /**
   * A replacement worker that cannot start (too many open files, no memory, its script briefly missing) is tried
   * again after this pause, doubling each time up to 30 s, for as long as it takes. Default 500 ms.
   */
  respawnDelayMs?: number;
}

/** Options of one {@link SearchRunner.run}: a search's options; the time limit counts from the call. */
export type SearchRunOptions = Omit<SearchOptions, 'deadline' | 'timeLimitMs'> & { timeLimitMs?: number };

/**
 * Counters since start, for metrics: the core's {@link SearchRunnerCounters} (an index source reports them). `failed`
 * counts searches that failed in or past a worker, timeouts included (refused queries and a closed runner are not
 * counted); `timeouts` those past their time limit (in the worker, waiting for one, or past the grace); `restarts`
 * workers replaced (past the grace, or died).
 */
export type SearchRunnerStats = SearchRunnerCounters;

interface Job {
  id: number;
  paths: readonly string[];
  query: ParsedQuery;
  opts: Omit<SearchOptions, 'deadline' | 'timeLimitMs'>;
  /** On this thread's `performance.now()` clock. */
  deadline: number;
  timeLimitMs: number;
  resolve(r: ShardsResult): void;
  reject(e: unknown): void;
  timer: NodeJS.Timeout | undefined;
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
}

const SEARCH_CODES: ReadonlySet<string> = new Set<SearchErrorCode>(['CCP_ERR_SEARCH_QUERY', 'CCP_ERR_SEARCH_TIMEOUT', 'CCP_ERR_SEARCH_SHARD']);

/** The worker script beside the compiled runner, or in ../dist when running from TypeScript source. */
export function defaultSearchWorkerPath(): string {
  return __filename.endsWith('.ts') ? join(__dirname, '../dist/search-worker.js') : join(__dirname, 'search-worker.js');
}

/**
 * Runs {@link searchShards} over shard files in worker threads, so SQLite never blocks the caller's event loop and a
 * search always ends. Each worker keeps shard files open (LRU, reopened when a file is replaced) and runs one search at
 * a time; searches wait in a FIFO queue, and the time limit counts from `run`, waiting included. A worker that has
 * not answered `graceMs` past the deadline is terminated (it exits when SQLite returns) and replaced at once; a worker
 * that dies is replaced too. A replacement that cannot start is tried again with backoff; a runner whose first
 * workers cannot start (no build, bad `workerPath`) fails every search with `CCP_ERR_SEARCH_WORKER`. Idle workers do
 * not keep the process alive.
 *
 * Lifecycle: `start()` (also implied by the first `run`), then `close()`, which is idempotent.
 */
export class SearchRunner {
  private readonly threads: number;
  private readonly timeLimitMs: number;
  private readonly graceMs: number;
  private readonly workerPath: string;
  private readonly respawnDelayMs: number;
  private readonly config: SearchWorkerConfig;
  private slots: Slot[] = [];
  private queue: Job[] = [];
  private seq = 0;
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  private broken: unknown;
  private readonly counts = { completed: 0, failed: 0, timeouts: 0, restarts: 0 };
  /** A worker has started since the runner did: a later start failure is the machine's moment, not a broken build. */
  private everReady = false;
  private respawnFailures = 0;
  private readonly respawnTimers = new Set<NodeJS.Timeout>();

  constructor(opts: SearchRunnerOptions = {}) {
    this.threads = Math.max(1, Math.floor(opts.threads ?? 1));
    this.timeLimitMs = opts.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS;
    this.graceMs = Math.max(0, opts.graceMs ?? DEFAULT_GRACE_MS);
    this.workerPath = opts.workerPath ?? defaultSearchWorkerPath();
    this.respawnDelayMs = opts.respawnDelayMs ?? 500;
    this.config = { maxOpenShards: Math.max(1, Math.floor(opts.maxOpenShards ?? DEFAULT_MAX_OPEN_SHARDS)) };
  }

  /**
   * Starts the workers; resolves once all are running. Idempotent.
   * @throws CcpError `CCP_ERR_SEARCH_WORKER` when a worker cannot start (bad workerPath, not built),
   *   `CCP_ERR_SEARCH_CLOSED` after `close()`.
   */
  start(): Promise<void> {
    if (this.closing) return Promise.reject(closedError());
    this.starting ??= Promise.all(
      Array.from({ length: this.threads }, () => {
        const slot = this.spawn();
        this.slots.push(slot);
        return slot.ready;
      }),
    ).then(
      () => undefined,
      (err: unknown) => {
        throw workerError('search worker failed to start', err);
      },
    );
    return this.starting;
  }

  /**
   * Searches the shard files at `paths` (a hit's `shard` is its index in `paths`) for the user's `query`, in a worker.
   * The query and options are checked here first: a bad one rejects before any worker is involved.
   * @throws SearchError `CCP_ERR_SEARCH_QUERY` (the query, or an option: see {@link parseSearchQuery} and
   *   {@link SearchOptions}), `CCP_ERR_SEARCH_TIMEOUT` (past the time limit: in the worker, while queued, or a
   *   worker that did not answer within the grace), `CCP_ERR_SEARCH_SHARD` (a file missing or not a shard);
   *   CcpError `CCP_ERR_SEARCH_WORKER` (the worker died, or workers cannot start), `CCP_ERR_SEARCH_CLOSED`; an
   *   unexpected failure in the worker (SQLite's own, say) as an Error with its message and `code`.
   */
  run(paths: readonly string[], query: string, opts: SearchRunOptions): Promise<ShardsResult> {
    if (this.closing) return Promise.reject(closedError());
    const t0 = performance.now();
    let parsed: ParsedQuery;
    const { timeLimitMs = this.timeLimitMs, deadline: _, ...rest } = opts as SearchOptions;
    try {
      parsed = parseSearchQuery(query);
      checkOptions(rest);
      if (!(timeLimitMs > 0 && Number.isFinite(timeLimitMs))) {
        throw new SearchError('CCP_ERR_SEARCH_QUERY', 'timeLimitMs must be a positive number', { detail: { reason: 'bad_option' } });
      }
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.broken) return Promise.reject(this.broken);
    if (!this.starting) this.start().catch(() => {}); // failures reach the job through `broken`
    return new Promise<ShardsResult>((resolve, reject) => {
      const job: Job = { id: ++this.seq, paths: [...paths], query: parsed, opts: rest, deadline: t0 + timeLimitMs, timeLimitMs, resolve, reject, timer: undefined };
      job.timer = setTimeout(() => this.onDeadline(job), Math.max(0, job.deadline - performance.now()));
      this.queue.push(job);
      this.pump();
    });
  }

  /** Counters since start. */
  stats(): SearchRunnerStats {
    return { ...this.counts, queued: this.queue.length, busy: this.slots.filter((s) => s.job).length };
  }

  /**
   * Terminates the workers; queued and running searches fail with `CCP_ERR_SEARCH_CLOSED`. Resolves when idle workers
   * have exited (a worker inside a SQLite call exits when the call returns, unawaited). Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const t of this.respawnTimers) clearTimeout(t);
      this.respawnTimers.clear();
      const err = closedError();
      for (const job of this.queue.splice(0)) this.settle(job, err);
      const exits: Promise<number>[] = [];
      for (const slot of this.slots.splice(0)) {
        slot.dead = true;
        const busy = slot.job !== undefined;
        if (slot.job) this.settle(slot.job, err);
        slot.job = undefined;
        slot.worker.unref();
        const exit = slot.worker.terminate();
        if (!busy) exits.push(exit);
      }
      await Promise.all(exits);
    })();
    return this.closing;
  }

  private spawn(): Slot {
    const worker = new Worker(this.workerPath, { workerData: this.config });
    let markReady = (): void => {};
    let markFailed = (_err: unknown): void => {};
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    ready.catch(() => {}); // observed through start() or `broken`
    const slot: Slot = { worker, online: false, ready, markReady, markFailed, dead: false, job: undefined };
    worker.unref();
    worker.on('message', (msg: SearchReply | SearchReady) => {
      if ('ready' in msg) this.onReady(slot);
      else this.onReply(slot, msg);
    });
    worker.on('error', (err) => this.onDeath(slot, err));
    worker.on('exit', (code) => this.onDeath(slot, new Error(`worker exited with code ${code}`)));
    return slot;
  }

  private onReady(slot: Slot): void {
    if (slot.dead) return;
    slot.online = true;
    this.everReady = true;
    this.respawnFailures = 0;
    slot.markReady();
    this.pump();
  }

  /** Gives idle workers the next searches; a search whose time is already up fails instead. */
  private pump(): void {
    if (this.closing) return;
    for (const slot of this.slots) {
      if (!slot.online || slot.dead || slot.job) continue;
      let job: Job | undefined;
      while ((job = this.queue.shift()) && job.deadline <= performance.now()) this.settle(job, timeoutError(job));
      if (!job) return;
      slot.job = job;
      slot.worker.ref();
      const req: SearchRequest = { id: job.id, paths: job.paths, query: job.query, opts: job.opts, budgetMs: job.deadline - performance.now() };
      slot.worker.postMessage(req);
    }
  }

  /** A search's time is up: a queued one fails now; a running one gets `graceMs` more to answer. */
  private onDeadline(job: Job): void {
    const qi = this.queue.indexOf(job);
    if (qi >= 0) {
      this.queue.splice(qi, 1);
      this.settle(job, timeoutError(job));
      return;
    }
    const slot = this.slots.find((s) => s.job === job);
    if (slot) job.timer = setTimeout(() => this.onOverrun(slot, job), this.graceMs);
  }

  /** A worker still inside a search past the grace: the search fails and the worker is replaced. */
  private onOverrun(slot: Slot, job: Job): void {
    if (slot.dead || slot.job !== job) return;
    this.replace(slot, timeoutError(job));
  }

  private onReply(slot: Slot, reply: SearchReply): void {
    const job = slot.job;
    if (slot.dead || !job || job.id !== reply.id) return; // a terminated worker's late answer
    slot.job = undefined;
    slot.worker.unref();
    if (reply.ok) this.settle(job, undefined, reply.result);
    else this.settle(job, fromWire(reply.error));
    this.pump();
  }

  private onDeath(slot: Slot, err: unknown): void {
    if (slot.dead || this.closing) return;
    if (!slot.online) this.startFailed(slot, err);
    else this.replace(slot, workerError('search worker died', err));
  }

  /**
   * A worker in `slot` died before it was ready. After the runner has run (descriptors, memory, a deploy swapping
   * files) it is tried again with backoff while searches wait (and time out); a runner that never ran (a missing or
   * broken worker script: respawning would loop) cannot search, and every search fails.
   */
  private startFailed(slot: Slot, err: unknown): void {
    slot.dead = true;
    slot.markFailed(err);
    if (this.everReady) {
      const t = setTimeout(() => {
        this.respawnTimers.delete(t);
        if (!this.closing) this.respawn(slot);
      }, Math.min(30_000, this.respawnDelayMs * 2 ** this.respawnFailures++));
      t.unref();
      this.respawnTimers.add(t);
      return;
    }
    this.broken = workerError('search workers cannot start', err);
    for (const job of this.queue.splice(0)) this.settle(job, this.broken);
  }

  /** Fails the slot's search (if any) with `err`, terminates its worker and puts a fresh one in its place. */
  private replace(slot: Slot, err: unknown): void {
    if (slot.dead) return;
    slot.dead = true;
    if (slot.job) this.settle(slot.job, err);
    slot.job = undefined;
    slot.worker.unref();
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

  private settle(job: Job, err: unknown, result?: ShardsResult): void {
    clearTimeout(job.timer);
    job.timer = undefined;
    if (err === undefined) {
      this.counts.completed++;
      job.resolve(result as ShardsResult);
      return;
    }
    if ((err as { code?: unknown }).code !== 'CCP_ERR_SEARCH_CLOSED') this.counts.failed++;
    if (err instanceof SearchError && err.code === 'CCP_ERR_SEARCH_TIMEOUT') this.counts.timeouts++;
    job.reject(err);
  }
}

function timeoutError(job: Job): SearchError {
  return new SearchError('CCP_ERR_SEARCH_TIMEOUT', 'the search ran past its time limit', { detail: { timeLimitMs: job.timeLimitMs } });
}

function workerError(message: string, cause: unknown): CcpError {
  const code = (cause as { code?: unknown } | null)?.code;
  return new CcpError('CCP_ERR_SEARCH_WORKER', message, { cause, detail: typeof code === 'string' ? { errorCode: code } : {} });
}

function closedError(): CcpError {
  return new CcpError('CCP_ERR_SEARCH_CLOSED', 'the search runner is closed');
}

/** A worker's error as thrown here: a SearchError for the search codes, else an Error with the worker's message and code. */
function fromWire(e: WireError): Error {
  if (e.code !== undefined && SEARCH_CODES.has(e.code)) return new SearchError(e.code as SearchErrorCode, e.message, e.detail ? { detail: e.detail } : {});
  return Object.assign(new Error(e.message), e.code === undefined ? {} : { code: e.code });
}
