import { join } from 'node:path';
import { mkdir, readFile, rm } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { CcpError, type ObjectStore } from '@ccpipe/core';
import { ShardBuildPool } from '@ccpipe/search';
import { NEW_FACTS, type FactsColumns } from './domain-facts';
import { openDuck, sqlList, sqlString } from './duck';
import type { LakeFileEntry } from './format';
import { fencedStore } from './fenced-store';
import { openLocalInputs, type LocalInputs } from './local-inputs';
import { NEW_POSTINGS, writeLake, type LakeTarget, type OldLakeFile } from './lake-write';
import { buildSearchShardOf, type SearchShardEntry } from './search-index';
import type { StageTask, StageTaskResult } from './merge-stage';

/**
 * Merge across machines (docs/merge-tasks.md). The lake-writing step of a merge — one group of partitions (dataset ×
 * domain prefix) at a time, {@link writeLake} — is a task any process can do: the coordinator (the merge) stages the
 * new rows, decides superseded rows and the runs each new file folds in, and hands each group over as a
 * {@link MergeTask}: the group's staged rows and superseded/stripped row lists as Parquet in the data store, the runs
 * to fold by key. A merge-worker runs it ({@link runMergeTask}) in a DuckDB of its own, writes the group's lake files
 * (and locators) under the new version's keys, and the domain postings and facts of those files back to the store
 * ({@link MergeTaskResult}); the coordinator loads them ({@link loadMergeTaskResult}) exactly as an in-process
 * writeLake would have left them, and builds the index and publishes the version as before. Same inputs, same SQL,
 * one thread: the lake files are byte for byte the in-process ones.
 */
export interface MergeTask {
  /** 1: `staged` is the group's one file; 2: the group's rows are in `stagedFrom`, written by stage tasks (merge-stage.ts). */
  v: 1 | 2;
  kind: 'merge-lake';
  /** `<run>/<n>`: also the message id. */
  id: string;
  /** The merge run the task belongs to: its version and a nonce (`v000007.3fa2c1d0`); names where its files live. */
  run: string;
  n: number;
  targets: TaskTarget[];
  /** Store key of the group's staged new rows (temp table `staged`, every column); null when no target has new rows. */
  staged: string | null;
  /** The files of the group's staged rows that stage tasks wrote (v 2, instead of `staged`). */
  stagedFrom?: string[];
  /** Store key of the rows of temp tables lose_old and strip_old naming the group's old runs (column `t`: 0 lose, 1 strip). */
  rowLists: string | null;
  columns: string[];
  rowGroupSize: number;
  compressionLevel: number;
  parquetVersion: 'V1' | 'V2';
  dropText: boolean;
  facts: FactsColumns | null;
  /**
   * The search shards of the files written are built by the task too (search-index.ts), `languages` saying whether the
   * lake has that column; absent or null: the coordinator builds none here (search off, or a lake without text).
   */
  search?: { languages: boolean } | null;
}

/** A partition of a task: {@link LakeTarget} with its runs named by store key instead of local path. */
export interface TaskTarget {
  datasetId: number;
  prefix: string;
  key: string;
  fresh: boolean;
  old: TaskRun[];
  keep: TaskRun[];
}

interface TaskRun {
  key: string;
  rows: number;
  fileId: number;
  stripText?: boolean;
  datasetId: number;
  prefix: string;
}

/** What a merge-worker reports: the lake files written, and where their postings and facts are. */
export interface MergeTaskResult {
  v: 1;
  id: string;
  entries: LakeFileEntry[];
  /** Store key of the new_postings rows of the files written (Parquet). */
  postings: string;
  /** Store key of the new_facts rows (Parquet); null without facts. */
  facts: string | null;
  /** The search shards of the files written, when the task asked for them. */
  search?: SearchShardEntry[];
}

/**
 * Where a merge run's tasks keep their inputs and results: `merge-tasks/<run>/<n>/…` (the run's folder is deleted once
 * the merge ends, published or not). `task.json` is the task itself: a merge-worker writes lake files only while it is
 * there, so a task of a merge that failed meanwhile cannot write over a later merge's files of the same version.
 */
export const mergeTaskLayout = {
  prefix: (run: string): string => `merge-tasks/${run}/`,
  /** `n`: a lake task's number, or a stage task's `s<m>` (merge-stage.ts). */
  task: (run: string, n: number | string): string => `merge-tasks/${run}/${n}/task.json`,
  staged: (run: string, n: number): string => `merge-tasks/${run}/${n}/staged.parquet`,
  rowLists: (run: string, n: number): string => `merge-tasks/${run}/${n}/rows.parquet`,
  postings: (run: string, n: number): string => `merge-tasks/${run}/${n}/postings.parquet`,
  facts: (run: string, n: number): string => `merge-tasks/${run}/${n}/facts.parquet`,
  /**
   * Results and errors have a folder of their own, which the coordinator lists while it waits: a short listing, however
   * many inputs the run's task folders hold (stage tasks × lake tasks files).
   */
  results: (run: string): string => `merge-tasks/${run}/results/`,
  result: (run: string, n: number | string): string => `merge-tasks/${run}/results/${n}.json`,
  /** What a merge-worker writes when the task cannot be done (then dead-lettered): the coordinator fails the merge. */
  error: (run: string, n: number | string): string => `merge-tasks/${run}/results/${n}.error.json`,
  /** Where merge-workers before stop 34 write a result and an error (the coordinator still looks there, less often). */
  resultBefore34: (run: string, n: number | string): string => `merge-tasks/${run}/${n}/result.json`,
  errorBefore34: (run: string, n: number | string): string => `merge-tasks/${run}/${n}/error.json`,
  /** The stage tasks' inputs: the merge's domain table, and the new rows the coordinator changed. */
  stageDom: (run: string): string => `merge-tasks/${run}/stage/dom.parquet`,
  stageFix: (run: string): string => `merge-tasks/${run}/stage/fix.parquet`,
  /** A file of lake task `n`'s staged rows written by a stage task (`part`: the stage task's number and a file number). */
  stageOut: (run: string, n: number, part: string): string => `merge-tasks/${run}/${n}/staged-${part}.parquet`,
};

/** A file of staged rows a stage task wrote for lake task `n`. */
export interface StageOutput {
  n: number;
  key: string;
}

/** The options of a group's writeLake that a task carries. */
export interface TaskOptions {
  columns: readonly string[];
  rowGroupSize: number;
  compressionLevel: number;
  parquetVersion: 'V1' | 'V2';
  dropText: boolean;
  facts: FactsColumns | undefined;
  /** Build the written files' search shards ({@link MergeTask.search}); null or absent: none. */
  search?: { languages: boolean } | null;
  /** The group's staged rows as stage tasks wrote them (merge-stage.ts): no `staged` table is exported. */
  stagedFrom?: readonly string[];
}

const toRun = (o: OldLakeFile): TaskRun => ({ key: o.key, rows: o.rows, fileId: o.fileId, datasetId: o.datasetId, prefix: o.prefix, ...(o.stripText !== undefined && { stripText: o.stripText }) });

/**
 * The coordinator's half: writes a group's inputs to the store (its staged rows, its rows of lose_old and strip_old,
 * from `conn`) and returns the task. `tmpDir` holds the files on their way.
 */
export async function exportMergeTask(
  conn: DuckDBConnection, store: ObjectStore, run: string, n: number, targets: readonly LakeTarget[], o: TaskOptions, tmpDir: string,
): Promise<MergeTask> {
  const dir = join(tmpDir, `task-${n}`);
  await mkdir(dir, { recursive: true });
  try {
    const fresh = targets.filter((t) => t.fresh);
    let staged: string | null = null;
    if (fresh.length > 0 && o.stagedFrom === undefined) {
      const where = fresh.map((t) => `(dataset_id = ${t.datasetId} AND prefix = ${sqlString(t.prefix)})`).join(' OR ');
      staged = mergeTaskLayout.staged(run, n);
      await copyToStore(conn, store, `SELECT * FROM staged WHERE ${where}`, staged, dir, 'COMPRESSION zstd, COMPRESSION_LEVEL 1');
    }
    const ids = [...new Set(targets.flatMap((t) => [...t.old, ...(t.keep ?? [])].map((r) => r.fileId)))];
    let rowLists: string | null = null;
    if (ids.length > 0) {
      const strip = await tableExists(conn, 'strip_old');
      rowLists = mergeTaskLayout.rowLists(run, n);
      await copyToStore(conn, store, `SELECT 0 AS t, _f, _r FROM lose_old WHERE _f IN (${ids.join(', ')})
        ${strip ? `UNION ALL SELECT 1, _f, _r FROM strip_old WHERE _f IN (${ids.join(', ')})` : ''}`, rowLists, dir);
    }
    const task: MergeTask = {
      v: o.stagedFrom === undefined ? 1 : 2, kind: 'merge-lake', id: `${run}/${n}`, run, n,
      targets: targets.map((t) => ({ datasetId: t.datasetId, prefix: t.prefix, key: t.key, fresh: t.fresh, old: t.old.map(toRun), keep: (t.keep ?? []).map(toRun) })),
      staged, ...(o.stagedFrom !== undefined && { stagedFrom: [...o.stagedFrom] }), rowLists, columns: [...o.columns], rowGroupSize: o.rowGroupSize, compressionLevel: o.compressionLevel, parquetVersion: o.parquetVersion, dropText: o.dropText,
      facts: o.facts ?? null, search: o.search ?? null,
    };
    await store.put(mergeTaskLayout.task(run, n), Buffer.from(JSON.stringify(task)));
    return task;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A query's rows as a Parquet object `key` of the store, by way of a file in `dir`. */
export async function copyToStore(conn: DuckDBConnection, store: ObjectStore, select: string, key: string, dir: string, options = ''): Promise<void> {
  const path = join(dir, key.replaceAll('/', '_'));
  await conn.run(`COPY (${select}) TO ${sqlString(path)} (FORMAT parquet${options === '' ? '' : `, ${options}`})`);
  await store.put(key, await readFile(path));
  await rm(path, { force: true });
}

/** Throws CCP_ERR_MERGE_TASK_INPUT (not retryable) unless every key is in the store. */
export async function requireObjects(store: ObjectStore, keys: readonly string[], task: string): Promise<void> {
  for (const key of keys) {
    if ((await store.head(key)) === null) throw new CcpError('CCP_ERR_MERGE_TASK_INPUT', 'a merge task\'s file is missing from the data store', { retryable: false, detail: { task, key } });
  }
}

/** Whether temp table `name` exists on `conn`. */
export async function tableExists(conn: DuckDBConnection, name: string): Promise<boolean> {
  const r = await conn.runAndReadAll(`SELECT count(*) FROM duckdb_tables() WHERE table_name = ${sqlString(name)}`);
  return Number(r.getRowsJS()[0]![0]) > 0;
}

/** Options of {@link runMergeTask}. */
export interface RunTaskOptions {
  /** A directory of this task's own for local copies and DuckDB's spill. */
  tmpDir: string;
  /** The local directory of a directory store (its files are read in place); default: copies. */
  dataDir?: string;
  memoryLimit?: string;
}

/**
 * The merge-worker's half: runs one task in a DuckDB of its own (one thread, as the merge's): loads the group's staged
 * rows and row lists, copies the runs it folds or keeps, {@link writeLake}s the group's files into the store under the
 * version's keys, writes their postings and facts to the store and the result last. Idempotent: a task run again (a
 * redelivery after a crash) writes the same files. @throws what writeLake and the store throw
 */
export async function runMergeTask(store: ObjectStore, task: MergeTask, opts: RunTaskOptions): Promise<MergeTaskResult> {
  // the task's inputs and the runs it folds or keeps: read in place from a directory store, else copied here
  return inTaskSession(store, opts, async ({ conn, inputs }) => {
    const own = [task.staged, task.rowLists, ...(task.stagedFrom ?? [])].filter((k): k is string => k !== null);
    await requireObjects(store, own, task.id);
    const ownPaths = new Map(own.map((k, i) => [k, i]));
    const ownLocal = await inputs.fetch(own);
    const pathOf = (key: string | null): string | null => (key === null ? null : ownLocal[ownPaths.get(key)!]!);
    await conn.run(NEW_POSTINGS);
    await conn.run(NEW_FACTS);
    const stagedFile = pathOf(task.staged);
    if (stagedFile !== null) await conn.run(`CREATE TEMP TABLE staged AS SELECT * FROM read_parquet(${sqlString(stagedFile)})`);
    // the group's rows as the stage tasks wrote them (merge-stage.ts): the same columns and values, in another order
    const from = (task.stagedFrom ?? []).map((k) => pathOf(k)!);
    if (from.length > 0) await conn.run(`CREATE TEMP TABLE staged AS SELECT * FROM read_parquet(${sqlList(from)})`);
    await conn.run('CREATE TEMP TABLE lose_old (_f INTEGER, _r BIGINT)');
    await conn.run('CREATE TEMP TABLE strip_old (_f INTEGER, _r BIGINT)');
    const rowsFile = pathOf(task.rowLists);
    if (rowsFile !== null) {
      await conn.run(`INSERT INTO lose_old SELECT _f, _r FROM read_parquet(${sqlString(rowsFile)}) WHERE t = 0`);
      await conn.run(`INSERT INTO strip_old SELECT _f, _r FROM read_parquet(${sqlString(rowsFile)}) WHERE t = 1`);
    }
    await inputs.release(own);
    const runKeys = [...new Set(task.targets.flatMap((t) => [...t.old, ...t.keep].map((r) => r.key)))];
    const at = new Map(runKeys.map((k, i) => [k, i]));
    const runPaths = await inputs.fetch(runKeys);
    const old = (r: TaskRun): OldLakeFile => ({ key: r.key, rows: r.rows, fileId: r.fileId, datasetId: r.datasetId, prefix: r.prefix, path: runPaths[at.get(r.key)!]!, ...(r.stripText !== undefined && { stripText: r.stripText }) });
    const targets: LakeTarget[] = task.targets.map((t) => ({ datasetId: t.datasetId, prefix: t.prefix, key: t.key, fresh: t.fresh, old: t.old.map(old), keep: t.keep.map(old) }));
    const fenced = taskFence(store, task);
    const { entries } = await writeLake(conn, fenced, {
      targets, columns: task.columns, rowGroupSize: task.rowGroupSize, compressionLevel: task.compressionLevel, parquetVersion: task.parquetVersion,
      tmpDir: opts.tmpDir, dropText: task.dropText, ...(task.facts !== null && { facts: task.facts }),
    });
    await inputs.release(runKeys);
    const postings = mergeTaskLayout.postings(task.run, task.n);
    await copyToStore(conn, fenced, 'SELECT * FROM new_postings', postings, opts.tmpDir);
    let facts: string | null = null;
    if (task.facts !== null) {
      facts = mergeTaskLayout.facts(task.run, task.n);
      await copyToStore(conn, fenced, 'SELECT * FROM new_facts', facts, opts.tmpDir);
    }
    const search = task.search ? await buildShards(conn, fenced, inputs, task, entries, task.search.languages, opts.tmpDir) : undefined;
    const result: MergeTaskResult = { v: 1, id: task.id, entries, postings, facts, ...(search !== undefined && { search }) };
    await fenced.put(mergeTaskLayout.result(task.run, task.n), Buffer.from(JSON.stringify(result)));
    return result;
  });
}

/** What a task runs in ({@link inTaskSession}): its own DuckDB connection, and its inputs as local files. */
export interface TaskSession {
  conn: DuckDBConnection;
  inputs: LocalInputs;
}

/**
 * Runs `fn` in a task's session: a DuckDB of its own (one thread, as the merge's; `memoryLimit`, spill in `tmpDir`) and
 * its inputs, read in place from a directory store or copied under `tmpDir`. The database is closed and `tmpDir`
 * removed after, whatever happens.
 */
export async function inTaskSession<T>(store: ObjectStore, opts: RunTaskOptions, fn: (s: TaskSession) => Promise<T>): Promise<T> {
  await mkdir(opts.tmpDir, { recursive: true });
  const db = await openDuck({ memoryLimit: opts.memoryLimit ?? '256MB', tempDir: join(opts.tmpDir, 'spill') });
  const conn = await db.connect();
  try {
    return await fn({ conn, inputs: openLocalInputs(store, opts.dataDir, join(opts.tmpDir, 'in')) });
  } finally {
    conn.closeSync();
    db.closeSync();
    await rm(opts.tmpDir, { recursive: true, force: true });
  }
}

/**
 * The store as a task may write to it: only while the task's `task.json` is there, so a task of a merge that ended
 * meanwhile writes nothing (CCP_ERR_MERGE_TASK_GONE, not retryable).
 */
export function taskFence(store: ObjectStore, task: { run: string; n: number | string; id: string }): ObjectStore {
  const live = mergeTaskLayout.task(task.run, task.n);
  return fencedStore(store, async () => {
    if ((await store.head(live)) === null) throw new CcpError('CCP_ERR_MERGE_TASK_GONE', 'the merge this task belongs to has ended: its files are not written', { retryable: false, detail: { task: task.id } });
  });
}

/**
 * The search shards of a task's lake files, one after another on one build thread while the task's connection reads
 * each file: the bytes the coordinator's pool would write for the same files.
 */
async function buildShards(
  conn: DuckDBConnection, store: ObjectStore, inputs: LocalInputs, task: MergeTask, entries: readonly LakeFileEntry[], languages: boolean, tmpDir: string,
): Promise<SearchShardEntry[]> {
  const pool = new ShardBuildPool({ threads: 1 });
  const version = /^v\d+/.exec(task.run)![0];
  try {
    const out: SearchShardEntry[] = [];
    for (const f of entries) {
      const [path] = await inputs.fetch([f.key]);
      try {
        out.push(await buildSearchShardOf(conn, pool, store, { version, languages, tmpDir }, f, path!));
      } finally {
        await inputs.release([f.key]);
      }
    }
    return out;
  } finally {
    await pool.close();
  }
}

/**
 * The coordinator loads a task's result into its tables new_postings and new_facts, as its own writeLake would have;
 * the files come through the merge's local inputs (read in place from a directory store, else copied and let go).
 */
export async function loadMergeTaskResult(conn: DuckDBConnection, inputs: LocalInputs, r: MergeTaskResult): Promise<LakeFileEntry[]> {
  const files = [[r.postings, 'new_postings'], [r.facts, 'new_facts']].filter((f): f is [string, string] => f[0] !== null);
  const keys = files.map(([key]) => key);
  const paths = await inputs.fetch(keys);
  try {
    for (const [i, [, table]] of files.entries()) await conn.run(`INSERT INTO ${table} SELECT * FROM read_parquet(${sqlString(paths[i]!)})`);
  } finally {
    await inputs.release(keys);
  }
  return r.entries;
}

/**
 * A merge's tasks as the coordinator makes them: a list, or a stream that yields each task once its inputs are in the
 * store (the merge's, so the merge-workers start on the first while the next is exported) and ends with the last.
 */
export type MergeTaskFeed = AsyncIterable<AnyMergeTask> | Iterable<AnyMergeTask>;

/** A task of either kind: a lake group's ({@link MergeTask}), or a slice of the parts to stage ({@link StageTask}). */
export type AnyMergeTask = MergeTask | StageTask;

/** What a task of either kind reports. */
export type AnyMergeTaskResult = MergeTaskResult | StageTaskResult;

/** Runs merge tasks somewhere: in this process, or on merge-workers through a queue. */
export interface MergeTaskRunner {
  /**
   * Runs every task of the feed as it comes and resolves with their results (any order) once the feed has ended and
   * every task reported. Rejects when one cannot be done, or when the feed throws.
   */
  run(tasks: MergeTaskFeed, signal?: AbortSignal): Promise<AnyMergeTaskResult[]>;
}
