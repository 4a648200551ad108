import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectStore } from '@ccpipe/core';
import type { DuckDBConnection } from '@duckdb/node-api';
import { appendTo, sqlList, sqlString } from './duck';
import { IndexFormatError, crcOf, indexLayout, parseJson, type LakeFileEntry, type VersionToc } from './format';

/**
 * Secondary orderings of the web table, one set per dataset, immutable per version: every row of the dataset's lake
 * files as a pointer, sorted by capture time (`ts`), by body size (`size`), or by status class then time (`status`) —
 * the time, size and status indexes of a web table. A pointer is the row's *position*: its row number counted over
 * the dataset's lake files in files.json order, so an ordering stays valid exactly as long as the dataset's files do;
 * a merge rebuilds the orderings of the datasets it writes to and carries the others over by key.
 *
 * Files: `order/dataset_id=<N>/<kind>-<version>.parquet`, sorted by their key columns, row groups of
 * {@link ORDERING_ROW_GROUP} rows with min/max statistics, so a range of keys is found by the footer's statistics and
 * one row group's decode:
 *
 * | kind | columns (in sort order) |
 * |---|---|
 * | `ts` | `ts` (INT64 epoch ms), `pos` (INT64) |
 * | `size` | `size` (INT64 content_length), `pos` (rows without a content_length are left out) |
 * | `status` | `cls` (INT32 status / 100), `ts`, `pos`, `status` (INT32); rows outside 2xx only |
 */
export type OrderingKind = 'ts' | 'size' | 'status';
export const ORDERING_KINDS: readonly OrderingKind[] = ['ts', 'size', 'status'];

/** One ordering file of a version (listed in `index/<v>/orderings.json`). */
export interface OrderingFile {
  datasetId: number;
  kind: OrderingKind;
  key: string;
  bytes: number;
  crc32: number;
  rows: number;
}

/** Rows per row group of an ordering file (a multiple of DuckDB's 2048-row vectors). */
export const ORDERING_ROW_GROUP = 16_384;

export const orderingKey = (datasetId: number, kind: OrderingKind, version: string): string => `order/dataset_id=${datasetId}/${kind}-${version}.parquet`;

export const ORDERING_PREFIX = 'order/';

/** The dataset's lake files in position order (files.json order) with the position of each one's first row. */
export function positionsOf(files: readonly LakeFileEntry[], datasetId: number): { file: LakeFileEntry; base: number }[] {
  let base = 0;
  const out: { file: LakeFileEntry; base: number }[] = [];
  for (const f of files) {
    if (f.datasetId !== datasetId) continue;
    out.push({ file: f, base });
    base += f.rows;
  }
  return out;
}

const SQL: Record<OrderingKind, string> = {
  ts: 'SELECT ts, pos FROM ord ORDER BY ts, pos',
  size: 'SELECT size, pos FROM ord WHERE size IS NOT NULL ORDER BY size, pos',
  // 2xx rows are left out: they are most rows (a permutation of them would cost as much as the time ordering), and a
  // query for them walks the time ordering, where they are dense
  status: 'SELECT (status // 100)::INTEGER AS cls, ts, pos, status FROM ord WHERE status // 100 <> 2 ORDER BY cls, ts, pos',
};

/** Options of {@link writeOrderings}. */
export interface WriteOrderingsOptions {
  version: string;
  /** The new version's lake files, in files.json order. */
  files: readonly LakeFileEntry[];
  /** Datasets whose lake files this merge changed: their orderings are built anew. */
  rebuild: ReadonlySet<number>;
  /** The previous version's orderings: those of every other dataset are carried over as they are. */
  previous: readonly OrderingFile[];
  /** Local paths of lake files (in place, or staged through the merge's inputs). */
  pathsOf: (keys: readonly string[]) => Promise<string[]>;
  /** Lets go of what `pathsOf` staged (called after each dataset). */
  releasePaths?: (keys: readonly string[]) => Promise<void>;
  /** Whether the lake holds `content_length` (lake columns 'api' written before it did not): no size ordering without. */
  withSize: boolean;
  tmpDir: string;
  /** Rows per row group (default {@link ORDERING_ROW_GROUP}). */
  rowGroupSize?: number;
}

/**
 * Writes the orderings of the datasets in `opts.rebuild` (reading the ts, status and content_length of their lake
 * files once) and returns them with the carried-over ones of the other datasets that still have files, by dataset
 * then kind. Each file is written to a temp file, put through `store`, and deleted locally.
 */
export async function writeOrderings(conn: DuckDBConnection, store: ObjectStore, opts: WriteOrderingsOptions): Promise<OrderingFile[]> {
  const live = new Set(opts.files.map((f) => f.datasetId));
  const out = opts.previous.filter((o) => live.has(o.datasetId) && !opts.rebuild.has(o.datasetId));
  for (const datasetId of [...opts.rebuild].filter((d) => live.has(d)).sort((a, b) => a - b)) {
    const at = positionsOf(opts.files, datasetId);
    const paths = await opts.pathsOf(at.map((a) => a.file.key));
    await conn.run('CREATE OR REPLACE TEMP TABLE ord_files (fname VARCHAR, base BIGINT)');
    await appendTo(conn, 'ord_files', (app) => {
      at.forEach((a, i) => {
        app.appendVarchar(paths[i]!);
        app.appendBigInt(BigInt(a.base));
        app.endRow();
      });
    });
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE ord AS
       SELECT epoch_ms(r.ts)::BIGINT AS ts, r.status::INTEGER AS status, ${opts.withSize ? 'r.content_length::BIGINT' : 'NULL::BIGINT'} AS size,
              f.base + r.file_row_number AS pos
       FROM read_parquet(${sqlList(paths)}, file_row_number = true, filename = true, hive_partitioning = false) r JOIN ord_files f ON r.filename = f.fname`,
    );
    for (const kind of ORDERING_KINDS) {
      if (kind === 'size' && !opts.withSize) continue;
      const key = orderingKey(datasetId, kind, opts.version);
      const tmp = join(opts.tmpDir, `order-${datasetId}-${kind}.parquet`);
      await conn.run(`COPY (${SQL[kind]}) TO ${sqlString(tmp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${opts.rowGroupSize ?? ORDERING_ROW_GROUP}, PARQUET_VERSION V2)`);
      const bytes = await readFile(tmp);
      await store.put(key, bytes);
      await rm(tmp, { force: true });
      const counted = kind === 'size' ? 'size IS NOT NULL' : kind === 'status' ? 'status // 100 <> 2' : null;
      const rows = counted === null ? at.reduce((s, a) => s + a.file.rows, 0) : Number((await (await conn.runAndReadAll(`SELECT count(*) FROM ord WHERE ${counted}`)).getRowsJS())[0]![0]);
      out.push({ datasetId, kind, key, bytes: bytes.length, crc32: crcOf(bytes), rows });
    }
    await conn.run('DROP TABLE ord');
    await opts.releasePaths?.(at.map((a) => a.file.key));
  }
  return out.sort((a, b) => a.datasetId - b.datasetId || ORDERING_KINDS.indexOf(a.kind) - ORDERING_KINDS.indexOf(b.kind));
}

/** The name of a version's ordering list, a file of `index/<v>/`. */
export const ORDERINGS_FILE = 'orderings.json';

/**
 * A version's orderings, from its `orderings.json` checked against the CRC32 its version.json records; an empty list
 * for a version written before orderings existed (no such file listed). @throws IndexFormatError on a mismatch
 */
export async function readOrderings(store: ObjectStore, version: string, toc: VersionToc): Promise<OrderingFile[]> {
  const e = toc.files[ORDERINGS_FILE];
  if (e === undefined) return [];
  const b = await store.get(indexLayout.versionFile(version, ORDERINGS_FILE));
  if (b === null || b.length !== e.size || crcOf(b) !== e.crc32) {
    throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'orderings.json does not match its checksum', { version });
  }
  return parseJson<OrderingFile[]>(b, ORDERINGS_FILE);
}
