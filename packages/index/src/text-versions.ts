import type { DuckDBConnection } from '@duckdb/node-api';
import { appendTo, queryRows, sqlList } from './duck';

/**
 * The content-versions policy at merge (`MergeOptions.textVersions`, docs/webtable.md): of a URL's captures across
 * datasets only the newest N keep their text (capture time, then the higher dataset id: core `compareNewestFirst`);
 * older captures keep their row without it. A web table keeps its last 3 cell versions the same way.
 *
 * A merge only has to look at the URLs its new rows touch: the lake already obeys the policy for every other URL.
 * Of those URLs it reads the captures the lake holds (table `lake_hits`, which the collision check left: every lake
 * row sharing an id with a new row, in every dataset) with their time, adds the new rows, and ranks them. A capture
 * ranked beyond N loses its text now if it had it before this merge: a new row (its `staged` text is set to null), or
 * a lake row ranked within N among the lake's own captures (it has kept its text so far) — those are listed in table
 * `strip_old (_f, _r)` and their files are rewritten with the text of those rows null.
 *
 * With `scope: 'all'` (the lake was written under no policy or a looser one) every lake row is ranked, not only
 * those the new rows touch, and every lake row beyond N is listed: a one-off pass over the lake's key and time
 * columns, and a rewrite of the files holding such rows.
 */
export interface TextVersionsInput {
  versions: number;
  /** The previous version's lake files, in files.json order: `lake_hits.file` indexes them, their ids are -(i + 1). */
  files: readonly { path: string; datasetId: number }[];
  scope: 'hits' | 'all';
  /** Whether table `staged` exists (a merge with new rows). */
  staged: boolean;
  /** The lake's key column: url_id, or url in a lake without it ('lean'). Only read with scope 'all'. */
  key: 'url_id' | 'url';
  /**
   * What happens to the new rows that lose their text: their `staged` text is set to null ('clear', the default), or
   * they are listed in temp table `strip_new (_f, _r)` ('list': `staged` holds only keys, and the merge's tasks stage
   * the rows: merge-stage.ts).
   */
  newText?: 'clear' | 'list';
}

/** What {@link markTextVersions} found. */
export interface TextVersionsResult {
  /** New rows whose text was set to null. */
  newRows: number;
  /** Lake rows listed in strip_old, and the ids (-(i + 1)) of the files holding them with how many rows each. */
  oldRows: number;
  files: Map<number, number>;
}

/** The lake file id of `files[i]` as lose_old and strip_old name it. */
export const lakeFileId = (i: number): number => -(i + 1);

/**
 * Applies the policy (see {@link TextVersionsInput}) after dropSuperseded: clears (or lists) the text of new rows
 * beyond the newest `versions` and fills table `strip_old (_f, _r)` with the lake rows that lose their text. Needs tables
 * `lake_hits` (scope 'hits') and `lose_old`.
 */
export async function markTextVersions(conn: DuckDBConnection, t: TextVersionsInput): Promise<TextVersionsResult> {
  if (!Number.isInteger(t.versions) || t.versions < 1) throw new RangeError(`text versions must be a whole number ≥ 1, not ${t.versions}`);
  await conn.run('CREATE OR REPLACE TEMP TABLE strip_old (_f INTEGER, _r BIGINT)');
  if (t.newText === 'list') await conn.run('CREATE OR REPLACE TEMP TABLE strip_new (_f INTEGER, _r BIGINT)');
  await conn.run('CREATE OR REPLACE TEMP TABLE tv_files (file INTEGER, filename VARCHAR, dataset_id BIGINT)');
  await appendTo(conn, 'tv_files', (app) => {
    t.files.forEach((f, i) => {
      app.appendInteger(i);
      app.appendVarchar(f.path);
      app.appendBigInt(BigInt(f.datasetId));
      app.endRow();
    });
  });
  const n = t.versions;
  const paths = t.files.map((f) => f.path);
  // the lake's captures of the URLs in question, with their rank among the lake's own captures (rk_old)
  let old: string;
  if (t.scope === 'hits') {
    if (!t.staged) return { newRows: 0, oldRows: 0, files: new Map() };
    // a URL with at most N captures in all keeps every text: narrowed on integers before any file is read
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE tv_keys AS SELECT k FROM (SELECT url_id AS k FROM staged UNION ALL SELECT url_id FROM lake_hits) GROUP BY k HAVING count(*) > ${n}`,
    );
    const hitFiles = (await queryRows(conn, 'SELECT DISTINCT f.filename AS p FROM lake_hits h JOIN tv_files f USING (file) WHERE h.url_id IN (SELECT k FROM tv_keys) ORDER BY 1'))
      .map((r) => r['p'] as string);
    // no lake capture in question (a first merge, say): the new rows are ranked among themselves
    old = hitFiles.length === 0 ? 'SELECT url_id AS k, ts, dataset_id, _f, _r FROM staged WHERE FALSE' : `SELECT h.url_id AS k, o.ts, f.dataset_id, -(f.file + 1) AS _f, h._r
      FROM read_parquet(${sqlList(hitFiles)}, hive_partitioning = false, filename = true, file_row_number = true) o
      JOIN tv_files f ON f.filename = o.filename
      JOIN lake_hits h ON h.file = f.file AND h._r = o.file_row_number
      WHERE h.url_id IN (SELECT k FROM tv_keys)`;
  } else {
    if (paths.length === 0) return { newRows: 0, oldRows: 0, files: new Map() };
    old = `SELECT o.${t.key} AS k, o.ts, f.dataset_id, -(f.file + 1) AS _f, o.file_row_number AS _r
      FROM read_parquet(${sqlList(paths)}, hive_partitioning = false, filename = true, file_row_number = true) o
      JOIN tv_files f ON f.filename = o.filename`;
  }
  const newKey = t.scope === 'all' ? t.key : 'url_id';
  const fresh = t.staged
    ? `UNION ALL SELECT ${newKey} AS k, ts, dataset_id, _f, _r, 0 AS rk_old FROM staged
       ${t.scope === 'hits' ? 'WHERE url_id IN (SELECT k FROM tv_keys)' : ''}`
    : '';
  // scope 'all': every lake row beyond N loses its text (rk_old 0 counts as "had it"); 'hits': only those that had it
  const hadText = t.scope === 'all' ? 'TRUE' : `rk_old <= ${n}`;
  await conn.run(
    `CREATE OR REPLACE TEMP TABLE tv_drop AS
     WITH o AS (SELECT *, row_number() OVER (PARTITION BY k ORDER BY ts DESC NULLS LAST, dataset_id DESC) AS rk_old FROM (${old})),
     a AS (SELECT k, ts, dataset_id, _f, _r, rk_old FROM o WHERE NOT EXISTS (SELECT 1 FROM lose_old l WHERE l._f = o._f AND l._r = o._r) ${fresh}),
     r AS (SELECT _f, _r, rk_old, row_number() OVER (PARTITION BY k ORDER BY ts DESC NULLS LAST, dataset_id DESC) AS rk FROM a)
     SELECT _f, _r FROM r WHERE rk > ${n} AND (_f > 0 OR ${hadText})`,
  );
  let newRows = 0;
  if (t.staged) {
    newRows = Number((await queryRows(conn, 'SELECT count(*) AS n FROM tv_drop WHERE _f > 0'))[0]!['n']);
    if (newRows > 0 && t.newText === 'list') await conn.run('INSERT INTO strip_new SELECT _f, _r FROM tv_drop WHERE _f > 0');
    else if (newRows > 0) await conn.run('UPDATE staged SET text = NULL WHERE EXISTS (SELECT 1 FROM tv_drop d WHERE d._f > 0 AND d._f = staged._f AND d._r = staged._r)');
  }
  await conn.run('INSERT INTO strip_old SELECT _f, _r FROM tv_drop WHERE _f < 0');
  const byFile = await queryRows(conn, 'SELECT _f, count(*) AS n FROM strip_old GROUP BY _f');
  await conn.run('DROP TABLE tv_drop');
  await conn.run('DROP TABLE IF EXISTS tv_keys');
  return { newRows, oldRows: byFile.reduce((s, r) => s + Number(r['n']), 0), files: new Map(byFile.map((r) => [Number(r['_f']), Number(r['n'])])) };
}
