import { basename, dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { BuildShardOptions, BuildShardResult, SearchDoc } from './build-search-shard';

/** A message to a build thread (build-worker.ts). */
export type BuildRequest =
  | { type: 'begin'; id: number; path: string; opts: BuildShardOptions }
  | { type: 'docs'; id: number; docs: SearchDoc[] }
  | { type: 'end'; id: number }
  | { type: 'abort'; id: number };

/** A build thread's answer to one request. */
export type BuildReply =
  | { type: 'ack'; id: number }
  | { type: 'done'; id: number; result: BuildShardResult }
  | { type: 'error'; id: number; name: string; message: string };

/** Options of {@link ShardBuildPool}. */
export interface ShardBuildPoolOptions {
  /** Build threads; default 1. */
  threads?: number;
  /** Documents per message (and per SQLite transaction); default 1,000. */
  batch?: number;
  /**
   * Compiled thread script. Default: `build-worker.js` beside this file in dist/; when this file runs as TypeScript
   * source (jest), `../dist/build-worker.js`, so tests need `npx tsc -b packages/search` first.
   */
  workerPath?: string;
}

/** Batches a build may have sent and not yet seen acknowledged: bounds the memory of a reader faster than SQLite. */
const WINDOW = 2;

interface Slot {
  worker: Worker;
  busy: boolean;
  /** Reply handlers of the build running on it, by request order. */
  waiting: { resolve(r: BuildReply): void; reject(e: unknown): void }[];
}

/**
 * Builds search shards on worker threads, so a caller reading the documents (the merge, from DuckDB) keeps its own
 * thread and several shards are built at once. `build()` streams the documents to a free thread in batches, at most
 * two unacknowledged (memory stays a few batches whatever the shard's size), and resolves with what
 * `buildSearchShard` would. A build that fails (a bad document, SQLite) rejects and leaves no file; a thread that
 * dies rejects its build and is replaced. `close()` ends the threads; builds then running reject.
 */
export class ShardBuildPool {
  private readonly slots: Slot[] = [];
  private readonly queue: ((s: Slot) => void)[] = [];
  private readonly batch: number;
  private readonly workerPath: string;
  private nextId = 1;
  private closed = false;

  constructor(opts: ShardBuildPoolOptions = {}) {
    this.batch = opts.batch ?? 1000;
    this.workerPath = opts.workerPath ?? (basename(__dirname) === 'dist' ? join(__dirname, 'build-worker.js') : join(dirname(__dirname), 'dist', 'build-worker.js'));
    for (let i = 0; i < Math.max(1, opts.threads ?? 1); i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const slot: Slot = { worker: new Worker(this.workerPath), busy: false, waiting: [] };
    slot.worker.on('message', (r: BuildReply) => slot.waiting.shift()?.resolve(r));
    const died = (err: unknown): void => {
      for (const w of slot.waiting.splice(0)) w.reject(err);
      if (this.closed) return;
      const i = this.slots.indexOf(slot);
      if (i >= 0) {
        const fresh = this.spawn();
        fresh.busy = slot.busy;
        this.slots[i] = fresh;
      }
    };
    slot.worker.on('error', died);
    slot.worker.on('exit', (code) => died(new Error(`a search shard build thread exited (code ${code})`)));
    return slot;
  }

  private take(): Promise<Slot> {
    if (this.closed) return Promise.reject(new Error('the shard build pool is closed'));
    const free = this.slots.find((s) => !s.busy);
    if (free) {
      free.busy = true;
      return Promise.resolve(free);
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  private give(index: number): void {
    const slot = this.slots[index];
    if (slot === undefined) return;
    const next = this.queue.shift();
    if (next) next(slot);
    else slot.busy = false;
  }

  /** Sends one request; resolves with its reply (a thread answers in order). */
  private ask(slot: Slot, m: BuildRequest): Promise<BuildReply> {
    return new Promise((resolve, reject) => {
      slot.waiting.push({ resolve, reject });
      slot.worker.postMessage(m);
    });
  }

  /** Builds the shard of `docs` at `path` on a pool thread (see the class). @throws what the build threw, or that its thread died */
  async build(path: string, docs: Iterable<SearchDoc> | AsyncIterable<SearchDoc>, opts: BuildShardOptions = {}): Promise<BuildShardResult> {
    const slot = await this.take();
    const index = this.slots.indexOf(slot);
    const id = this.nextId++;
    const check = (r: BuildReply): BuildReply => {
      if (r.type === 'error') throw Object.assign(new Error(r.message), { name: r.name });
      return r;
    };
    const sent: Promise<BuildReply>[] = [];
    try {
      check(await this.ask(slot, { type: 'begin', id, path, opts }));
      let batch: SearchDoc[] = [];
      const send = async (): Promise<void> => {
        sent.push(this.ask(slot, { type: 'docs', id, docs: batch }));
        batch = [];
        if (sent.length > WINDOW) check(await sent.shift()!);
      };
      for await (const d of docs as AsyncIterable<SearchDoc>) {
        batch.push(d);
        if (batch.length >= this.batch) await send();
      }
      if (batch.length > 0) await send();
      while (sent.length > 0) check(await sent.shift()!);
      const done = check(await this.ask(slot, { type: 'end', id }));
      return (done as Extract<BuildReply, { type: 'done' }>).result;
    } catch (err) {
      // replies still due are drained (the thread answers every request) before the thread serves another build
      await Promise.allSettled(sent);
      if (!this.closed) slot.worker.postMessage({ type: 'abort', id } satisfies BuildRequest);
      throw err;
    } finally {
      this.give(index);
    }
  }

  /** Ends the threads; idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
