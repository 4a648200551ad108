import { randomBytes } from 'node:crypto';
import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { PART_COLUMNS, DUCKDB_VECTOR_SIZE } from '@ccpipe/adapters';
import type { ObjectStore } from '@ccpipe/core';
import { queryRows, sqlString } from './duck';
import { crcOf, type LakeFileEntry } from './format';

/** Columns of a lake file, in file order: `domain64` first, then the part's columns without `dataset_id` (a hive key). */
export const LAKE_COLUMNS: readonly string[] = ['domain64', ...PART_COLUMNS.map((c) => c.name).filter((n) => n !== 'dataset_id')];

/** Rows of one domain in a freshly written lake file. */
export interface FilePosting {
  domain: string;
  first: number;
  rows: number;
}

/** Options of one partition rewrite. */
export interface PartitionWrite {
  datasetId: number;
  prefix: string;
  /** Object key of the new file. */
  key: string;
  /** Local path of the partition's previous file, or null when the partition is new. */
  oldPath: string | null;
  rowGroupSize: number;
  compressionLevel: number;
  tmpDir: string;
  dropText: boolean;
}

/**
 * Rewrites one hive partition (dataset_id, domain_prefix): its previous file plus the new rows of table `src`
 * (already joined with their domain64 and prefix), one row per canonical URL — the latest capture wins (ts, then the
 * later batch part) — sorted by (domain64, url), ZSTD, fixed row groups. Writes the file through the store and
 * returns its registry entry and each domain's row run. Deterministic for the same inputs.
 */
export async function writePartition(conn: DuckDBConnection, store: ObjectStore, w: PartitionWrite): Promise<{ entry: LakeFileEntry; postings: FilePosting[] }> {
  const cols = LAKE_COLUMNS.map((c) => (c === 'text' && w.dropText ? 'NULL::VARCHAR AS text' : c)).join(', ');
  const fresh = `SELECT ${cols}, _src FROM src WHERE dataset_id = ${w.datasetId} AND prefix = ${sqlString(w.prefix)}`;
  const old = w.oldPath === null ? '' : `UNION ALL BY NAME SELECT ${LAKE_COLUMNS.join(', ')}, '' AS _src FROM read_parquet(${sqlString(w.oldPath)}, hive_partitioning = false)`;
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE p AS
     SELECT * EXCLUDE (_src, _k), row_number() OVER (ORDER BY domain64, url) - 1 AS _rn FROM (
       SELECT *, row_number() OVER (PARTITION BY url ORDER BY ts DESC, _src DESC, warc_filename DESC, warc_offset DESC) AS _k
       FROM (${fresh} ${old})
     ) WHERE _k = 1`,
  );
  const file = join(w.tmpDir, `lake-${process.pid}-${randomBytes(6).toString('hex')}.parquet`);
  try {
    const rg = Math.ceil(w.rowGroupSize / DUCKDB_VECTOR_SIZE) * DUCKDB_VECTOR_SIZE;
    await conn.run(
      `COPY (SELECT ${LAKE_COLUMNS.join(', ')} FROM p ORDER BY _rn) TO ${sqlString(file)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${w.compressionLevel}, ROW_GROUP_SIZE ${rg})`,
    );
    const postings = (await queryRows(conn, 'SELECT any_value(domain) AS d, min(_rn) AS f, count(*) AS n FROM p GROUP BY domain64 ORDER BY domain64')).map((r) => ({
      domain: r['d'] as string,
      first: Number(r['f']),
      rows: Number(r['n']),
    }));
    const groups = await queryRows(conn, `SELECT row_group_id AS g, any_value(row_group_num_rows) AS n FROM parquet_metadata(${sqlString(file)}) GROUP BY 1 ORDER BY 1`);
    const rowGroups: [number, number][] = [];
    let at = 0;
    for (const g of groups) {
      rowGroups.push([at, Number(g['n'])]);
      at += Number(g['n']);
    }
    const bytes = await readFile(file);
    await store.put(w.key, bytes);
    await conn.run('DROP TABLE p');
    const entry: LakeFileEntry = { key: w.key, datasetId: w.datasetId, prefix: w.prefix, rows: at, bytes: bytes.length, crc32: crcOf(bytes), rowGroups };
    return { entry, postings };
  } finally {
    await unlink(file).catch(() => undefined);
  }
}
