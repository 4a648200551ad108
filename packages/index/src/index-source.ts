import { CcpError, parseDatasetRegistry, layout, type IndexSource, type ObjectStore } from '@ccpipe/core';
import { LakeIndexView } from './lake-index-view';
import { ParquetLakeReader, type LakeReads } from './lake-reader';
import { initZstd, type ZstdDecoder } from './zstd';
import { DuckLakeReader } from './lake-reader-duckdb';
import { loadVersion, readManifest, type LoadedVersion } from './version-files';
import type { IndexManifest } from './format';
import { versionSeq } from './gc';

/** Options of {@link openIndexSource}. */
export interface IndexSourceOptions {
  /** Where the manifest, the version files and the lake are read — any ObjectStore (local directory, S3). */
  store: ObjectStore;
  /** Local directory of the store's objects; only `lakeReader: 'duckdb'` uses it (accepted and ignored otherwise). */
  dataDir?: string;
  /** How long `current()` trusts its last manifest read (default 1000 ms). */
  pollMs?: number;
  /**
   * How lake rows are read: `parquet` (default) — hyparquet over `store.getRange`, footers and decoded column chunks
   * cached; `duckdb` — the previous per-request DuckDB query on `dataDir` (kept for benchmarks; needs `dataDir`).
   */
  lakeReader?: 'parquet' | 'duckdb';
  /** Bound of the decoded column-chunk cache in estimated bytes (default 256 MiB), shared by every version. */
  cacheBytes?: number;
  /** ZSTD decoder of the parquet reader (default `wasm`, falling back to `js` = fzstd when WebAssembly cannot load). */
  zstd?: ZstdDecoder;
  /** The parquet reader's layout source: row-group locators where the lake has them (default true), else footers. */
  locators?: boolean;
  /** DuckDB threads for `lakeReader: 'duckdb'` (default 1). */
  threads?: number;
  /** Told when a new version cannot be loaded while an older view keeps serving (log it, count it). */
  onError?: (err: unknown) => void;
  /**
   * Before a newly loaded version is served, read a few URL pages and captures from it (`LakeIndexView.warm`, default
   * off): the first requests after a start or a flip then find the decoders compiled and WebAssembly instantiated.
   * A warm-up that fails is ignored (the requests will meet the error themselves).
   */
  warmUp?: boolean;
  /**
   * Bytes of resident index files (dictionary, bitmaps, postings) that views of versions other than the current one
   * may hold together (default 1 GiB; at most 4 views). The most recently used one is always kept. At Common Crawl's
   * ≈ 40M domains one version is ≈ 3.7 GB: then a replica keeps current + one older view, not five versions.
   */
  pinnedBytes?: number;
}

/** An IndexSource that also says which version it serves. */
export interface LakeIndexSource extends IndexSource {
  current(): Promise<LakeIndexView | null>;
  /**
   * The view of one version the manifest still keeps (current or an older kept one), e.g. to let a client finish
   * a walk on the version it started with; null when the manifest no longer keeps it. Loads and CRC-checks it on
   * first use; the last few pinned views are kept (also the view a flip replaced, so clients paging across a flip
   * find it loaded), within `pinnedBytes`. @throws IndexFormatError when its files are corrupt or gone.
   */
  at(version: string): Promise<LakeIndexView | null>;
  /** The lake reader's cache counters (undefined with `lakeReader: 'duckdb'`). */
  cacheStats(): ReturnType<ParquetLakeReader['stats']> | undefined;
}

const PINNED_VIEWS = 4;
const PINNED_BYTES = 1 << 30;

/** Bytes of the resident index files behind a view. */
const residentBytes = (l: LoadedVersion): number => l.domains.length + l.bitmaps.length + l.postings.length;

/**
 * Follows `index/manifest.json`: `current()` rereads the manifest at most every `pollMs` and, on a flip, loads and
 * CRC-checks the new version before switching. A new version that cannot be loaded (IndexFormatError: CRC
 * mismatch, missing file) is reported to `onError` and the previous view keeps serving; with no previous view
 * `current()` throws it. Either way it is retried after `pollMs`. Views already handed out stay valid — the merger keeps their files for
 * its grace period. Every view reads the lake through one shared reader (its caches are keyed by immutable lake
 * file keys, so a flip keeps the hot row groups of files the new version carries over). Concurrent calls share one
 * reload. `close()` is idempotent.
 * @throws CcpError CCP_ERR_INDEX_OPTIONS when `lakeReader: 'duckdb'` comes without `dataDir`.
 */
export async function openIndexSource(opts: IndexSourceOptions): Promise<LakeIndexSource> {
  let reads: LakeReads;
  let parquet: ParquetLakeReader | undefined;
  if (opts.lakeReader === 'duckdb') {
    if (opts.dataDir === undefined) throw new CcpError('CCP_ERR_INDEX_OPTIONS', 'the duckdb lake reader needs dataDir');
    reads = await DuckLakeReader.open(opts.dataDir, opts.threads ?? 1);
  } else {
    if ((opts.zstd ?? 'wasm') === 'wasm') await initZstd();
    reads = parquet = new ParquetLakeReader({
      store: opts.store, ...(opts.cacheBytes !== undefined && { cacheBytes: opts.cacheBytes }), ...(opts.zstd !== undefined && { zstd: opts.zstd }),
      ...(opts.locators !== undefined && { locators: opts.locators }),
    });
  }
  const pollMs = opts.pollMs ?? 1000;
  let view: LakeIndexView | null = null;
  let checkedAt = -Infinity;
  let inflight: Promise<LakeIndexView | null> | null = null;
  let closed = false;
  // views of versions other than the current one, least recently used first, with their resident bytes once loaded
  const pinned = new Map<string, Promise<LakeIndexView>>();
  const pinnedSize = new Map<string, number>();
  const trimPinned = (): void => {
    const budget = opts.pinnedBytes ?? PINNED_BYTES;
    let bytes = [...pinnedSize.values()].reduce((a, b) => a + b, 0);
    for (const k of pinned.keys()) {
      if (pinned.size <= 1 || (pinned.size <= PINNED_VIEWS && bytes <= budget)) break;
      pinned.delete(k);
      bytes -= pinnedSize.get(k) ?? 0;
      pinnedSize.delete(k);
    }
  };
  const pin = (key: string, p: Promise<LakeIndexView>, size?: number): void => {
    pinned.delete(key);
    pinned.set(key, p);
    if (size !== undefined) pinnedSize.set(key, size);
    trimPinned();
  };
  let manifest: IndexManifest | null = null;

  // A version is its name *and* its table of contents: a wiped and rebuilt store reuses names (v000001 again).
  const tocOf = new WeakMap<LakeIndexView, number>();
  const sizeOf = new WeakMap<LakeIndexView, number>();
  const keyOf = (v: LakeIndexView): string => `${v.version}#${tocOf.get(v)}`;
  const viewOf = async (loaded: LoadedVersion, tocCrc32: number): Promise<LakeIndexView> => {
    const regBytes = await opts.store.get(layout.datasetRegistry());
    const names = new Map((regBytes ? parseDatasetRegistry(regBytes).datasets : []).map((d) => [d.id, { name: d.name, crawl: d.crawl }]));
    const v = new LakeIndexView(loaded, reads, names);
    tocOf.set(v, tocCrc32);
    sizeOf.set(v, residentBytes(loaded));
    if (opts.warmUp === true) await v.warm().catch(() => undefined);
    return v;
  };
  const metaOf = (m: IndexManifest, version: string | null) => m.versions.find((v) => v.version === version);

  const refresh = async (): Promise<LakeIndexView | null> => {
    const m = await readManifest(opts.store);
    manifest = m;
    const meta = metaOf(m, m.current);
    if (meta === undefined) return null;
    if (view !== null && view.version === meta.version && tocOf.get(view) === meta.tocCrc32) return view;
    return viewOf(await loadVersion(opts.store, meta.version, meta.tocCrc32), meta.tocCrc32);
  };
  const open = (): void => {
    if (closed) throw new CcpError('CCP_ERR_INDEX_CLOSED', 'index source is closed');
  };

  const source: LakeIndexSource = {
    async current() {
      open();
      if (Date.now() - checkedAt < pollMs) return view;
      inflight ??= refresh()
        .then(
          (v) => {
            // the replaced view stays at hand for clients still paging on it (at()), within the pinned bounds
            if (view !== null && v !== view) pin(keyOf(view), Promise.resolve(view), sizeOf.get(view));
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
    async at(version) {
      open();
      const cur = await source.current(); // also refreshes `manifest` at most every pollMs
      if (cur?.version === version) return cur;
      let meta = manifest === null ? undefined : metaOf(manifest, version);
      if (meta === undefined && versionSeq(version) > versionSeq(cur?.version ?? 'v0')) {
        // newer than what this replica has seen: another replica may already serve it (a pinned page can land on a
        // replica that has not polled yet), so look at the manifest once now instead of answering "gone"
        manifest = await readManifest(opts.store);
        meta = metaOf(manifest, version);
      }
      if (meta === undefined) return null;
      const key = `${meta.version}#${meta.tocCrc32}`;
      const toc = meta.tocCrc32;
      let p = pinned.get(key);
      if (p === undefined) {
        const loading = loadVersion(opts.store, meta.version, toc).then((loaded) => viewOf(loaded, toc));
        p = loading;
        loading.then(
          (v) => {
            if (pinned.get(key) !== loading) return; // trimmed while it loaded
            pinnedSize.set(key, sizeOf.get(v) ?? 0);
            trimPinned();
          },
          () => {
            if (pinned.get(key) === loading) pinned.delete(key);
          },
        );
        pin(key, p);
      } else {
        pin(key, p);
      }
      return p;
    },
    cacheStats: () => parquet?.stats(),
    async close() {
      if (closed) return;
      closed = true;
      await inflight?.catch(() => undefined);
      await reads.close();
    },
  };
  return source;
}
