import type { ObjectStore } from '@ccpipe/core';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { queryRows } from './duck';
import { jsonBytes, type LakeFileEntry } from './format';
import { LINKS_FILE, LINK_LAKE_COLUMNS, readLinks, writeLinks } from './links';
import type { LocalInputs } from './local-inputs';
import type { CachedObject } from './merge-cache';
import { ORDERINGS_FILE, readOrderings, writeOrderings } from './orderings';
import { SEARCH_FILE, readSearchShards, writeSearchShards, type SearchShardEntry } from './search-index';
import type { VersionBase, VersionWriter } from './version-files';

/** What the merge hands {@link writeDerived} once the new version's lake files and index are written. */
export interface DerivedInput {
  /** A connection of the merge's database for these structures alone (the merge builds its domain index meanwhile on its own). */
  conn: DuckDBConnection;
  /** The merge's database: the search shards read lake files on connections of their own. */
  db: DuckDBInstance;
  store: ObjectStore;
  out: VersionWriter;
  version: string;
  /** The new version's lake files with their positions. */
  files: readonly LakeFileEntry[];
  prev: VersionBase | null;
  /** Lake files this merge wrote, and the previous version's files it replaced. */
  newFiles: readonly LakeFileEntry[];
  replaced: ReadonlySet<string>;
  /** Datasets whose positions were given anew (orderings.ts assignPositions): rebuilt whole. */
  renumbered: ReadonlySet<number>;
  /** What the merge cache may serve (the files just written are added). */
  listed: Map<string, CachedObject>;
  inputs: LocalInputs;
  tmp: string;
  lakeCols: readonly string[];
  /** Kept lake files some of whose rows lost their text to the content-versions policy, with those rows ({@link stripRowsOf}). */
  strip: ReadonlyMap<string, number[]>;
  orderings: boolean;
  links: boolean;
  /** Whether the version has search shards (search on, a lake with the columns they read: {@link SEARCH_LAKE_COLUMNS}). */
  search: boolean;
  /** Shards of new lake files built already (by the merge tasks that wrote them). */
  builtSearch?: readonly SearchShardEntry[];
  onPhase?: (phase: 'orderings' | 'links' | 'search', ms: number) => void;
}

/**
 * Writes the structures a version derives from its lake, each listed in the version (and carried over for datasets or
 * files the merge did not change): the secondary orderings (orderings.ts), the link graph (links.ts) and the search
 * shards (search-index.ts). The link graph and the search shards read the same lake files: read in place, they run at
 * once (the shards build on threads of their own, the graph in DuckDB); staged copies (a remote store) are fetched and
 * released by each phase, so those phases run one after the other. Each phase is reported alone; returns the wall time
 * of all of them, which the merge takes out of its index phase.
 */
export async function writeDerived(d: DerivedInput): Promise<number> {
  const t0 = Date.now();
  const { conn, store, out, version, files, prev, inputs, tmp, lakeCols } = d;
  const changed = new Set([...d.newFiles.map((f) => f.datasetId), ...(prev?.files ?? []).filter((f) => d.replaced.has(f.key)).map((f) => f.datasetId)]);
  const rebuild = new Set([...changed, ...d.renumbered]);
  const paths = { pathsOf: (keys: readonly string[]) => inputs.fetch(keys), releasePaths: (keys: readonly string[]) => inputs.release(keys) };
  // the files just written sit in the merge cache (writeLake adopted them): read there, not downloaded again
  for (const f of d.newFiles) d.listed.set(f.key, { key: f.key, bytes: f.bytes, crc32: f.crc32 });
  const timed = async (name: 'orderings' | 'links' | 'search', work: () => Promise<void>): Promise<void> => {
    const t = Date.now();
    await work();
    d.onPhase?.(name, Date.now() - t);
  };
  if (d.orderings) {
    // the time, size and status orderings of each dataset whose lake files changed; the others' carried over
    await timed('orderings', async () => {
      const orderings = await writeOrderings(conn, store, {
        version, files, rebuild, renumbered: d.renumbered, previous: prev === null ? [] : await readOrderings(store, prev.toc.version, prev.toc),
        ...paths, withSize: lakeCols.includes('content_length'), tmpDir: tmp,
      });
      await out.put(ORDERINGS_FILE, jsonBytes(orderings));
    });
  }
  const phases: ['links' | 'search', () => Promise<void>][] = [];
  if (d.links && LINK_LAKE_COLUMNS.every((c) => lakeCols.includes(c))) {
    // the link graph of each dataset whose lake files changed, from those files; the others' carried over
    phases.push(['links', async () => {
      const links = await writeLinks(conn, store, {
        version, files, rebuild, previous: prev === null ? [] : await readLinks(store, prev.toc.version, prev.toc), ...paths, tmpDir: tmp,
      });
      await out.put(LINKS_FILE, jsonBytes(links));
    }]);
  }
  if (d.search) {
    // each new lake file gets its search shard; a kept file whose rows lost their text to the content-versions policy
    // without a rewrite gets its shard again without them (readers hide that text: the search must not find it)
    phases.push(['search', async () => {
      const shards = await writeSearchShards(() => d.db.connect(), store, {
        version, files, previous: prev === null ? [] : await readSearchShards(store, prev.toc.version, prev.toc), built: d.builtSearch ?? [], rebuild: d.strip,
        languages: lakeCols.includes('languages'), ...paths, tmpDir: tmp,
      });
      await out.put(SEARCH_FILE, jsonBytes(shards));
    }]);
  }
  if (inputs.inPlace) await settleAll(phases.map(([name, work]) => timed(name, work)));
  else for (const [name, work] of phases) await timed(name, work);
  return Date.now() - t0;
}

/**
 * The rows of kept lake files (by key) whose text the content-versions policy took: their search shards are built again
 * without them. Read from table `strip_old` of the merge's connection `conn` (temp tables are a connection's own);
 * empty without search.
 */
export async function stripRowsOf(
  conn: DuckDBConnection, prev: VersionBase | null, stripFiles: ReadonlyMap<number, number>, replaced: ReadonlySet<string>, search: boolean,
): Promise<Map<string, number[]>> {
  const strip = new Map<string, number[]>();
  if (!search) return strip;
  for (const id of stripFiles.keys()) {
    const f = prev!.files[-id - 1]!;
    if (replaced.has(f.key)) continue;
    strip.set(f.key, (await queryRows(conn, `SELECT _r FROM strip_old WHERE _f = ${id}`)).map((r) => Number(r['_r'])));
  }
  return strip;
}

/** Waits for every promise to settle, then gives their values, or rejects with the first rejection (none is left running unobserved). */
export async function settleAll<T extends readonly unknown[]>(work: readonly [...{ [K in keyof T]: Promise<T[K]> }]): Promise<T> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
