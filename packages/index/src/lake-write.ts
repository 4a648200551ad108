import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { PART_COLUMNS, DUCKDB_VECTOR_SIZE } from '@ccpipe/adapters';
import { runLanes, type ObjectStore } from '@ccpipe/core';
import { queryRows, sqlList, sqlString } from './duck';
import { IndexFormatError, crcOf, type LakeFileEntry } from './format';

/** Columns of a lake file, in file order: `domain64` first, then the part's columns without `dataset_id` (a hive key). */
export const LAKE_COLUMNS: readonly string[] = ['domain64', ...PART_COLUMNS.map((c) => c.name).filter((n) => n !== 'dataset_id')];

/**
 * The narrow column set (`lakeColumns: 'api'`): what the API serves (`/v1/urls`, `/v1/url` with its WARC location)
 * plus `domain` and `raw_url`. The other part columns (host, surt, mime, digest, outlinks, …) stay in the batch
 * parts, which the merger never deletes.
 */
export const LAKE_API_COLUMNS: readonly string[] = [
  'domain64', 'url_id', 'url', 'raw_url', 'domain', 'ts', 'status', 'title', 'text', 'warc_filename', 'warc_offset', 'warc_length',
];

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

/** Rows of one domain in one freshly written lake file. */
export interface FilePosting {
  fileKey: string;
  datasetId: number;
  domain: string;
  first: number;
  rows: number;
}

/** Options of {@link writeLake}. */
export interface LakeWrite {
  /** Partitions to rewrite (non-empty): [datasetId, prefix] → object key of their new file. */
  targets: { datasetId: number; prefix: string; key: string }[];
  /** Local paths of the previous files of those partitions (hive paths: dataset_id and domain_prefix come from them). */
  oldPaths: string[];
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
}

let passSeq = 0;

/**
 * Rewrites a group of partitions (dataset_id, domain_prefix) in one pass (the caller sizes groups so one pass fits
 * the memory limit): the previous files of those partitions plus their new rows of view `src` (with domain64 and
 * prefix), one row per (dataset, canonical URL) — the latest capture wins (ts, then new over old, then the later
 * batch part, then the WARC position) — sorted by (domain64, url), ZSTD, fixed row groups. `raw_url` is stored only where it differs from `url` (null otherwise: readers
 * use `url`). Duplicates are rare, so they are found on the narrow (dataset, url_id) columns first (after
 * collision resolution url_id and canonical URL are one-to-one; an integer groups cheaper than a string; on `url`
 * when the lake has no url_id) and only
 * the losing rows' positions are anti-joined out of the one full-width sort. Files go through the store; returns their registry
 * entries and each domain's row run, read back from the files written.
 * Deterministic for the same inputs. @throws IndexFormatError when a written file is not grouped by domain.
 */
export async function writeLake(conn: DuckDBConnection, store: ObjectStore, w: LakeWrite): Promise<{ entries: LakeFileEntry[]; postings: FilePosting[] }> {
  const expr = (c: string): string => (c === 'text' && w.dropText ? 'NULL::VARCHAR AS text' : c === 'raw_url' ? 'NULLIF(raw_url, url) AS raw_url' : c);
  const cols = w.columns.map(expr).join(', ');
  const old = w.oldPaths.length === 0
    ? ''
    : `UNION ALL BY NAME SELECT dataset_id, domain_prefix AS prefix, ${cols}, filename AS _src, file_row_number AS _r, 0 AS _new FROM read_parquet(${sqlList(w.oldPaths)},
         hive_partitioning = true, hive_types = {'dataset_id': BIGINT, 'domain_prefix': VARCHAR}, filename = true, file_row_number = true)`;
  // A static predicate (not a join), so a scan of rows stored in (dataset, prefix) order skips other stretches.
  const byDataset = new Map<number, string[]>();
  for (const t of w.targets) byDataset.set(t.datasetId, [...(byDataset.get(t.datasetId) ?? []), t.prefix]);
  const where = [...byDataset].map(([d, ps]) => `(dataset_id = ${d} AND prefix IN (${ps.map(sqlString).join(', ')}))`).join(' OR ');
  await conn.run(
    `CREATE OR REPLACE TEMP VIEW all_rows AS SELECT dataset_id::BIGINT AS dataset_id, prefix, ${cols}, _src, _r, 1 AS _new FROM src
     WHERE ${where} ${old}`,
  );
  const key = w.columns.includes('url_id') ? 'url_id' : 'url';
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE lose AS
     WITH dup AS (SELECT dataset_id, ${key} FROM all_rows GROUP BY ALL HAVING count(*) > 1)
     SELECT _src, _r FROM (
       SELECT _src, _r, row_number() OVER (PARTITION BY dataset_id, ${key} ORDER BY ts DESC, _new DESC, _src DESC, warc_filename DESC, warc_offset DESC) AS _k
       FROM all_rows a WHERE EXISTS (SELECT 1 FROM dup WHERE dup.dataset_id = a.dataset_id AND dup.${key} = a.${key})
     ) WHERE _k > 1`,
  );
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE merged AS SELECT dataset_id, prefix, ${w.columns.join(', ')} FROM all_rows a
     WHERE NOT EXISTS (SELECT 1 FROM lose l WHERE l._src = a._src AND l._r = a._r) ORDER BY dataset_id, prefix, domain64, url`,
  );
  // One COPY per partition (~3 ms each beyond the bytes it writes). A single `COPY … PARTITION_BY` was tried: at 1M
  // rows it did not keep the input order within a partition (domains came out split), so it is not used.
  const rg = Math.ceil(w.rowGroupSize / DUCKDB_VECTOR_SIZE) * DUCKDB_VECTOR_SIZE;
  const out = join(w.tmpDir, `pass-${++passSeq}`);
  await mkdir(out, { recursive: true });
  const tmpOf = (t: { datasetId: number; prefix: string }) => join(out, `lake-${t.datasetId}-${t.prefix}.parquet`);
  for (const t of w.targets) {
    await conn.run(
      `COPY (SELECT ${w.columns.join(', ')} FROM merged WHERE dataset_id = ${t.datasetId} AND prefix = ${sqlString(t.prefix)})
       TO ${sqlString(tmpOf(t))} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${w.compressionLevel}, ROW_GROUP_SIZE ${rg}, PARQUET_VERSION ${w.parquetVersion})`,
    );
  }
  // Postings from the sorted table the files were copied from (in its order): each domain is one run, its first
  // row the count of rows before it in its partition. Cheaper than reading the files back; the files' own order is
  // checked below on the row groups' domain64 statistics.
  const byFile = new Map(w.targets.map((t) => [`${t.datasetId}/${t.prefix}`, t]));
  const postings: FilePosting[] = [];
  const counts = new Map<string, number>();
  const runs = await queryRows(
    conn,
    `SELECT dataset_id AS ds, prefix AS p, domain64, any_value(domain) AS d, count(*) AS n FROM merged GROUP BY ALL ORDER BY ds, p, domain64`,
  );
  for (const r of runs) {
    const id = `${Number(r['ds'])}/${r['p'] as string}`;
    const t = byFile.get(id)!;
    const first = counts.get(id) ?? 0;
    const rows = Number(r['n']);
    counts.set(id, first + rows);
    postings.push({ fileKey: t.key, datasetId: t.datasetId, domain: r['d'] as string, first, rows });
  }
  await conn.run('DROP TABLE merged');
  await conn.run('DROP TABLE lose');
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
    const written = (groups.get(tmpOf(t)) ?? []).reduce((s, [, n]) => s + n, 0);
    if (written !== (counts.get(`${t.datasetId}/${t.prefix}`) ?? 0)) {
      throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lake file row count differs from its postings', { key: t.key, written });
    }
  }
  const entries: LakeFileEntry[] = new Array(w.targets.length);
  await runLanes(w.targets.length, w.putConcurrency ?? 8, async (i) => {
      const t = w.targets[i]!;
      const bytes = await readFile(tmpOf(t));
      await store.put(t.key, bytes);
      const rowGroups = groups.get(tmpOf(t)) ?? [];
      entries[i] = { key: t.key, datasetId: t.datasetId, prefix: t.prefix, rows: rowGroups.reduce((s, [, n]) => s + n, 0), bytes: bytes.length, crc32: crcOf(bytes), rowGroups };
  });
  await rm(out, { recursive: true, force: true });
  return { entries, postings };
}
