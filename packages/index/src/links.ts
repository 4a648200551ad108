import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ObjectStore } from '@ccpipe/core';
import type { DuckDBConnection } from '@duckdb/node-api';
import { appendTo, queryRows, sqlList, sqlString } from './duck';
import { crcOf, type LakeFileEntry, type VersionToc } from './format';
import { readVersionList } from './version-list';
import { positionsOf } from './orderings';

/**
 * The link graph of a dataset, page level, immutable per version (docs/links.md). Built by the merge from the lake
 * rows' `outlinks` and `outlink_domains` (canonical targets, written by the workers: core `linkTargets`), over the
 * dataset's live rows only — a URL's superseded captures are not in the lake — so every count is exact within the
 * dataset. A source page is named by its *position* (the lake file's `posBase` plus its row number, as the orderings
 * name rows: orderings.ts), a target by its number in the dataset's target table.
 *
 * Files under `links/dataset_id=<N>/`, each sorted, row groups with min/max statistics (a key is found by the footer's
 * statistics and one row group's decode):
 *
 * | file | one row per | columns (sort order first) |
 * |---|---|---|
 * | `targets-<v>` | linked URL (crawled or not) | `key` = registered domain + ' ' + canonical URL, `inlinks` (distinct source pages), `in_start` (its first row in `in`) |
 * | `in-<v>` | edge | `pos` of the source, by (target, pos) |
 * | `out-<v>` | edge | `pos` of the source, `target` (row of `targets`), by (pos, target) |
 * | `domains-<v>` | linked registered domain | `domain`, `pages` (distinct source pages outside it), `linking_domains`, `dom_start` |
 * | `dom-<v>` | (domain, source page outside it) | `pos`, by (domain, pos) |
 *
 * A target's inlinks are rows [in_start, in_start + inlinks) of `in`; a domain's linking pages rows
 * [dom_start, dom_start + pages) of `dom`. Rebuilt whole for each dataset whose lake files a merge changed, from
 * the dataset's lake (reading its two list columns); carried over otherwise.
 */
export type LinkFileKind = 'targets' | 'in' | 'out' | 'domains' | 'dom';
export const LINK_FILE_KINDS: readonly LinkFileKind[] = ['targets', 'in', 'out', 'domains', 'dom'];

/** One file of a dataset's link graph. */
export interface LinkFile {
  key: string;
  bytes: number;
  crc32: number;
  rows: number;
}

/** A dataset's link graph in a version (listed in `index/<v>/links.json`). */
export interface DatasetLinks {
  datasetId: number;
  /** Edges (source page → target URL, each once per source). */
  edges: number;
  /** Distinct target URLs. */
  targets: number;
  /** Source pages with at least one outlink. */
  sources: number;
  files: Record<LinkFileKind, LinkFile>;
}

export const LINKS_FILE = 'links.json';
export const LINK_PREFIX = 'links/';
/** Rows per row group of a link file: a lookup decodes one. */
export const LINK_ROW_GROUP = 8_192;

export const linkKey = (datasetId: number, kind: LinkFileKind, version: string): string => `${LINK_PREFIX}dataset_id=${datasetId}/${kind}-${version}.parquet`;

/** The lake columns the link graph is built from: a lake without them (begun before #21, or 'api'/'lean') has none. */
export const LINK_LAKE_COLUMNS = ['outlinks', 'outlink_domains'] as const;

/** The sort key of a target: its registered domain, a space (in neither a domain nor a canonical URL), its URL. */
export const targetKey = (domain: string, url: string): string => `${domain} ${url}`;

/** Options of {@link writeLinks}. */
export interface WriteLinksOptions {
  version: string;
  /** The new version's lake files with their positions (orderings.ts `assignPositions`). */
  files: readonly LakeFileEntry[];
  /** Datasets whose lake files this merge changed (or whose positions were given anew): rebuilt. */
  rebuild: ReadonlySet<number>;
  /** The previous version's link graphs: those of every other dataset are carried over. */
  previous: readonly DatasetLinks[];
  pathsOf: (keys: readonly string[]) => Promise<string[]>;
  releasePaths?: (keys: readonly string[]) => Promise<void>;
  tmpDir: string;
  rowGroupSize?: number;
}

/**
 * Writes the link graph of each dataset in `opts.rebuild` from its lake files and returns every dataset's entry (the
 * others carried over), by dataset. A dataset without any edge gets no entry.
 */
export async function writeLinks(conn: DuckDBConnection, store: ObjectStore, opts: WriteLinksOptions): Promise<DatasetLinks[]> {
  const live = new Set(opts.files.map((f) => f.datasetId));
  const out = opts.previous.filter((l) => live.has(l.datasetId) && !opts.rebuild.has(l.datasetId));
  for (const datasetId of [...opts.rebuild].filter((d) => live.has(d)).sort((a, b) => a - b)) {
    const built = await writeDataset(conn, store, opts, datasetId);
    if (built !== null) out.push(built);
  }
  return out.sort((a, b) => a.datasetId - b.datasetId);
}

async function writeDataset(conn: DuckDBConnection, store: ObjectStore, opts: WriteLinksOptions, datasetId: number): Promise<DatasetLinks | null> {
  const at = positionsOf(opts.files, datasetId);
  const paths = await opts.pathsOf(at.map((a) => a.file.key));
  try {
    await conn.run('CREATE OR REPLACE TEMP TABLE lk_files (i INTEGER, base BIGINT)');
    await appendTo(conn, 'lk_files', (app) => {
      at.forEach((a, i) => {
        app.appendInteger(i);
        app.appendBigInt(BigInt(a.base));
        app.endRow();
      });
    });
    // One row per edge. The lists are in step (the worker writes them so; a row whose lists differ in length, which
    // no worker writes, gives no edges rather than misattributed ones).
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE lk_e AS
       SELECT pos, sdom, d || ' ' || u AS key, d AS dom FROM (
         SELECT f.base + r.file_row_number AS pos, r.domain AS sdom, unnest(r.outlinks) AS u, unnest(r.outlink_domains) AS d
         FROM read_parquet(${sqlList(paths)}, file_row_number = true, hive_partitioning = false) r JOIN lk_files f ON r.file_index = f.i
         WHERE len(r.outlinks) > 0 AND len(r.outlinks) = len(r.outlink_domains)
       )`,
    );
    const [counts] = await queryRows(conn, 'SELECT count(*) AS e, count(DISTINCT pos) AS s FROM lk_e');
    const edges = Number(counts!['e']);
    if (edges === 0) return null;
    // targets numbered in key order; a target's inlinks are its edges (a worker writes each target once per page)
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE lk_t AS
       SELECT key, inlinks, (row_number() OVER (ORDER BY key) - 1)::BIGINT AS no,
              (sum(inlinks) OVER (ORDER BY key ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - inlinks)::BIGINT AS in_start
       FROM (SELECT key, count(*)::INTEGER AS inlinks FROM lk_e GROUP BY key)`,
    );
    await conn.run(
      `CREATE OR REPLACE TEMP TABLE lk_d AS
       SELECT dom AS domain, pages, linking_domains,
              (sum(pages) OVER (ORDER BY dom ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - pages)::BIGINT AS dom_start
       FROM (SELECT dom, count(DISTINCT pos)::INTEGER AS pages, count(DISTINCT sdom)::INTEGER AS linking_domains FROM lk_e WHERE sdom <> dom GROUP BY dom)`,
    );
    const sql: Record<LinkFileKind, string> = {
      targets: 'SELECT key, inlinks, in_start FROM lk_t ORDER BY key',
      in: 'SELECT e.pos FROM lk_e e JOIN lk_t t USING (key) ORDER BY t.no, e.pos',
      out: 'SELECT e.pos, t.no AS target FROM lk_e e JOIN lk_t t USING (key) ORDER BY e.pos, t.no',
      domains: 'SELECT domain, pages, linking_domains, dom_start FROM lk_d ORDER BY domain',
      dom: 'SELECT DISTINCT dom, pos FROM lk_e WHERE sdom <> dom ORDER BY dom, pos',
    };
    const rowsOf: Record<LinkFileKind, number> = {
      targets: 0, in: edges, out: edges, domains: 0, dom: 0,
    };
    const files = {} as Record<LinkFileKind, LinkFile>;
    for (const kind of LINK_FILE_KINDS) {
      const key = linkKey(datasetId, kind, opts.version);
      const tmp = join(opts.tmpDir, `links-${datasetId}-${kind}.parquet`);
      const select = kind === 'dom' ? `SELECT pos FROM (${sql.dom})` : sql[kind];
      await conn.run(`COPY (${select}) TO ${sqlString(tmp)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${opts.rowGroupSize ?? LINK_ROW_GROUP}, PARQUET_VERSION V2)`);
      const bytes = await readFile(tmp);
      await store.put(key, bytes);
      await rm(tmp, { force: true });
      if (kind === 'targets' || kind === 'domains' || kind === 'dom') {
        const table = kind === 'targets' ? 'lk_t' : kind === 'domains' ? 'lk_d' : `(${sql.dom})`;
        rowsOf[kind] = Number((await queryRows(conn, `SELECT count(*) AS n FROM ${table}`))[0]!['n']);
      }
      files[kind] = { key, bytes: bytes.length, crc32: crcOf(bytes), rows: rowsOf[kind] };
    }
    return { datasetId, edges, targets: rowsOf.targets, sources: Number(counts!['s']), files };
  } finally {
    await conn.run('DROP TABLE IF EXISTS lk_e');
    await conn.run('DROP TABLE IF EXISTS lk_t');
    await conn.run('DROP TABLE IF EXISTS lk_d');
    await opts.releasePaths?.(at.map((a) => a.file.key));
  }
}

/**
 * A version's link graphs, from its `links.json` checked against the CRC32 its version.json records; an empty list
 * for a version without one (written before #21, or from a lake without outlink columns). @throws IndexFormatError
 */
export async function readLinks(store: ObjectStore, version: string, toc: VersionToc): Promise<DatasetLinks[]> {
  return readVersionList<DatasetLinks>(store, version, toc, LINKS_FILE);
}
