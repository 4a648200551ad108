import { xxh3 } from '@node-rs/xxhash';
import type { DuckDBConnection } from '@duckdb/node-api';
import { appendTo, queryRows, sqlList, streamColumns } from './duck';

/**
 * Keeps url_id collisions apart (docs/keys.md) among the new rows of temp table `staged` (url_id, url): every URL
 * already in the collision map `map` first gets its substitute id there; then every url_id shared by two different
 * canonical URLs — among the new rows or between a new row and the lake files `lakePaths` — keeps its id for the
 * URL that had it first (the one in the lake, else the smallest URL) and gives each other URL the first id
 * `xxh3(url, seed = 1, 2, …)` not used by any URL involved or any mapped URL. Updates `map` (url → signed id as
 * decimal string) and the staged rows; returns how many URLs got a new substitute. Reads the lake's url_id column (a
 * semi-join), so its cost grows with the lake. Leaves the lake rows it found in temp table `lake_hits (file, _r,
 * url_id, url)` (file numbers: `lake_hit_files (file, filename)`): every lake row whose id a new row had before this call's substitutions — a superset of the rows
 * the new ones supersede, which the de-duplication (dropSuperseded) reads instead of scanning the lake again.
 */
export async function resolveCollisions(
  conn: DuckDBConnection, lakePaths: readonly string[], map: Record<string, string>, lakeHasIds = true, side?: DuckDBConnection,
): Promise<number> {
  await conn.run('CREATE OR REPLACE TEMP TABLE cmap (url VARCHAR PRIMARY KEY, id BIGINT)');
  await applyMap(conn, Object.entries(map));

  // a hit names its file by number (lake_hit_files: number → path), not by path: a new crawl overlapping the lake's
  // crawls has a hit per overlapping URL and dataset, and a path is ≈ 100 B against the row's 4
  await conn.run('CREATE OR REPLACE TEMP TABLE lake_hit_files (file INTEGER, filename VARCHAR)');
  await appendTo(conn, 'lake_hit_files', (app) => {
    lakePaths.forEach((path, i) => {
      app.appendInteger(i);
      app.appendVarchar(path);
      app.endRow();
    });
  });
  await conn.run('CREATE OR REPLACE TEMP TABLE lake_hits (file INTEGER, _r BIGINT, url_id BIGINT, url VARCHAR)');
  if (lakePaths.length > 0 && lakeHasIds) {
    await conn.run(
      `INSERT INTO lake_hits SELECT file_index::INTEGER, file_row_number, url_id, url
       FROM read_parquet(${sqlList(lakePaths)}, hive_partitioning = false, file_row_number = true) WHERE url_id IN (SELECT url_id FROM staged)`,
    );
  } else if (lakePaths.length > 0) {
    if (side === undefined) throw new Error('resolveCollisions needs a second connection to hash a lake without url_id');
    await hashLakeIds(conn, side, lakePaths, map);
  }
  const lake = 'SELECT DISTINCT url_id, url FROM lake_hits';
  const rows = await queryRows(
    conn,
    // Narrow on integers first: only an id seen more than once among the new rows, or also in the lake, can be
    // shared by two URLs; only those ids' rows are looked at with their URLs (re-captures and overlaps with the
    // lake, not every row). Exact. Grouping every row's (url_id, url) or min/max(url) per id held the strings of
    // all rows (2.2 GiB RSS at 10M); DuckDB's hash(url) instead of the URL missed 5 real collisions among 10M
    // synthetic URLs whose ids came from that same hash.
    `WITH n AS (SELECT url_id, count(*) AS k FROM staged GROUP BY url_id),
     l AS (${lake}),
     cand AS (SELECT url_id FROM n WHERE k > 1 UNION SELECT url_id FROM l),
     nc AS (SELECT DISTINCT url_id, url FROM staged WHERE url_id IN (SELECT url_id FROM cand)),
     a AS (SELECT url_id, url, 1 AS in_lake FROM l UNION ALL SELECT url_id, url, 0 AS in_lake FROM nc),
     c AS (SELECT url_id FROM a GROUP BY url_id HAVING count(DISTINCT url) > 1)
     SELECT url_id, url, max(in_lake) AS in_lake FROM a WHERE url_id IN (SELECT url_id FROM c) GROUP BY url_id, url ORDER BY url_id, in_lake DESC, url`,
  );
  if (rows.length === 0) return 0;
  const used = new Set<bigint>(Object.values(map).map((v) => BigInt(v)));
  for (const r of rows) used.add(r['url_id'] as bigint);
  const added: [string, string][] = [];
  let prevId: bigint | null = null;
  for (const r of rows) {
    const id = r['url_id'] as bigint;
    const url = r['url'] as string;
    if (id !== prevId) {
      prevId = id; // the first URL of each id (in the lake, else smallest) keeps it
      continue;
    }
    let seed = 1n;
    let sub = BigInt.asIntN(64, xxh3.xxh64(url, seed));
    while (used.has(sub)) sub = BigInt.asIntN(64, xxh3.xxh64(url, ++seed));
    used.add(sub);
    map[url] = sub.toString();
    added.push([url, sub.toString()]);
  }
  await applyMap(conn, added);
  return added.length;
}

/** Gives the staged rows of each URL in `entries` its substitute id (through temp table `cmap`, emptied first). */
async function applyMap(conn: DuckDBConnection, entries: readonly [string, string][]): Promise<void> {
  if (entries.length === 0) return;
  await conn.run('DELETE FROM cmap');
  await appendTo(conn, 'cmap', (app) => {
    for (const [url, id] of entries) {
      app.appendVarchar(url);
      app.appendBigInt(BigInt(id));
      app.endRow();
    }
  });
  await conn.run('UPDATE staged SET url_id = cmap.id FROM cmap WHERE staged.url = cmap.url');
}

/**
 * Fills table `lake_hits (file, _r, url_id, url)` (file: index into `lakePaths`) with the lake rows whose id (`map[url] ?? xxh3(url)`) is also
 * the id of a new row (table `staged`). The lake's url column is streamed chunk by chunk and hashed; the new ids are held as one sorted
 * BigInt64Array (8 B each), so memory is O(new rows), not O(lake). The lake is streamed on `side`, a second
 * connection of the same database, because `conn` appends meanwhile.
 */
async function hashLakeIds(conn: DuckDBConnection, side: DuckDBConnection, lakePaths: readonly string[], map: Record<string, string>): Promise<void> {
  const ids: bigint[] = [];
  for await (const [col] of streamColumns(conn, 'SELECT DISTINCT url_id FROM staged')) for (const v of col!) ids.push(v as bigint);
  const sorted = BigInt64Array.from(ids).sort();
  const has = (id: bigint): boolean => {
    let lo = 0;
    let hi = sorted.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = sorted[mid]!;
      if (v === id) return true;
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  };
  await appendTo(conn, 'lake_hits', async (app) => {
    // streamed on `side`: the appender flushes on `conn` as it goes, which would end a stream there
    const sql = `SELECT url, file_index::INTEGER, file_row_number::INTEGER FROM read_parquet(${sqlList(lakePaths)}, hive_partitioning = false, file_row_number = true)`;
    for await (const [urls, files, rows] of streamColumns(side, sql)) {
      for (let k = 0; k < urls!.length; k++) {
        const url = urls![k] as string;
        const m = map[url];
        const id = m !== undefined ? BigInt(m) : BigInt.asIntN(64, xxh3.xxh64(url));
        if (!has(id)) continue;
        app.appendInteger(files![k] as number);
        app.appendBigInt(BigInt(rows![k] as number));
        app.appendBigInt(id);
        app.appendVarchar(url);
        app.endRow();
      }
    }
  });
}
