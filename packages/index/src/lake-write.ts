import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { PART_COLUMNS, DUCKDB_VECTOR_SIZE } from '@ccpipe/adapters';
import type { ObjectStore } from '@ccpipe/core';
import { queryRows, sqlList, sqlString } from './duck';
import { crcOf, type LakeFileEntry } from './format';

/** Columns of a lake file, in file order: `domain64` first, then the part's columns without `dataset_id` (a hive key). */
export const LAKE_COLUMNS: readonly string[] = ['domain64', ...PART_COLUMNS.map((c) => c.name).filter((n) => n !== 'dataset_id')];

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
  /** Partitions with new rows: [datasetId, prefix] → object key of their new file. */
  targets: { datasetId: number; prefix: string; key: string }[];
  /** Local paths of the previous files of those partitions (hive paths: dataset_id and domain_prefix come from them). */
  oldPaths: string[];
  rowGroupSize: number;
  compressionLevel: number;
  tmpDir: string;
  dropText: boolean;
  /** Files written to the store at once (default 8): each put fsyncs, so overlapping them hides the latency. */
  putConcurrency?: number;
}

/**
 * Rewrites every partition (dataset_id, domain_prefix) with new rows in one pass: the previous files of those
 * partitions plus the new rows of table `src` (with domain64 and prefix), one row per (dataset, canonical URL) — the
 * latest capture wins (ts, then the later batch part, then the WARC position) — sorted by (domain64, url), ZSTD,
 * fixed row groups. Files go through the store; returns their registry entries and each domain's row run.
 * Deterministic for the same inputs.
 */
export async function writeLake(conn: DuckDBConnection, store: ObjectStore, w: LakeWrite): Promise<{ entries: LakeFileEntry[]; postings: FilePosting[] }> {
  const cols = LAKE_COLUMNS.map((c) => (c === 'text' && w.dropText ? 'NULL::VARCHAR AS text' : c)).join(', ');
  const old = w.oldPaths.length === 0
    ? ''
    : `UNION ALL BY NAME SELECT dataset_id, domain_prefix AS prefix, ${cols}, '' AS _src FROM read_parquet(${sqlList(w.oldPaths)},
         hive_partitioning = true, hive_types = {'dataset_id': BIGINT, 'domain_prefix': VARCHAR})`;
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE merged AS
     SELECT * EXCLUDE (_src, _k), row_number() OVER (PARTITION BY dataset_id, prefix ORDER BY domain64, url) - 1 AS _rn FROM (
       SELECT *, row_number() OVER (PARTITION BY dataset_id, url ORDER BY ts DESC, _src DESC, warc_filename DESC, warc_offset DESC) AS _k
       FROM (SELECT dataset_id::BIGINT AS dataset_id, prefix, ${cols}, _src FROM src ${old})
     ) WHERE _k = 1 ORDER BY dataset_id, prefix, _rn`,
  );
  const rg = Math.ceil(w.rowGroupSize / DUCKDB_VECTOR_SIZE) * DUCKDB_VECTOR_SIZE;
  const tmpOf = (t: { datasetId: number; prefix: string }) => join(w.tmpDir, `lake-${t.datasetId}-${t.prefix}.parquet`);
  for (const t of w.targets) {
    await conn.run(
      `COPY (SELECT ${LAKE_COLUMNS.join(', ')} FROM merged WHERE dataset_id = ${t.datasetId} AND prefix = ${sqlString(t.prefix)} ORDER BY _rn)
       TO ${sqlString(tmpOf(t))} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${w.compressionLevel}, ROW_GROUP_SIZE ${rg})`,
    );
  }
  const keyOf = new Map(w.targets.map((t) => [`${t.datasetId}/${t.prefix}`, t.key]));
  const postings: FilePosting[] = (
    await queryRows(conn, 'SELECT dataset_id AS s, prefix AS p, any_value(domain) AS d, min(_rn) AS f, count(*) AS n FROM merged GROUP BY dataset_id, prefix, domain64')
  ).map((r) => ({ fileKey: keyOf.get(`${Number(r['s'])}/${r['p'] as string}`)!, datasetId: Number(r['s']), domain: r['d'] as string, first: Number(r['f']), rows: Number(r['n']) }));
  await conn.run('DROP TABLE merged');
  const groups = new Map<string, [number, number][]>();
  const meta = await queryRows(
    conn,
    `SELECT file_name AS f, row_group_id AS g, any_value(row_group_num_rows) AS n FROM parquet_metadata(${sqlList(w.targets.map(tmpOf))}) GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  for (const m of meta) {
    const list = groups.get(m['f'] as string) ?? [];
    const at = list.reduce((s, [, n]) => s + n, 0);
    list.push([at, Number(m['n'])]);
    groups.set(m['f'] as string, list);
  }
  const entries: LakeFileEntry[] = new Array(w.targets.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < w.targets.length) {
      const i = next++;
      const t = w.targets[i]!;
      const bytes = await readFile(tmpOf(t));
      await store.put(t.key, bytes);
      const rowGroups = groups.get(tmpOf(t)) ?? [];
      entries[i] = { key: t.key, datasetId: t.datasetId, prefix: t.prefix, rows: rowGroups.reduce((s, [, n]) => s + n, 0), bytes: bytes.length, crc32: crcOf(bytes), rowGroups };
    }
  };
  await Promise.all(Array.from({ length: Math.min(w.putConcurrency ?? 8, w.targets.length) }, lane));
  return { entries, postings };
}
