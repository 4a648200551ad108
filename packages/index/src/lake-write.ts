import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { PART_COLUMNS, PART_SQL_TYPES, DUCKDB_VECTOR_SIZE } from '@ccpipe/adapters';
import { runLanes, type ObjectStore } from '@ccpipe/core';
import { addFacts, type FactsColumns } from './domain-facts';
import { appendTo, queryRows, sqlList, sqlString } from './duck';
import { IndexFormatError, crcOf, indexLayout, type LakeFileEntry } from './format';
import { buildLocator } from './lake-locator';
import type { MergeCache } from './merge-cache';

/** Columns of a lake file, in file order: `domain64` first, then the part's columns without `dataset_id` (a hive key). */
export const LAKE_COLUMNS: readonly string[] = ['domain64', ...PART_COLUMNS.map((c) => c.name).filter((n) => n !== 'dataset_id')];

/**
 * The narrow column set (`lakeColumns: 'api'`): what the API serves (`/v1/urls`, `/v1/url` with its WARC location,
 * `languages` and `content_length`) plus `domain` and `raw_url`. The other part columns (host, surt, mime, digest,
 * outlinks, …) stay in the batch parts, which the merger never deletes. `languages` and `content_length` come last
 * (since stop 20, for the domain facts and the API), so the page columns url … title stay one contiguous range.
 */
export const LAKE_API_COLUMNS: readonly string[] = [
  'domain64', 'url_id', 'url', 'raw_url', 'domain', 'ts', 'status', 'title', 'text', 'warc_filename', 'warc_offset', 'warc_length', 'languages', 'content_length',
  'extras', 'text_language', 'text_language_confidence',
];

/**
 * Columns a lake begun without them gains at its next merge (appended to its column list, those of its column set):
 * an imported row's `extras` (`ccpipe import`) and the quality step's language and signals would be lost in a lake
 * that could not grow. The lake's older files lack them and read as null; a file rewritten by a merge gets them (null
 * for its old rows).
 */
export const LAKE_GROWN_COLUMNS: readonly string[] = [
  'extras', 'text_language', 'text_language_confidence', 'word_count', 'mean_word_length', 'symbol_word_ratio', 'line_punct_fraction',
  'dup_line_fraction', 'dup_line_char_fraction', 'top_2gram_char_fraction', 'dup_5gram_char_fraction', 'dropped_by',
];

/**
 * {@link LAKE_API_COLUMNS} of a lake begun before stop 20 (no `languages`, `content_length`): such a lake keeps them
 * (its files keep one schema), and its domain facts have no languages and a null content-length median and p90.
 */
export const LAKE_API_COLUMNS_V1: readonly string[] = LAKE_API_COLUMNS.filter((c) => c !== 'languages' && c !== 'content_length' && !LAKE_GROWN_COLUMNS.includes(c));

/**
 * {@link LAKE_API_COLUMNS} without `url_id` (`lakeColumns: 'lean'`): url_id is recomputable, readers take
 * `collisions[url] ?? urlId(url)`, and as a random 64-bit value it is the one column nothing compresses (8 B/URL).
 */
export const LAKE_LEAN_COLUMNS: readonly string[] = LAKE_API_COLUMNS.filter((c) => c !== 'url_id');

/**
 * Which columns the lake keeps: every part column ('all'), only those the API reads ('api'), or those without
 * url_id ('lean'). Fixed once the lake exists.
 */
export type LakeColumnSet = 'all' | 'api' | 'lean';

/** The columns of a lake written with `set`. */
export function lakeColumnsOf(set: LakeColumnSet): readonly string[] {
  return set === 'api' ? LAKE_API_COLUMNS : set === 'lean' ? LAKE_LEAN_COLUMNS : LAKE_COLUMNS;
}

/**
 * The columns of an existing lake: those its status.json records (`lakeColumnList`, since stop 20), else those
 * `set` had before (`'api'`/`'lean'` without `languages` and `content_length`).
 */
export function existingLakeColumns(set: LakeColumnSet, recorded: readonly string[] | undefined): readonly string[] {
  const had = recorded ?? (set === 'api' ? LAKE_API_COLUMNS_V1 : set === 'lean' ? LAKE_API_COLUMNS_V1.filter((c) => c !== 'url_id') : LAKE_COLUMNS);
  const grown = LAKE_GROWN_COLUMNS.filter((c) => lakeColumnsOf(set).includes(c) && !had.includes(c));
  return grown.length === 0 ? had : [...had, ...grown];
}

/**
 * The table {@link writeLake} fills with one row per (domain, freshly written lake file): the domain's run in that
 * file (`first` row, `rows`). Create it once per merge, before the first writeLake.
 */
export const NEW_POSTINGS = 'CREATE TEMP TABLE new_postings (file_key VARCHAR, dataset_id INTEGER, domain VARCHAR, domain64 BIGINT, first BIGINT, rows BIGINT)';

/** A previous lake file of a partition being rewritten: its rows are merged with the partition's new ones. */
export interface OldLakeFile {
  datasetId: number;
  prefix: string;
  /** Its object key and row count (from the files registry). */
  key: string;
  rows: number;
  /** Local path (DuckDB reads it). */
  path: string;
  /** Its row id space in `lose` (negative: old rows lose ties against new ones). */
  fileId: number;
  /** Some of its rows lose their text (table `strip_old`, the content-versions policy: text-versions.ts). */
  stripText?: boolean;
}

/**
 * Stages the new rows once, as temp table `staged` (dataset_id, prefix, domain64, the lake columns `columns`,
 * url_id, ts, warc_filename, warc_offset, _f, _r) in (dataset_id, prefix) order, so that each partition's rows are
 * one stretch that a per-partition COPY scans alone (zone maps), and no later step reads the batch parts again.
 * (Staging in full lake order instead, so that a partition folding in no old run needs no sort of its own, was
 * measured: 9 % less CPU at 1M, 14 % more at 10M, where the one big sort of wide rows spills.)
 * `parts` is a SELECT over the parts with `domain64`, `prefix` (joined from the domain registry), `_f` (the part's
 * rank among the merge's parts, 1-based: later parts rank higher) and `_r` (row number in its part). `raw_url` is
 * stored only where it differs from `url`; `text` is null with `dropText`.
 */
export async function stageNewRows(
  conn: DuckDBConnection, parts: string, columns: readonly string[], dropText: boolean, opts: StageOptions,
): Promise<{ passes: number }> {
  const select = stagedSelect(parts, columns, dropText);
  // DuckDB's sort holds a run's strings in memory: a sort of rows wider in all than about a third of the memory limit
  // fails ("could not allocate block") instead of spilling — 200k pages of ≈ 2.5 KB text and 30 outlinks did at
  // 256 MB. Wider input is sorted in passes of consecutive partitions, each within a quarter of the limit (the parts'
  // uncompressed size spread over their rows estimates it), into files read back in order.
  const [meta] = await queryRows(conn, `SELECT sum(total_uncompressed_size) AS b, count(DISTINCT file_name) AS f FROM parquet_metadata(${sqlList(opts.files)})`);
  const [rows] = await queryRows(conn, `SELECT coalesce(sum(num_rows), 0) AS n FROM parquet_file_metadata(${sqlList(opts.files)})`);
  const total = Number(meta?.['b'] ?? 0);
  const width = total / Math.max(1, Number(rows?.['n'] ?? 0));
  const budget = opts.passBytes ?? (await memoryLimitBytes(conn)) / 4;
  if (total <= budget) {
    await conn.run(`CREATE TEMP TABLE staged AS ${select} ORDER BY dataset_id, prefix`);
    return { passes: 1 };
  }
  const passes: { datasetId: number; prefix: string }[][] = [[]];
  let held = 0;
  for (const r of await queryRows(conn, `SELECT dataset_id AS d, prefix AS p, count(*) AS n FROM (${parts}) GROUP BY ALL ORDER BY 1, 2`)) {
    const b = Number(r['n']) * width;
    if (held > 0 && held + b > budget) {
      passes.push([]);
      held = 0;
    }
    passes[passes.length - 1]!.push({ datasetId: Number(r['d']), prefix: r['p'] as string });
    held += b;
  }
  // The parts are read once: each row goes to its pass's files (a partitioned COPY, unsorted), then each pass is read
  // back, sorted within the budget, into `staged` in pass order. Scanning every part once per pass made staging
  // quadratic in the delta's bytes: 300k rows of 2.5 KB pages (12 passes) took 11 % more merge CPU that way.
  const dir = join(opts.tmpDir, `stage-${++passSeq}`);
  await mkdir(dir, { recursive: true });
  const [flush] = await queryRows(conn, "SELECT current_setting('partitioned_write_flush_threshold') AS n");
  try {
    await conn.run('CREATE OR REPLACE TEMP TABLE stage_pass (dataset_id BIGINT, prefix VARCHAR, _pass INTEGER)');
    await appendTo(conn, 'stage_pass', (app) => {
      passes.forEach((pass, k) => {
        for (const t of pass) {
          app.appendBigInt(BigInt(t.datasetId));
          app.appendVarchar(t.prefix);
          app.appendInteger(k);
          app.endRow();
        }
      });
    });
    // the rows a partitioned write holds before it flushes: a quarter of the budget (its default, 524,288 rows, is
    // 1.3 GB of 2.5 KB pages)
    await conn.run(`SET partitioned_write_flush_threshold = ${Math.max(1024, Math.floor(budget / 4 / Math.max(1, width)))}`);
    await conn.run(`COPY (SELECT s.*, p._pass FROM (${select}) s JOIN stage_pass p USING (dataset_id, prefix))
      TO ${sqlString(dir)} (FORMAT parquet, PARTITION_BY (_pass), COMPRESSION zstd, COMPRESSION_LEVEL 1, OVERWRITE_OR_IGNORE)`);
    for (const [k, pass] of passes.entries()) {
      // one partition is a stretch of its own: no sort (however large it is)
      const rows = `SELECT * FROM read_parquet(${sqlString(join(dir, `_pass=${k}`, '*.parquet'))}, hive_partitioning = false)${pass.length > 1 ? ' ORDER BY dataset_id, prefix' : ''}`;
      await conn.run(k === 0 ? `CREATE TEMP TABLE staged AS ${rows}` : `INSERT INTO staged ${rows}`);
    }
  } finally {
    await conn.run(`SET partitioned_write_flush_threshold = ${Number(flush?.['n'] ?? 524_288)}`);
    await conn.run('DROP TABLE IF EXISTS stage_pass');
    await rm(dir, { recursive: true, force: true });
  }
  return { passes: passes.length };
}

/**
 * The SELECT of {@link stageNewRows} over `parts`: its rows as table `staged` holds them, in no order. A merge task
 * staging a slice of the parts (merge-stage.ts) selects the same.
 */
export function stagedSelect(parts: string, columns: readonly string[], dropText: boolean): string {
  return `SELECT dataset_id::BIGINT AS dataset_id, prefix, domain64, ${stagedColumns(columns).map((c) => lakeColumnExpr(c, dropText)).join(', ')}, _f, _r FROM (${parts})`;
}

/** The columns table `staged` holds besides dataset_id, prefix, domain64, _f and _r: the lake's, and the merge's keys. */
export function stagedColumns(columns: readonly string[]): string[] {
  return [...new Set([...columns, ...STAGED_KEYS])].filter((c) => c !== 'domain64');
}

/** The columns of table `staged` the merge itself reads (de-duplication, collisions, the content-versions policy). */
const STAGED_KEYS = ['url_id', 'url', 'ts', 'warc_filename', 'warc_offset'] as const;

/**
 * Stages only the keys of the new rows, for a merge whose tasks stage the rows themselves (merge-stage.ts): temp table
 * `staged` with dataset_id, prefix, domain64, url_id, url, ts, warc_filename, warc_offset, _f, _r — what
 * de-duplication, the collision check and the content-versions policy read — and `_url_id0`, the url_id as the part
 * has it (the collision check may give a URL a substitute). No order: nothing scans it by partition.
 */
export async function stageNewKeys(conn: DuckDBConnection, parts: string): Promise<void> {
  await conn.run(`CREATE TEMP TABLE staged AS SELECT dataset_id::BIGINT AS dataset_id, prefix, domain64, ${STAGED_KEYS.join(', ')}, _f, _r, url_id AS _url_id0 FROM (${parts})`);
}

/** Options of {@link stageNewRows}. */
export interface StageOptions {
  /** The parts' local paths (their Parquet metadata sizes the staging). */
  files: readonly string[];
  /** Where the passes' files go (deleted before it returns). */
  tmpDir: string;
  /** Estimated bytes a sorting pass may hold; default a quarter of the connection's memory limit. */
  passBytes?: number;
}

/** The connection's memory limit in bytes (DuckDB answers it as text: '244.1 MiB'); 256 MiB when it cannot be read. */
export async function memoryLimitBytes(conn: DuckDBConnection): Promise<number> {
  const [row] = await queryRows(conn, "SELECT current_setting('memory_limit') AS m");
  const m = /^([\d.]+)\s*(bytes?|[KMGTP]i?B)$/i.exec(String(row?.['m'] ?? ''));
  if (m === null) return 256 * 2 ** 20;
  const unit = m[2]!.toUpperCase();
  const pow = unit.startsWith('B') ? 0 : 'KMGTP'.indexOf(unit[0]!) + 1;
  return Number(m[1]) * (unit.includes('I') ? 1024 : 1000) ** pow;
}

/** The {@link LAKE_GROWN_COLUMNS} among `columns` that the lake file at `path` was written without. */
async function grownColumnsLacking(conn: DuckDBConnection, path: string, columns: readonly string[]): Promise<Set<string>> {
  const grown = LAKE_GROWN_COLUMNS.filter((c) => columns.includes(c));
  if (grown.length === 0) return new Set();
  const have = new Set((await queryRows(conn, `SELECT name FROM parquet_schema(${sqlString(path)})`)).map((r) => r['name'] as string));
  return new Set(grown.filter((c) => !have.has(c)));
}

/** How a lake column is written: `raw_url` only where it differs from `url` (null otherwise), `text` null with `dropText`. */
function lakeColumnExpr(c: string, dropText: boolean): string {
  return c === 'text' && dropText ? 'NULL::VARCHAR AS text' : c === 'raw_url' ? 'NULLIF(raw_url, url) AS raw_url' : c;
}

/** An old file's `text`, null for its rows listed in table strip_old (the content-versions policy). */
function stripTextExpr(fileId: number): string {
  return `CASE WHEN EXISTS (SELECT 1 FROM strip_old s WHERE s._f = ${fileId} AND s._r = o.file_row_number) THEN NULL ELSE text END AS text`;
}

/**
 * One row per (dataset, canonical URL) over the staged new rows and the previous files `old` of the partitions
 * receiving rows — the latest capture wins (ts, then new over old, then the later batch part, then the WARC
 * position). Duplicates are rare, so they are found on narrow columns first (after collision resolution url_id and
 * canonical URL are one-to-one; an integer groups cheaper than a string; `key` is `url` when the lake has no
 * url_id): keys repeated among the staged rows, and old rows whose key a staged row has — taken from temp table
 * `lake_hits` that resolveCollisions left (the lake rows sharing an id with a new row: no second scan of the lake;
 * the lake is already de-duplicated, so two old rows never share a key). Only those rows are ranked, reading the
 * old columns of the files they sit in (`lake_hits` stays for the content-versions policy: text-versions.ts; the merge
 * drops it). Losing new rows are deleted from `staged` (and listed in temp table `lose_new`);
 * losing old rows stay listed in temp table `lose_old (_f, _r)` for the per-partition COPY to skip, and their files
 * must be rewritten.
 */
export async function dropSuperseded(conn: DuckDBConnection, old: readonly OldLakeFile[], key: 'url_id' | 'url'): Promise<void> {
  await conn.run('CREATE OR REPLACE TEMP TABLE old_files (filename VARCHAR, dataset_id BIGINT, _f INTEGER)');
  await appendTo(conn, 'old_files', (app) => {
    for (const o of old) {
      app.appendVarchar(o.path);
      app.appendBigInt(BigInt(o.datasetId));
      app.appendInteger(o.fileId);
      app.endRow();
    }
  });
  await conn.run(`CREATE OR REPLACE TEMP TABLE old_hit (filename VARCHAR, dataset_id BIGINT, ${key} ${key === 'url' ? 'VARCHAR' : 'BIGINT'}, _f INTEGER, _r BIGINT)`);
  if (old.length > 0) {
    await conn.run(
      `INSERT INTO old_hit SELECT f.filename, f.dataset_id, h.${key}, f._f, h._r
       FROM lake_hits h JOIN lake_hit_files p ON p.file = h.file JOIN old_files f ON f.filename = p.filename
       WHERE EXISTS (SELECT 1 FROM staged s WHERE s.dataset_id = f.dataset_id AND s.${key} = h.${key})`,
    );
  }
  const hitFiles = (await queryRows(conn, 'SELECT DISTINCT filename AS f FROM old_hit ORDER BY 1')).map((r) => r['f'] as string);
  const oldRows = hitFiles.length === 0
    ? ''
    : `UNION ALL SELECT h.dataset_id, h.${key}, o.ts, h._f, h._r, o.warc_filename, o.warc_offset
       FROM read_parquet(${sqlList(hitFiles)}, hive_partitioning = false, filename = true, file_row_number = true) o
       JOIN old_hit h ON h.filename = o.filename AND h._r = o.file_row_number`;
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE lose AS
     WITH dup AS (SELECT dataset_id, ${key} FROM staged GROUP BY ALL HAVING count(*) > 1 UNION SELECT dataset_id, ${key} FROM old_hit),
     n AS (SELECT dataset_id, ${key}, ts, _f, _r, warc_filename, warc_offset FROM staged s
           WHERE EXISTS (SELECT 1 FROM dup WHERE dup.dataset_id = s.dataset_id AND dup.${key} = s.${key}) ${oldRows})
     SELECT _f, _r FROM (
       SELECT _f, _r, row_number() OVER (PARTITION BY dataset_id, ${key} ORDER BY ts DESC NULLS LAST, (_f > 0) DESC, _f DESC, warc_filename DESC, warc_offset DESC) AS _k FROM n
     ) WHERE _k > 1`,
  );
  await conn.run('DELETE FROM staged WHERE EXISTS (SELECT 1 FROM lose l WHERE l._f > 0 AND l._f = staged._f AND l._r = staged._r)');
  // the new rows that lost, for a merge whose tasks stage the rows themselves (merge-stage.ts)
  await conn.run('CREATE OR REPLACE TEMP TABLE lose_new AS SELECT _f, _r FROM lose WHERE _f > 0');
  await conn.run('CREATE OR REPLACE TEMP TABLE lose_old AS SELECT _f, _r FROM lose WHERE _f < 0');
  await conn.run('DROP TABLE lose');
  await conn.run('DROP TABLE old_hit');
}

/**
 * Which runs of a partition its next file folds in (indices into `runs`, the runs' row counts oldest first), given
 * the partition's `newRows` and the runs that must be rewritten (`losing`: they hold rows the new ones supersede).
 * Size-tiered from the newest: a run no bigger than what the new file holds so far is folded in (so run sizes
 * roughly double going back, like a binary counter: ≈ log₂(merges) runs, each row rewritten ≈ log₂(merges) times);
 * while the partition would hold more than `maxRuns` files, the next newest run is folded whatever its size, and
 * the size rule goes on from there with what the new file then holds. Pure.
 */
export function runsToFold(runs: readonly number[], newRows: number, losing: readonly number[], maxRuns: number): Set<number> {
  const fold = new Set(losing);
  // no file to write (every new row lost to the lake, no run to rewrite): the cap is not the new file's to enforce
  if (newRows === 0 && fold.size === 0) return fold;
  let held = newRows + losing.reduce((s, i) => s + runs[i]!, 0);
  for (let i = runs.length - 1; i >= 0; i--) {
    if (fold.has(i)) continue;
    // over the cap, the newest run left is folded even when bigger, and what it brings keeps the size rule going:
    // a cap applied after the size rule folded the same newest run again at every merge (its size only grew, so the
    // size rule never reached the older runs again: nearly the whole partition rewritten per merge)
    if (runs[i]! > held && runs.length - fold.size + 1 <= maxRuns) break;
    fold.add(i);
    held += runs[i]!;
  }
  return fold;
}

/** A partition {@link writeLake} writes: its new file's object key and the previous runs that file folds in. */
export interface LakeTarget {
  datasetId: number;
  prefix: string;
  key: string;
  old: OldLakeFile[];
  /** False when the partition has no staged rows (a compaction only folds its runs; `staged` may not exist). */
  fresh: boolean;
  /** The partition's runs the new file does not fold in (they stay): read for the facts of its domains with new rows. */
  keep?: OldLakeFile[];
}

/** Options of {@link writeLake}. */
export interface LakeWrite {
  /**
   * Partitions to write (non-empty): their new file's object key and the previous runs of the partition it folds in
   * (none: the new rows become a run of their own).
   */
  targets: LakeTarget[];
  /** Lake columns in file order ({@link lakeColumnsOf}); the old files hold at least these. */
  columns: readonly string[];
  rowGroupSize: number;
  compressionLevel: number;
  /** Parquet format version: 'V2' gives DELTA_BINARY_PACKED / DELTA_LENGTH_BYTE_ARRAY pages, 'V1' PLAIN ones. */
  parquetVersion: 'V1' | 'V2';
  tmpDir: string;
  dropText: boolean;
  /** Files written to the store at once (default 8): each put fsyncs, so overlapping them hides the latency. */
  putConcurrency?: number;
  /** Where the files written are kept for the next merge once uploaded (MergeOptions.cacheDir); default: deleted. */
  cache?: MergeCache;
  /**
   * Compute the domain facts of the domains receiving new rows (over the new files and the runs they keep) into
   * table new_facts (domain-facts.ts), with the lake's fact columns; default: none.
   */
  facts?: FactsColumns;
}

let passSeq = 0;

/**
 * Writes a group of partitions (dataset_id, domain_prefix) after {@link stageNewRows} and {@link dropSuperseded}:
 * each new file is one COPY of the partition's staged rows plus the surviving rows of the runs it folds in, sorted by
 * (domain64, url), ZSTD, fixed row groups (each sort holds one partition, whatever the lake's size). Files go through
 * the store; returns their registry entries, and adds each domain's row run, read back from the files written
 * (domain64 and domain only), to table new_postings ({@link NEW_POSTINGS}); checked: row groups in domain64 order,
 * row counts as staged.
 * Deterministic for the same inputs. @throws IndexFormatError when a written file is not grouped by domain or holds
 * another number of rows than its inputs.
 */
export async function writeLake(conn: DuckDBConnection, store: ObjectStore, w: LakeWrite): Promise<{ entries: LakeFileEntry[] }> {
  const cols = w.columns.join(', ');
  // One COPY per partition (~3 ms each beyond the bytes it writes). A single `COPY … PARTITION_BY` was tried: at 1M
  // rows it did not keep the input order within a partition (domains came out split) and cost more, so it is not used.
  const rg = Math.ceil(w.rowGroupSize / DUCKDB_VECTOR_SIZE) * DUCKDB_VECTOR_SIZE;
  const out = join(w.tmpDir, `pass-${++passSeq}`);
  await mkdir(out, { recursive: true });
  const tmpOf = (t: { datasetId: number; prefix: string }) => join(out, `lake-${t.datasetId}-${t.prefix}.parquet`);
  const expected = new Map<string, number>();
  const withNew = w.targets.filter((t) => t.fresh);
  const staged = withNew.length === 0
    ? []
    : await queryRows(conn, `SELECT dataset_id AS d, prefix AS p, count(*) AS n FROM staged WHERE ${targetsWhere(withNew)} GROUP BY ALL`);
  for (const r of staged) expected.set(`${Number(r['d'])}/${r['p'] as string}`, Number(r['n']));
  for (const t of w.targets) {
    const oldSelects: string[] = [];
    for (const o of t.old) {
      const lacks = await grownColumnsLacking(conn, o.path, w.columns);
      const expr = (c: string): string => lacks.has(c) ? `NULL::${PART_SQL_TYPES[c as keyof typeof PART_SQL_TYPES]} AS ${c}`
        : c === 'text' && o.stripText === true && !w.dropText ? stripTextExpr(o.fileId) : lakeColumnExpr(c, w.dropText);
      oldSelects.push(`SELECT ${w.columns.map(expr).join(', ')} FROM read_parquet(${sqlString(o.path)}, hive_partitioning = false, file_row_number = true) o
         WHERE NOT EXISTS (SELECT 1 FROM lose_old l WHERE l._f = ${o.fileId} AND l._r = o.file_row_number)`);
    }
    const inputs = [
      ...(t.fresh ? [`SELECT ${cols} FROM staged WHERE dataset_id = ${t.datasetId} AND prefix = ${sqlString(t.prefix)}`] : []),
      ...oldSelects,
    ];
    if (inputs.length === 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'a lake file with neither new rows nor runs to fold', { key: t.key });
    await conn.run(
      `COPY (SELECT * FROM (${inputs.join(' UNION ALL ')}) ORDER BY domain64, url)
       TO ${sqlString(tmpOf(t))} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${w.compressionLevel}, ROW_GROUP_SIZE ${rg}, PARQUET_VERSION ${w.parquetVersion})`,
    );
  }
  // An old file keeps its registry row count less its superseded rows.
  const olds = w.targets.flatMap((t) => t.old);
  const lost = new Map<number, number>();
  if (olds.length > 0) {
    for (const r of await queryRows(conn, `SELECT _f, count(*) AS n FROM lose_old WHERE _f IN (${olds.map((o) => o.fileId).join(', ')}) GROUP BY _f`)) {
      lost.set(Number(r['_f']), Number(r['n']));
    }
  }
  for (const o of olds) {
    const id = `${o.datasetId}/${o.prefix}`;
    expected.set(id, (expected.get(id) ?? 0) + o.rows - (lost.get(o.fileId) ?? 0));
  }
  // Postings read back from the files written, in their order, into table new_postings (see NEW_POSTINGS): each
  // domain is one run, its first row the count of rows before it. No per-domain JS objects: at Common Crawl's ≈ 40M
  // domains those alone outgrew V8's heap. The files' own order is checked below on the row groups' domain64 statistics.
  await conn.run('CREATE OR REPLACE TEMP TABLE pass_files (f VARCHAR, file_key VARCHAR, dataset_id INTEGER)');
  await appendTo(conn, 'pass_files', (app) => {
    for (const t of w.targets) {
      app.appendVarchar(tmpOf(t));
      app.appendVarchar(t.key);
      app.appendInteger(t.datasetId);
      app.endRow();
    }
  });
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE pass_runs AS SELECT filename AS f, domain64, any_value(domain) AS domain, count(*) AS n
     FROM read_parquet(${sqlList(w.targets.map(tmpOf))}, hive_partitioning = false, filename = true) GROUP BY ALL`,
  );
  await conn.run(
    `INSERT INTO new_postings SELECT p.file_key, p.dataset_id, r.domain, r.domain64,
       coalesce(sum(r.n) OVER (PARTITION BY r.f ORDER BY r.domain64 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS first, r.n
     FROM pass_runs r JOIN pass_files p USING (f)`,
  );
  const counts = new Map<string, number>();
  const byPath = new Map(w.targets.map((t) => [tmpOf(t), t]));
  for (const r of await queryRows(conn, 'SELECT f, sum(n) AS n FROM pass_runs GROUP BY f')) {
    const t = byPath.get(r['f'] as string)!;
    counts.set(`${t.datasetId}/${t.prefix}`, Number(r['n']));
  }
  await conn.run('DROP TABLE pass_runs');
  await conn.run('DROP TABLE pass_files');
  const groups = new Map<string, [number, number][]>();
  const meta = await queryRows(
    conn,
    `SELECT file_name AS f, row_group_id AS g, any_value(row_group_num_rows) AS n, any_value(stats_min_value) AS lo, any_value(stats_max_value) AS hi
     FROM parquet_metadata(${sqlList(w.targets.map(tmpOf))}) WHERE path_in_schema = 'domain64' GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  let last: { f: string; hi: bigint } | null = null;
  for (const m of meta) {
    const f = m['f'] as string;
    const list = groups.get(f) ?? [];
    const at = list.reduce((s, [, n]) => s + n, 0);
    list.push([at, Number(m['n'])]);
    groups.set(f, list);
    // Row groups must follow each other in domain64 order, or the postings above do not describe the file.
    const lo = BigInt(m['lo'] as string);
    if (last !== null && last.f === f && lo < last.hi) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lake file is not sorted by domain', { file: f });
    last = { f, hi: BigInt(m['hi'] as string) };
  }
  for (const t of w.targets) {
    const id = `${t.datasetId}/${t.prefix}`;
    const written = (groups.get(tmpOf(t)) ?? []).reduce((s, [, n]) => s + n, 0);
    if (written !== (counts.get(id) ?? 0) || written !== (expected.get(id) ?? 0)) {
      throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lake file row count differs from its inputs', { key: t.key, written, expected: expected.get(id) ?? 0 });
    }
  }
  // The facts of the domains receiving new rows, over every row the version holds of them: the staged rows, the runs
  // folded in (less their superseded rows) and the runs kept — what the new files and the kept runs hold. Only those domains' facts change (a superseded row's replacement is a new row of the same domain); the
  // others of the partition keep theirs, so the cost follows the new rows' domains, not the partitions.
  if (w.facts !== undefined && withNew.length > 0) {
    await conn.run(`CREATE OR REPLACE TEMP TABLE facts_domains AS SELECT DISTINCT dataset_id::INTEGER AS dataset_id, domain64 FROM staged WHERE ${targetsWhere(withNew)}`);
    const files = withNew.flatMap((t) => [...t.old, ...(t.keep ?? [])].map((o) => ({ path: o.path, datasetId: t.datasetId, fileId: o.fileId })));
    await addFacts(conn, { staged: targetsWhere(withNew), files }, w.facts, 'facts_domains');
    await conn.run('DROP TABLE facts_domains');
  }
  const entries: LakeFileEntry[] = new Array(w.targets.length);
  await runLanes(w.targets.length, w.putConcurrency ?? 8, async (i) => {
    const t = w.targets[i]!;
    const bytes = await readFile(tmpOf(t));
    // its row-group locator alongside (both stay invisible until the manifest flips; GC sweeps either if we crash)
    const loc = buildLocator(bytes);
    const locator = { key: indexLayout.locatorOf(t.key), bytes: loc.length, crc32: crcOf(loc) };
    await Promise.all([store.put(locator.key, loc), store.put(t.key, bytes)]);
    const crc32 = crcOf(bytes);
    await w.cache?.adoptFile({ key: t.key, bytes: bytes.length, crc32 }, tmpOf(t));
    const rowGroups = groups.get(tmpOf(t)) ?? [];
    entries[i] = { key: t.key, datasetId: t.datasetId, prefix: t.prefix, rows: rowGroups.reduce((s, [, n]) => s + n, 0), bytes: bytes.length, crc32, rowGroups, locator };
  });
  await rm(out, { recursive: true, force: true });
  return { entries };
}

/** A static predicate on (dataset_id, prefix), so a scan of rows stored in that order skips other stretches. */
function targetsWhere(targets: readonly { datasetId: number; prefix: string }[]): string {
  const byDataset = new Map<number, string[]>();
  for (const t of targets) byDataset.set(t.datasetId, [...(byDataset.get(t.datasetId) ?? []), t.prefix]);
  return [...byDataset].map(([d, ps]) => `(dataset_id = ${d} AND prefix IN (${ps.map(sqlString).join(', ')}))`).join(' OR ');
}
