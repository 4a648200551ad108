import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { NO_TIME, type ObjectStore } from '@ccpipe/core';
import type { DuckDBConnection } from '@duckdb/node-api';
import { appendTo, sqlList, sqlString } from './duck';
import { crcOf, type LakeFileEntry, type VersionToc } from './format';
import { readVersionList } from './version-list';

/**
 * Secondary orderings of the web table, one set per dataset, immutable per version: every row of the dataset's lake
 * files as a pointer, sorted by capture time (`ts`), by body size (`size`), or by status class then time (`status`) —
 * the time, size and status indexes of a web table. A pointer is the row's *position* in its dataset: the file's
 * `posBase` (given when the file is written, past every position given before, kept for the file's life) plus the
 * row's number in the file. A file replaced by a later merge leaves a hole: its positions name no row any more.
 *
 * Two layers, so a small merge does not rebuild the orderings of a big dataset. The **base** covers positions below
 * its `coverEnd` (every file of the dataset when it was built); the **delta** covers the files written since (positions
 * ≥ coverEnd), and is rebuilt by each merge that changes the dataset — in proportion to what was written since the
 * base, not to the dataset. Entries of the base whose file was replaced since are *dead* (readers skip them). When the
 * delta would hold more than {@link DELTA_SHARE} of the dataset's rows, or the base that share of dead entries, the
 * merge rebuilds the base over every file and drops the delta.
 *
 * Files: `order/dataset_id=<N>/<kind>-<version>.parquet` (base) and `<kind>-delta-<version>.parquet`, sorted by their
 * key columns, row groups of {@link ORDERING_ROW_GROUP} rows with min/max statistics, so a range of keys is found by
 * the footer's statistics and one row group's decode:
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
  /** 'delta' for the files written since the base; absent for the base (and in versions before stop 27). */
  layer?: 'delta';
  /** The base's first position past the files it covers (absent before stop 27: it covers every file of the version). */
  coverEnd?: number;
}

/** Rows per row group of an ordering file (a multiple of DuckDB's 2048-row vectors). */
export const ORDERING_ROW_GROUP = 16_384;

/** Above this share of the dataset's rows in the delta (or of dead entries in the base), a merge rebuilds the base. */
export const DELTA_SHARE = 0.25;

export const orderingKey = (datasetId: number, kind: OrderingKind, version: string, layer?: 'delta'): string =>
  `order/dataset_id=${datasetId}/${kind}${layer === 'delta' ? '-delta' : ''}-${version}.parquet`;

export const ORDERING_PREFIX = 'order/';

/**
 * The dataset's lake files by position (their `posBase`; files of a version before positions were kept count theirs
 * over the dataset's files in files.json order), each with the position of its first row.
 */
export function positionsOf(files: readonly LakeFileEntry[], datasetId: number): { file: LakeFileEntry; base: number }[] {
  let base = 0;
  const out: { file: LakeFileEntry; base: number }[] = [];
  for (const f of files) {
    if (f.datasetId !== datasetId) continue;
    out.push({ file: f, base: f.posBase ?? base });
    base += f.rows;
  }
  return out.sort((a, b) => a.base - b.base);
}

/**
 * Gives positions to the files a merge wrote (`written`, entries it made) against the files it keeps (`kept`): each
 * dataset's new files start past the last position of its kept ones — and of every file the previous version had
 * (`previous`), so no position of a replaced file is given again while a base may still name it. A dataset whose kept
 * files have no positions yet (written before stop 27) gets positions for all its files, counted in files.json order;
 * it is returned, as its orderings must be rebuilt whole. Sets `posBase` on the entries (kept ones of such datasets
 * too: they are this merge's copies). Pure but for that.
 */
export function assignPositions(previous: readonly LakeFileEntry[], kept: LakeFileEntry[], written: LakeFileEntry[]): Set<number> {
  const renumbered = new Set<number>();
  const end = new Map<number, number>();
  for (const f of previous) if (f.posBase !== undefined) end.set(f.datasetId, Math.max(end.get(f.datasetId) ?? 0, f.posBase + f.rows));
  for (const f of kept) if (f.posBase === undefined) renumbered.add(f.datasetId);
  for (const d of renumbered) {
    let base = 0;
    for (const f of [...kept, ...written].filter((x) => x.datasetId === d).sort((a, b) => (a.key < b.key ? -1 : 1))) {
      f.posBase = base;
      base += f.rows;
    }
  }
  for (const f of [...written].sort((a, b) => (a.key < b.key ? -1 : 1))) {
    if (renumbered.has(f.datasetId)) continue;
    const at = end.get(f.datasetId) ?? 0;
    f.posBase = at;
    end.set(f.datasetId, at + f.rows);
  }
  return renumbered;
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
  /** The new version's lake files, in files.json order, with their positions ({@link assignPositions}). */
  files: readonly LakeFileEntry[];
  /** Datasets whose lake files this merge changed: their delta (or their base, see {@link DELTA_SHARE}) is built anew. */
  rebuild: ReadonlySet<number>;
  /** Datasets whose positions were given anew ({@link assignPositions}): their base is rebuilt whatever the shares. */
  renumbered?: ReadonlySet<number>;
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

/** Rows of a dataset's base that name a row no more (their file was replaced since the base was built). */
export function deadRows(files: readonly LakeFileEntry[], orderings: readonly OrderingFile[], datasetId: number): number {
  const base = orderings.find((o) => o.datasetId === datasetId && o.kind === 'ts' && o.layer === undefined);
  if (base === undefined || base.coverEnd === undefined) return 0;
  const live = positionsOf(files, datasetId).filter((p) => p.base < base.coverEnd!).reduce((s, p) => s + p.file.rows, 0);
  return base.rows - live;
}

/**
 * Writes the orderings of the datasets in `opts.rebuild` — a delta over the files written since their base, or a new
 * base over every file (see {@link OrderingFile}) — reading the ts, status and content_length of those files once, and
 * returns them with the carried-over ones (other datasets', and the bases kept), by dataset, layer, then kind. Each
 * file is written to a temp file, put through `store`, and deleted locally.
 */
export async function writeOrderings(conn: DuckDBConnection, store: ObjectStore, opts: WriteOrderingsOptions): Promise<OrderingFile[]> {
  const live = new Set(opts.files.map((f) => f.datasetId));
  const out = opts.previous.filter((o) => live.has(o.datasetId) && !opts.rebuild.has(o.datasetId));
  for (const datasetId of [...opts.rebuild].filter((d) => live.has(d)).sort((a, b) => a - b)) {
    const all = positionsOf(opts.files, datasetId);
    const total = all.reduce((s, a) => s + a.file.rows, 0);
    const base = opts.previous.filter((o) => o.datasetId === datasetId && o.layer === undefined);
    const coverEnd = base.find((o) => o.kind === 'ts')?.coverEnd;
    const since = coverEnd === undefined ? all : all.filter((a) => a.base >= coverEnd);
    const sinceRows = since.reduce((s, a) => s + a.file.rows, 0);
    const dead = deadRows(opts.files, opts.previous, datasetId);
    const baseRows = base.find((o) => o.kind === 'ts')?.rows ?? 0;
    const keepBase = coverEnd !== undefined && !(opts.renumbered?.has(datasetId) ?? false) && all.every((a) => a.file.posBase !== undefined)
      && sinceRows <= DELTA_SHARE * total && dead <= DELTA_SHARE * baseRows;
    if (keepBase) {
      out.push(...base);
      if (since.length > 0) out.push(...(await writeLayer(conn, store, opts, datasetId, since, 'delta')));
    } else {
      const files = await writeLayer(conn, store, opts, datasetId, all, undefined);
      const end = all.reduce((m, a) => Math.max(m, a.base + a.file.rows), 0);
      out.push(...files.map((f) => ({ ...f, coverEnd: end })));
    }
  }
  const layerNo = (o: OrderingFile): number => (o.layer === 'delta' ? 1 : 0);
  return out.sort((a, b) => a.datasetId - b.datasetId || layerNo(a) - layerNo(b) || ORDERING_KINDS.indexOf(a.kind) - ORDERING_KINDS.indexOf(b.kind));
}

/** Writes one layer's three orderings over the files `at` (with their positions) of a dataset. */
async function writeLayer(
  conn: DuckDBConnection, store: ObjectStore, opts: WriteOrderingsOptions, datasetId: number, at: readonly { file: LakeFileEntry; base: number }[], layer: 'delta' | undefined,
): Promise<OrderingFile[]> {
  const out: OrderingFile[] = [];
  const paths = await opts.pathsOf(at.map((a) => a.file.key));
  await conn.run('CREATE OR REPLACE TEMP TABLE ord_files (i INTEGER, base BIGINT)');
  await appendTo(conn, 'ord_files', (app) => {
    at.forEach((a, i) => {
      app.appendInteger(i);
      app.appendBigInt(BigInt(a.base));
      app.endRow();
    });
  });
  // files told apart by their index in the list read (an integer per row, not a file name)
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE ord AS
     SELECT coalesce(epoch_ms(r.ts)::BIGINT, ${NO_TIME}) AS ts, r.status::INTEGER AS status, ${opts.withSize ? 'r.content_length::BIGINT' : 'NULL::BIGINT'} AS size,
            f.base + r.file_row_number AS pos
     FROM read_parquet(${sqlList(paths)}, file_row_number = true, hive_partitioning = false) r JOIN ord_files f ON r.file_index = f.i`,
  );
  for (const kind of ORDERING_KINDS) {
    if (kind === 'size' && !opts.withSize) continue;
    const key = orderingKey(datasetId, kind, opts.version, layer);
    const tmp = join(opts.tmpDir, `order-${datasetId}-${kind}${layer === 'delta' ? '-delta' : ''}.parquet`);
    await conn.run(`COPY (${SQL[kind]}) TO ${sqlString(tmp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${opts.rowGroupSize ?? ORDERING_ROW_GROUP}, PARQUET_VERSION V2)`);
    const bytes = await readFile(tmp);
    await store.put(key, bytes);
    await rm(tmp, { force: true });
    const counted = kind === 'size' ? 'size IS NOT NULL' : kind === 'status' ? 'status // 100 <> 2' : null;
    const rows = counted === null ? at.reduce((s, a) => s + a.file.rows, 0) : Number((await (await conn.runAndReadAll(`SELECT count(*) FROM ord WHERE ${counted}`)).getRowsJS())[0]![0]);
    out.push({ datasetId, kind, key, bytes: bytes.length, crc32: crcOf(bytes), rows, ...(layer !== undefined && { layer }) });
  }
  await conn.run('DROP TABLE ord');
  await opts.releasePaths?.(at.map((a) => a.file.key));
  return out;
}

/** The name of a version's ordering list, a file of `index/<v>/`. */
export const ORDERINGS_FILE = 'orderings.json';

/**
 * A version's orderings, from its `orderings.json` checked against the CRC32 its version.json records; an empty list
 * for a version written before orderings existed (no such file listed). @throws IndexFormatError on a mismatch
 */
export async function readOrderings(store: ObjectStore, version: string, toc: VersionToc): Promise<OrderingFile[]> {
  return readVersionList<OrderingFile>(store, version, toc, ORDERINGS_FILE);
}
