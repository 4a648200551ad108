import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { isoOfMs, type ObjectStore, type SearchPage, type SearchQuery } from '@ccpipe/core';
import type { SearchOptions, ShardsResult } from '@ccpipe/search';
import { IndexFormatError } from './format';
import { copyObjectToFile, inPlaceInputs } from './local-inputs';
import type { SearchShardEntry } from './search-index';

/** What runs a search over shard files (the search package's `SearchRunner`: worker threads, a time limit). */
export interface SearchRunning {
  run(paths: readonly string[], query: string, opts: Omit<SearchOptions, 'deadline'>): Promise<ShardsResult>;
}

/** Local paths of shard files: in place for a store with local files, else staged (search-read.ts `shardFiles`). */
export type ShardPaths = (entries: readonly SearchShardEntry[]) => Promise<string[]>;

/** Bytes of staged shard copies kept by default (a remote store's shards, {@link shardFiles}). */
export const DEFAULT_STAGED_SHARD_BYTES = 8 * 2 ** 30;

/**
 * Local files for search shards. A store with local files (`dataDir`, or a store with `localPath`) is read in place;
 * from any other store (S3) each shard is downloaded whole on first use into `stageDir`, checked against the size and
 * CRC32 its version lists, and kept there (a shard key names immutable bytes) while the copies stay within `maxBytes`:
 * past it the least recently used copies not handed out within `busyMs` (default 60 s: a search in flight may still
 * open it) are deleted (a search thread holding one open reads on; a later search downloads it again), so the copies of versions gone by do not fill the disk. SQLite
 * reads pages at random offsets, so a shard is never read through ranged GETs; it is copied by them, a chunk at a time
 (local-inputs.ts `copyObjectToFile`, as the merge stages lake files). `close()` deletes the copies.
 * @throws IndexFormatError CCP_ERR_INDEX_MISSING / CCP_ERR_INDEX_CRC for a shard gone from the store or damaged
 */
export function shardFiles(
  store: ObjectStore, dataDir: string | undefined, stageDir: () => string, opts: { maxBytes?: number; busyMs?: number } = {},
): { paths: ShardPaths; stagedBytes(): number; close(): Promise<void> } {
  const here = inPlaceInputs(store, dataDir);
  const maxBytes = opts.maxBytes ?? DEFAULT_STAGED_SHARD_BYTES;
  /** Copies by key, least recently used first (a Map keeps insertion order: a use re-inserts). */
  const staged = new Map<string, { path: Promise<string>; bytes: number; usedAt: number }>();
  let held = 0;
  const stage = async (e: SearchShardEntry): Promise<string> => {
    const path = join(stageDir(), e.key);
    const tmp = `${path}.tmp`;
    try {
      const got = await copyObjectToFile(store, e.key, tmp);
      if (got.size !== e.bytes || got.crc32 !== e.crc32) throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'a search shard does not match its checksum', { key: e.key });
      await rename(tmp, path);
      return path;
    } finally {
      await rm(tmp, { force: true });
    }
  };
  const evict = async (keep: ReadonlySet<string>): Promise<void> => {
    const recent = Date.now() - (opts.busyMs ?? 60_000);
    for (const [key, c] of staged) {
      if (held <= maxBytes) return;
      // a copy handed out within busyMs may still be opened by a search in flight: kept
      if (keep.has(key) || c.usedAt > recent) continue;
      staged.delete(key);
      held -= c.bytes;
      await c.path.then((p) => rm(p, { force: true }), () => undefined);
    }
  };
  return {
    paths: async (entries) => {
      if (here !== null) return here.fetch(entries.map((e) => e.key));
      const out = await Promise.all(entries.map((e) => {
        let c = staged.get(e.key);
        if (c !== undefined) staged.delete(e.key);
        else {
          c = { path: stage(e), bytes: e.bytes, usedAt: 0 };
          held += e.bytes;
          const copy = c;
          // a failed copy is tried again by the next search
          c.path.catch(() => {
            if (staged.get(e.key) === copy) {
              staged.delete(e.key);
              held -= copy.bytes;
            }
          });
        }
        c.usedAt = Date.now();
        staged.set(e.key, c);
        return c.path;
      }));
      await evict(new Set(entries.map((e) => e.key)));
      return out;
    },
    stagedBytes: () => held,
    close: async () => {
      if (here === null && staged.size > 0) await rm(stageDir(), { recursive: true, force: true });
    },
  };
}

/**
 * One version's search shards, read side: picks the shards a query needs — those of the datasets asked, and with a
 * domain only those of the lake files holding it — and runs the search over them. Immutable; safe to share.
 */
export class SearchIndex {
  constructor(
    private readonly entries: readonly SearchShardEntry[],
    private readonly runner: SearchRunning,
    private readonly paths: ShardPaths,
  ) {}

  /**
   * Searches the shards of `q.datasetIds` — with `domainFiles` (the lake keys of the files holding `q.domain`), only
   * theirs. @throws SearchError as the runner does
   */
  async search(q: SearchQuery, domainFiles: ReadonlySet<string> | null): Promise<SearchPage> {
    const ids = new Set(q.datasetIds);
    const picked = this.entries.filter((e) => ids.has(e.datasetId) && e.docs > 0 && (domainFiles === null || domainFiles.has(e.lakeKey)));
    const paths = await this.paths(picked);
    const r = await this.runner.run(paths, q.q, {
      limit: q.limit, offset: q.offset, ...(q.domain !== undefined && { domain: q.domain }),
      // the shards keep epoch seconds: a bound in ms keeps every capture of its second
      ...(q.from !== undefined && { from: Math.floor(q.from / 1000) }), ...(q.to !== undefined && { to: Math.floor(q.to / 1000) }),
    });
    return {
      total: r.total, totalExact: r.totalExact, shards: r.shards,
      items: r.hits.map((h) => ({
        // ts -1: a row without a time (search-index.ts)
        url: h.url, datasetId: h.datasetId, ts: h.ts === -1 ? null : isoOfMs(h.ts * 1000), title: h.title, snippet: h.snippet, snippetParts: h.snippetParts, score: h.score,
      })),
    };
  }
}
