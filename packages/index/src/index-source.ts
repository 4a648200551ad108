import { CcpError, parseDatasetRegistry, layout, type IndexSource, type ObjectStore } from '@ccpipe/core';
import type { DuckDBInstance } from '@duckdb/node-api';
import { openDuck } from './duck';
import { LakeIndexView } from './lake-index-view';
import { loadVersion, readManifest } from './version-files';

/** Options of {@link openIndexSource}. */
export interface IndexSourceOptions {
  store: ObjectStore;
  /** Local directory of the store's objects: lake files are read there by DuckDB. */
  dataDir: string;
  /** How long `current()` trusts its last manifest read (default 1000 ms). */
  pollMs?: number;
  /** DuckDB threads for lake reads (default 1). */
  threads?: number;
  /** Told when a new version cannot be loaded while an older view keeps serving (log it, count it). */
  onError?: (err: unknown) => void;
}

/** An IndexSource that also says which version it serves. */
export interface LakeIndexSource extends IndexSource {
  current(): Promise<LakeIndexView | null>;
}

/**
 * Follows `index/manifest.json`: `current()` rereads the manifest at most every `pollMs` and, on a flip, loads and
 * CRC-checks the new version before switching. A new version that cannot be loaded (IndexFormatError: CRC
 * mismatch, missing file) is reported to `onError` and the previous view keeps serving; with no previous view
 * `current()` throws it. Either way it is retried after `pollMs`. Views already handed out stay valid — the merger keeps their files for
 * its grace period. Concurrent calls share one reload. `close()` is idempotent.
 */
export async function openIndexSource(opts: IndexSourceOptions): Promise<LakeIndexSource> {
  const db: DuckDBInstance = await openDuck({ threads: opts.threads ?? 1, metadataCache: true });
  const pollMs = opts.pollMs ?? 1000;
  let view: LakeIndexView | null = null;
  let checkedAt = -Infinity;
  let inflight: Promise<LakeIndexView | null> | null = null;
  let closed = false;

  const refresh = async (): Promise<LakeIndexView | null> => {
    const m = await readManifest(opts.store);
    const meta = m.versions.find((v) => v.version === m.current);
    if (meta === undefined) return null;
    if (view !== null && view.version === meta.version) return view;
    const loaded = await loadVersion(opts.store, meta.version, meta.tocCrc32);
    const regBytes = await opts.store.get(layout.datasetRegistry());
    const names = new Map((regBytes ? parseDatasetRegistry(regBytes).datasets : []).map((d) => [d.id, { name: d.name, crawl: d.crawl }]));
    return new LakeIndexView(loaded, opts.dataDir, db, names);
  };

  return {
    async current() {
      if (closed) throw new CcpError('CCP_ERR_INDEX_CLOSED', 'index source is closed');
      if (Date.now() - checkedAt < pollMs) return view;
      inflight ??= refresh()
        .then(
          (v) => {
            view = v;
            checkedAt = Date.now();
            return v;
          },
          (err: unknown) => {
            if (view === null) throw err;
            checkedAt = Date.now();
            opts.onError?.(err);
            return view;
          },
        )
        .finally(() => {
          inflight = null;
        });
      return inflight;
    },
    async close() {
      if (closed) return;
      closed = true;
      await inflight?.catch(() => undefined);
      db.closeSync();
    },
  };
}
