import { readFile, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { runLanes, type ObjectStore } from '@ccpipe/core';
import { ShardBuildPool, type SearchDoc } from '@ccpipe/search';
import type { DuckDBConnection } from '@duckdb/node-api';
import { streamColumns, sqlString } from './duck';
import { IndexFormatError, crcOf, type LakeFileEntry, type VersionToc } from './format';
import { readVersionList } from './version-list';

/**
 * Full-text search shards of a version (#21, docs/search.md): one SQLite FTS5 file (@ccpipe/search) per lake file,
 * holding that file's rows with a title or text. A document's rowid is its row number in the lake file, so a hit names
 * a lake row (its position in the dataset is the file's `posBase` plus that number). A shard depends on its lake file
 * alone, so the merge task that writes a lake file builds its shard too (merge-task.ts). Shards built before #23 have
 * the position as rowid; nothing reads a rowid but to order a shard's hits and to bound a domain's run, which both
 * forms do alike.
 *
 * A lake file is immutable, and so is its shard: a merge builds shards for the lake files it writes and carries the
 * others' over, so it rewrites only the shards of partitions its new rows touch. Two exceptions rebuild a kept file's
 * shard: the content-versions policy took the text of some of its rows without rewriting it (those rows leave the
 * shard, as readers hide their text), and a lake file with no shard yet (a lake begun before search: its first merge
 * with search on indexes the whole lake once).
 *
 * Shards live at `search/dataset_id=<N>/domain_prefix=<P>/part-<lake version>-<v>.sqlite` (v: the version that built
 * it), listed with their CRC32 in `index/<v>/search.json`, swept by gc like the lake.
 */
export interface SearchShardEntry {
  key: string;
  /** The lake file it indexes. */
  lakeKey: string;
  datasetId: number;
  prefix: string;
  /** Documents (rows with a title or a text). */
  docs: number;
  bytes: number;
  crc32: number;
  /** UTF-8 bytes of the titles and texts indexed. */
  textBytes: number;
}

export const SEARCH_FILE = 'search.json';
export const SEARCH_PREFIX = 'search/';

/** The lake columns a search shard is built from: a lake without them ('lean' lacks url_id) has no search. */
export const SEARCH_LAKE_COLUMNS = ['url_id', 'url', 'domain', 'ts', 'title', 'text'] as const;

/** The shard of lake file `lakeKey` built by version `version`. */
export function searchShardKey(lakeKey: string, version: string): string {
  const m = /^urls\/(.+)\/part-(v\d+)\.parquet$/.exec(lakeKey);
  if (m === null) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'not a lake file key', { key: lakeKey });
  return `${SEARCH_PREFIX}${m[1]}/part-${m[2]}-${version}.sqlite`;
}

/** Options of {@link writeSearchShards}. */
export interface WriteSearchOptions {
  version: string;
  /** The new version's lake files, with their positions. */
  files: readonly LakeFileEntry[];
  /** The previous version's shards: those of lake files still here are carried over unless listed in `rebuild`. */
  previous: readonly SearchShardEntry[];
  /** Shards of lake files of this version already built (by the merge tasks that wrote the files): taken as they are. */
  built?: readonly SearchShardEntry[];
  /** Kept lake files whose shard is built again, each without the rows listed (row numbers in the file). */
  rebuild?: ReadonlyMap<string, readonly number[]>;
  /** Whether the lake has a `languages` column (kept in the shard). */
  languages: boolean;
  pathsOf: (keys: readonly string[]) => Promise<string[]>;
  releasePaths?: (keys: readonly string[]) => Promise<void>;
  tmpDir: string;
  /**
   * Shards built at once, each on a thread of its own while this thread reads its rows (on a DuckDB connection of its
   * own); default: the machine's cores.
   */
  threads?: number;
  /** Told of each shard built (its documents and build time), for the merge's log and metrics. */
  onShard?: (docs: number, ms: number) => void;
}

/**
 * Builds the shard of every lake file of `opts.files` that has none in `opts.previous` (or is listed in `rebuild`),
 * uploads it, and returns every file's entry (the rest carried over), in lake-key order. A file with no titled or
 * texted row still gets a shard (empty): "no shard" means "not indexed yet".
 */
export async function writeSearchShards(connect: () => Promise<DuckDBConnection>, store: ObjectStore, opts: WriteSearchOptions): Promise<SearchShardEntry[]> {
  const prev = new Map([...opts.previous, ...(opts.built ?? [])].map((e) => [e.lakeKey, e]));
  const files = [...opts.files].sort((a, b) => (a.key < b.key ? -1 : 1));
  const out: SearchShardEntry[] = new Array(files.length);
  const todo: number[] = [];
  files.forEach((f, i) => {
    const old = prev.get(f.key);
    if (old !== undefined && !opts.rebuild?.has(f.key)) out[i] = old;
    else todo.push(i);
  });
  if (todo.length === 0) return out;
  const threads = Math.max(1, Math.min(opts.threads ?? availableParallelism(), todo.length));
  const pool = new ShardBuildPool({ threads });
  const conns: DuckDBConnection[] = [];
  const idle: DuckDBConnection[] = [];
  try {
    await runLanes(todo.length, threads, async (k) => {
      // a connection per lane: a streaming query must have its connection to itself
      let conn = idle.pop();
      if (conn === undefined) conns.push((conn = await connect()));
      const i = todo[k]!;
      const f = files[i]!;
      try {
        const [path] = await opts.pathsOf([f.key]);
        out[i] = await buildSearchShardOf(conn, pool, store, opts, f, path!, opts.rebuild?.get(f.key) ?? []);
      } finally {
        await opts.releasePaths?.([f.key]);
        idle.push(conn);
      }
    });
  } finally {
    for (const c of conns) c.closeSync();
    await pool.close();
  }
  return out;
}

/**
 * Builds the search shard of lake file `f` (its local copy at `path`) on a thread of `pool` while `conn` (a connection
 * of its own: the query streams) reads the file's rows, leaving out rows `drop`; uploads it and returns its entry.
 */
export async function buildSearchShardOf(
  conn: DuckDBConnection, pool: ShardBuildPool, store: ObjectStore, opts: Pick<WriteSearchOptions, 'version' | 'languages' | 'tmpDir' | 'onShard'>,
  f: LakeFileEntry, path: string, drop: readonly number[] = [],
): Promise<SearchShardEntry> {
  const key = searchShardKey(f.key, opts.version);
  const tmp = join(opts.tmpDir, `search-${f.key.replace(/[^A-Za-z0-9]+/g, '_')}.sqlite`);
  const dropped = new Set(drop);
  const lang = opts.languages ? 'languages' : 'NULL::VARCHAR';
  // the lake file's rows in file order (DuckDB keeps a scan's order): each domain one run of positions
  const sql = `SELECT file_row_number AS r, domain, url, CAST(url_id AS VARCHAR) AS id, coalesce(epoch(ts)::BIGINT, -1) AS t, title, text, ${lang} AS lang
    FROM read_parquet(${sqlString(path)}, file_row_number = true, hive_partitioning = false) WHERE title IS NOT NULL OR text IS NOT NULL`;
  async function* docs(): AsyncGenerator<SearchDoc> {
    for await (const [r, domain, url, id, t, title, text, lang] of streamColumns(conn, sql)) {
      for (let i = 0; i < r!.length; i++) {
        const row = Number(r![i]);
        if (dropped.has(row)) continue;
        yield {
          rowId: row, urlId: id![i] as string, url: url![i] as string, domain: domain![i] as string, datasetId: f.datasetId, ts: Number(t![i]),
          title: title![i] as string | null, text: text![i] as string | null, language: lang![i] as string | null,
        };
      }
    }
  }
  const t0 = performance.now();
  const built = await pool.build(tmp, docs());
  const bytes = await readFile(tmp);
  await store.put(key, bytes);
  await rm(tmp, { force: true });
  opts.onShard?.(built.docs, performance.now() - t0);
  return { key, lakeKey: f.key, datasetId: f.datasetId, prefix: f.prefix, docs: built.docs, bytes: bytes.length, crc32: crcOf(bytes), textBytes: built.textBytes };
}

/**
 * A version's search shards, from its `search.json` checked against the CRC32 its version.json records; an empty list
 * for a version without one (written before search, with search off, or from a lake without text). @throws IndexFormatError
 */
export async function readSearchShards(store: ObjectStore, version: string, toc: VersionToc): Promise<SearchShardEntry[]> {
  return readVersionList<SearchShardEntry>(store, version, toc, SEARCH_FILE);
}
