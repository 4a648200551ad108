import { join } from 'node:path';
import { mkdir, readFile, readdir, rm } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { CcpError, type ObjectStore } from '@ccpipe/core';
import { appendTo, queryRows, sqlList, sqlString } from './duck';
import { memoryLimitBytes, stagedColumns, stagedSelect } from './lake-write';
import { copyToStore, inTaskSession, tableExists, mergeTaskLayout, requireObjects, taskFence, type MergeTaskRunner, type RunTaskOptions, type StageOutput } from './merge-task';

/**
 * Staging in merge tasks (docs/merge-tasks.md). A merge reads its new rows from the batches' parts once and deals them
 * out to the partitions they belong to. One process does it as table `staged` (lake-write.ts stageNewRows); a
 * distributed merge would do it alone in the coordinator, the whole delta's bytes, while the merge-workers wait. So the
 * coordinator stages only the rows' keys (stageNewKeys: what de-duplication, the collision check and the
 * content-versions policy read), decides everything as before, and hands the rows themselves to **stage tasks**: each
 * reads a slice of the parts, gives each row its domain64 and partition (the coordinator's domain table), applies what
 * the coordinator decided about single rows (lost to a newer capture, a substitute url_id, text dropped by the policy)
 * and writes the rows of each lake group to a file of their own. The lake task of a group then reads its files from
 * every stage task as its staged rows: the rows, columns and values of the coordinator's `staged` for that group,
 * which writeLake sorts by (domain64, url) — so the lake files are byte for byte the one-process merge's.
 */
export interface StageTask {
  v: 2;
  kind: 'merge-stage';
  /** `<run>/s<m>`: also the message id. */
  id: string;
  run: string;
  /** `s<m>`: the folder of the task's files. */
  n: string;
  /** Store keys of the parts the task reads, in the coordinator's order: the first is part number `firstF` (`_f`). */
  parts: string[];
  firstF: number;
  /** The coordinator's SQL type of each part column read: a slice lacking one reads it as a typed null, another type is cast. */
  types: Record<string, string>;
  /** Store key of the merge's domain table (domain, domain64, prefix). */
  dom: string;
  /** Store key of the new rows the coordinator changed (`_f`, `_r`, lose, url_id, drop_text); null: none. */
  fix: string | null;
  /** The lake groups: each partition with new rows and the number of the lake task that writes it. */
  groups: { datasetId: number; prefix: string; n: number }[];
  columns: string[];
  dropText: boolean;
}

/** What a stage task reports: the files of staged rows it wrote, by lake task. */
export interface StageTaskResult {
  v: 2;
  kind: 'merge-stage';
  id: string;
  outputs: StageOutput[];
}

/** Options of {@link stageInTasks}. */
export interface StageInTasksOptions {
  /** The merge's parts: store keys and local paths, in the order that numbers them (`_f` = position + 1). */
  parts: readonly { key: string; path: string }[];
  /** The SQL types of the part columns, as the coordinator reads all the parts (union by name). */
  types: Record<string, string>;
  columns: readonly string[];
  dropText: boolean;
  /** Each partition with new rows, and its lake task's number. */
  groups: readonly { datasetId: number; prefix: string; n: number }[];
  /** About how many new rows a stage task reads. */
  rowsPerTask: number;
  tmpDir: string;
}

/**
 * The coordinator's half: after de-duplication and the content-versions policy, with temp tables `staged` (keys, from
 * stageNewKeys), `dom`, `lose_new` and (when the policy ran) `strip_new`: writes the domain table and the changed rows
 * to the store, runs the stage tasks, and returns the staged files of each lake task by its number.
 */
export async function stageInTasks(conn: DuckDBConnection, store: ObjectStore, runner: MergeTaskRunner, run: string, o: StageInTasksOptions): Promise<Map<number, string[]>> {
  const dir = join(o.tmpDir, 'stage-inputs');
  await mkdir(dir, { recursive: true });
  try {
    const dom = mergeTaskLayout.stageDom(run);
    await copyToStore(conn, store, 'SELECT domain, domain64, prefix FROM dom', dom, dir, 'COMPRESSION zstd, COMPRESSION_LEVEL 1');
    const strip = await tableExists(conn, 'strip_new');
    // one row per changed new row: lost to a newer capture, given a substitute url_id, or its text dropped
    await conn.run(`CREATE OR REPLACE TEMP TABLE stage_fix AS
      SELECT _f, _r, bool_or(lose) AS lose, max(url_id) AS url_id, bool_or(drop_text) AS drop_text FROM (
        SELECT _f, _r, true AS lose, NULL AS url_id, false AS drop_text FROM lose_new
        UNION ALL SELECT _f, _r, false, url_id, false FROM staged WHERE url_id IS DISTINCT FROM _url_id0
        ${strip ? 'UNION ALL SELECT _f, _r, false, NULL, true FROM strip_new' : ''}
      ) GROUP BY _f, _r`);
    const changed = Number((await queryRows(conn, 'SELECT count(*) AS n FROM stage_fix'))[0]!['n']);
    let fix: string | null = null;
    if (changed > 0) {
      fix = mergeTaskLayout.stageFix(run);
      await copyToStore(conn, store, 'SELECT * FROM stage_fix ORDER BY _f, _r', fix, dir);
    }
    await conn.run('DROP TABLE stage_fix');
    // slices of consecutive parts of about rowsPerTask rows each
    const rows = await queryRows(conn, `SELECT file_name AS f, num_rows AS n FROM parquet_file_metadata(${sqlList(o.parts.map((p) => p.path))})`);
    const rowsOf = new Map(rows.map((r) => [r['f'] as string, Number(r['n'])]));
    const tasks: StageTask[] = [];
    let at = 0;
    while (at < o.parts.length) {
      let end = at;
      let held = 0;
      while (end < o.parts.length && (end === at || held + (rowsOf.get(o.parts[end]!.path) ?? 0) <= o.rowsPerTask)) held += rowsOf.get(o.parts[end++]!.path) ?? 0;
      const n = `s${tasks.length}`;
      const task: StageTask = {
        v: 2, kind: 'merge-stage', id: `${run}/${n}`, run, n, parts: o.parts.slice(at, end).map((p) => p.key), firstF: at + 1, types: o.types,
        dom, fix, groups: [...o.groups], columns: [...o.columns], dropText: o.dropText,
      };
      await store.put(mergeTaskLayout.task(run, n), Buffer.from(JSON.stringify(task)));
      tasks.push(task);
      at = end;
    }
    const byGroup = new Map<number, { m: number; key: string }[]>();
    for (const r of await runner.run(tasks)) {
      if (!('kind' in r) || r.kind !== 'merge-stage') throw new CcpError('CCP_ERR_MERGE_TASK', 'a stage task reported another kind of result', { detail: { task: r.id } });
      const m = Number(r.id.slice(r.id.lastIndexOf('/s') + 2));
      for (const out of r.outputs) byGroup.set(out.n, [...(byGroup.get(out.n) ?? []), { m, key: out.key }]);
    }
    // each group's files in stage-task order (the rows' order does not matter to writeLake, which sorts them)
    return new Map([...byGroup].map(([n, files]) => [n, files.sort((a, b) => a.m - b.m || (a.key < b.key ? -1 : 1)).map((f) => f.key)]));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The merge-worker's half: stages one slice of the parts (see {@link StageTask}) in a DuckDB of its own (one thread) and
 * writes each lake group's rows to `merge-tasks/<run>/<n>/staged-<m>-<i>.parquet`, then the result. Idempotent.
 */
export async function runStageTask(store: ObjectStore, task: StageTask, opts: RunTaskOptions): Promise<StageTaskResult> {
  const own = [task.dom, ...(task.fix === null ? [] : [task.fix])];
  return inTaskSession(store, opts, async ({ conn, inputs }) => {
    await requireObjects(store, [...own, ...task.parts], task.id);
    const [domPath, fixPath] = await inputs.fetch(own);
    const paths = await inputs.fetch(task.parts);
    await conn.run(`CREATE TEMP TABLE dom AS SELECT * FROM read_parquet(${sqlString(domPath!)})`);
    await conn.run('CREATE TEMP TABLE grp (dataset_id BIGINT, prefix VARCHAR, g INTEGER)');
    await appendTo(conn, 'grp', (app) => {
      for (const g of task.groups) {
        app.appendBigInt(BigInt(g.datasetId));
        app.appendVarchar(g.prefix);
        app.appendInteger(g.n);
        app.endRow();
      }
    });
    const last = task.firstF + task.parts.length - 1;
    await conn.run(fixPath === undefined
      ? 'CREATE TEMP TABLE fix (_f INTEGER, _r BIGINT, lose BOOLEAN, url_id BIGINT, drop_text BOOLEAN)'
      : `CREATE TEMP TABLE fix AS SELECT * FROM read_parquet(${sqlString(fixPath)}) WHERE _f BETWEEN ${task.firstF} AND ${last}`);
    // the part columns as the coordinator reads them over all parts: a column this slice lacks is a typed null
    const readParts = `read_parquet(${sqlList(paths)}, file_row_number = true, hive_partitioning = false, union_by_name = true)`;
    const have = new Map((await queryRows(conn, `DESCRIBE SELECT * FROM ${readParts}`)).map((r) => [r['column_name'] as string, r['column_type'] as string]));
    const cols = Object.entries(task.types).map(([c, type]) => (!have.has(c) ? `NULL::${type} AS ${c}` : have.get(c) === type ? c : `CAST(${c} AS ${type}) AS ${c}`));
    const parts = `SELECT ${cols.join(', ')}, (file_index + ${task.firstF})::INTEGER AS _f, file_row_number AS _r FROM ${readParts}`;
    const rows = stagedSelect(`SELECT r.*, dom.domain64, dom.prefix FROM (${parts}) r JOIN dom USING (domain)`, task.columns, task.dropText);
    const text = stagedColumns(task.columns).includes('text') && !task.dropText ? ', CASE WHEN x.drop_text THEN NULL ELSE s.text END AS text' : '';
    const fixed = `SELECT s.* REPLACE (coalesce(x.url_id, s.url_id)::${task.types['url_id'] ?? 'BIGINT'} AS url_id${text}), g.g
      FROM (${rows}) s JOIN grp g USING (dataset_id, prefix) LEFT JOIN fix x USING (_f, _r) WHERE x.lose IS NOT TRUE`;
    // a partitioned write holds about a quarter of the memory limit before it flushes (its default, 524,288 rows, is
    // 1.3 GB of 2.5 KB pages)
    const [meta] = await queryRows(conn, `SELECT sum(total_uncompressed_size) AS b FROM parquet_metadata(${sqlList(paths)})`);
    const [count] = await queryRows(conn, `SELECT coalesce(sum(num_rows), 0) AS n FROM parquet_file_metadata(${sqlList(paths)})`);
    const width = Number(meta?.['b'] ?? 0) / Math.max(1, Number(count?.['n'] ?? 0));
    await conn.run(`SET partitioned_write_flush_threshold = ${Math.max(1024, Math.floor((await memoryLimitBytes(conn)) / 4 / Math.max(1, width)))}`);
    const out = join(opts.tmpDir, 'out');
    await conn.run(`COPY (${fixed}) TO ${sqlString(out)} (FORMAT parquet, PARTITION_BY (g), COMPRESSION zstd, COMPRESSION_LEVEL 1, OVERWRITE_OR_IGNORE)`);
    await inputs.release([...own, ...task.parts]);
    const fenced = taskFence(store, task);
    const m = task.n.slice(1);
    const outputs: StageOutput[] = [];
    const groups = (await readdir(out).catch(() => [] as string[])).map((d) => /^g=(\d+)$/.exec(d)).filter((x): x is RegExpExecArray => x !== null);
    for (const g of groups.sort((a, b) => Number(a[1]) - Number(b[1]))) {
      const n = Number(g[1]);
      const files = (await readdir(join(out, g[0]))).filter((f) => f.endsWith('.parquet')).sort();
      for (const [i, f] of files.entries()) {
        const key = mergeTaskLayout.stageOut(task.run, n, `${m}-${i}`);
        await fenced.put(key, await readFile(join(out, g[0], f)));
        outputs.push({ n, key });
      }
    }
    const result: StageTaskResult = { v: 2, kind: 'merge-stage', id: task.id, outputs };
    await fenced.put(mergeTaskLayout.result(task.run, task.n), Buffer.from(JSON.stringify(result)));
    return result;
  });
}
