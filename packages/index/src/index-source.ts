import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CcpError, kindOf, parseDatasetRegistry, layout, type IndexLoadFailure, type IndexSource, type ObjectStore, type SearchRunnerCounters } from '@ccpipe/core';
import { LakeIndexView } from './lake-index-view';
import { ParquetLakeReader, type LakeReads } from './lake-reader';
import { readOrderings } from './orderings';
import { readLinks } from './links';
import { LinkGraph } from './links-read';
import { readSearchShards } from './search-index';
import { SearchIndex, shardFiles, type SearchRunning } from './search-read';
import { SearchRunner } from '@ccpipe/search';
import { readTopDomains } from './top-domains';
import { initZstd, type ZstdDecoder } from './zstd';
import { DuckLakeReader } from './lake-reader-duckdb';
import { inPlaceInputs, openLocalInputs, type LocalInputs } from './local-inputs';
import { loadVersion, loadVersionInPlace, readManifest, readVersionToc, residentBytesOf, type LoadedVersion } from './version-files';
import type { IndexManifest } from './format';
import { versionSeq } from './gc';
import { openStageRoot } from './stage-root';

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
  /**
   * Told when the manifest cannot be read (`manifest`: retried at the next poll) or a new version cannot be loaded
   * (`load`: once per attempt, also when no view is served yet; the version is tried again after a pause). Log it,
   * count it. Not told after close().
   */
  onError?: (err: unknown, what: 'manifest' | 'load') => void;
  /**
   * Before the first version this source loads is served, read a few URL pages and captures from it
   * (`LakeIndexView.warm`, default off): the first requests after a start then find the decoders compiled and
   * WebAssembly instantiated. Later versions are not warmed (that state is the process's, and the lake cache is
   * shared), so a flip never waits on lake reads. A warm-up that fails is ignored (the requests will meet the error
   * themselves); one that takes longer than `warmUpMs` (default 2000) is left to finish in the background.
   */
  warmUp?: boolean;
  warmUpMs?: number;
  /**
   * Once a version serves, `current()` answers with it at once while a reload runs (default false: callers wait for
   * the manifest read and, after a flip, for the new version's load). A flip then shows up on the first request after
   * the new version has loaded, not on the first after the manifest changed; requests never wait on a load that
   * takes seconds at Common Crawl's scale (≈ 3.7 GB per version) or on a slow store. `ccpipe api` turns it on.
   */
  serveWhileLoading?: boolean;
  /**
   * Bytes of resident index files (dictionary, bitmaps, postings) that views of versions other than the current one
   * may hold together (default 1 GiB; at most 4 views). The view a flip replaced is always kept. An older version
   * that is not loaded is loaded for `at()` only if it fits beside the views used in the last minute; otherwise
   * `at()` answers null (the API's 410 "version gone": the client starts over on the current version) instead of
   * evicting a view in use — two clients paging on two big older versions would otherwise reload them in turn. At
   * Common Crawl's ≈ 40M domains one version is ≈ 3.7 GB: a replica then keeps current + the replaced view.
   */
  pinnedBytes?: number;
  /**
   * How a version's domain index (dictionary, bitmaps, postings) is held: `resident` (default) — read into memory,
   * ≈ 50 B per domain in format 2 (≈ 2 GB a version at Common Crawl's ≈ 40M domains); `files` — read in place from the local
   * shard files by positional reads (`FileDomainIndex`: the page cache keeps what is hot, the process every 64th
   * name, ≈ 0.5 B per domain). A store with local files (`dataDir` or a store with `localPath`, such as a directory)
   * is read in place; from any other store (S3) each version's shard files are first staged into `indexCacheDir`
   * (ranged reads, 8 MiB at a time) and deleted again when the view closes. A lookup is a few small blocking reads
   * (see docs/api.md); a view's files stay open while the source holds it, and for `retireGraceMs` after it lets go
   * of it.
   */
  indexReads?: 'resident' | 'files';
  /**
   * Where `indexReads: 'files'` stages the shard files of a store without local files (default: the OS temp dir).
   * The source works in a directory of its own under it (`ccpipe-index-*`), removed when it closes; a heartbeat
   * touches its owner file every minute, and directories of other sources untouched for 5 minutes (left by a process
   * that is gone) are removed (`openStageRoot`). It needs the disk of the versions it holds: the current one, the
   * older ones pinned within `pinnedBytes` (counted by their shard files' size), and those still in their grace period.
   */
  indexCacheDir?: string;
  /** Told of each directory of index copies removed because the process that made it is gone (log it). */
  onStaleCopies?: (dir: string) => void;
  /** How long a view the source has let go of keeps its files open for requests still holding it (default 60 s). */
  retireGraceMs?: number;
  /**
   * Full-text search (`view.search`, search-read.ts): worker threads running the version's SQLite FTS5 shards, and a
   * time limit per query (503 past it). Default `{ threads: 1, timeLimitMs: 1000 }`; `false` serves no search. The
   * threads start on the first search (with `warmUp`, when the source opens). From a store without local files (S3) shards are copied to local disk on first
   * use, at most `stagedBytes` of them kept (default 8 GiB; least recently used out first).
   */
  search?: { threads?: number; timeLimitMs?: number; stagedBytes?: number } | false;
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
  /** The search threads' counters (undefined until the first search started them). */
  searchStats(): SearchRunnerCounters | undefined;
  /** The version in its pause after a failed load (see openIndexSource), or null. */
  loadFailure(): IndexLoadFailure | null;
}

const PINNED_VIEWS = 4;
const PINNED_BYTES = 1 << 30;
/** A pinned view used this recently is not evicted to make room for loading an older version. */
const PIN_IDLE_MS = 60_000;
const WARM_UP_MS = 2000;
const RETIRE_GRACE_MS = 60_000;
/** First pause before a version that failed to load is tried again; it doubles per failure up to RETRY_MAX_MS. */
const RETRY_MS = 10_000;
const RETRY_MAX_MS = 5 * 60_000;

/**
 * Follows `index/manifest.json`: `current()` rereads the manifest at most every `pollMs` and, on a flip, loads and
 * CRC-checks the new version before switching. A new version that cannot be loaded (IndexFormatError: CRC
 * mismatch, missing file) is reported to `onError` and the previous view keeps serving, and is tried again after
 * 10 s, doubling per failure up to 5 min (a flip to another version is tried at once; `at()` answers null for it
 * meanwhile); with no previous view `current()` throws it, and throws it again without reading the store until the
 * pause is over. Views already handed out stay valid — the merger keeps their files for
 * its grace period. Every view reads the lake through one shared reader (its caches are keyed by immutable lake
 * file keys, so a flip keeps the hot row groups of files the new version carries over). Concurrent calls share one
 * reload. `close()` is idempotent.
 * @throws CcpError CCP_ERR_INDEX_OPTIONS when `lakeReader: 'duckdb'` comes without `dataDir`, or `indexCacheDir` cannot be created.
 */
export async function openIndexSource(opts: IndexSourceOptions): Promise<LakeIndexSource> {
  if (opts.lakeReader === 'duckdb' && opts.dataDir === undefined) throw new CcpError('CCP_ERR_INDEX_OPTIONS', 'the duckdb lake reader needs dataDir');
  const files = opts.indexReads === 'files';
  // the local files behind store keys, for an index read in place; else (a remote store) a directory to stage them in
  const here = files ? inPlaceInputs(opts.store, opts.dataDir) : null;
  const stage = files && here === null ? await openStageRoot(opts.indexCacheDir ?? tmpdir(), { ...(opts.onStaleCopies && { onStale: opts.onStaleCopies }) }) : null;
  let stagedLoads = 0;
  // close() aborts copies still running, then waits for every load to settle before it removes the directory
  const closing = new AbortController();
  const loading = new Set<Promise<unknown>>();
  /** Where one load of a version finds its shard files: in place, or staged into a directory of that load's own. */
  const inputsFor = (version: string): LocalInputs => {
    if (stage === null) return here!;
    // one directory per load: a wiped store can reuse a version name while the old view's copies are still open
    const dir = join(stage.dir, `${version}-${++stagedLoads}`);
    // released whole: the load's directory goes with its copies
    return { ...openLocalInputs(opts.store, undefined, dir, { signal: closing.signal }), release: () => rm(dir, { recursive: true, force: true }) };
  };
  let reads: LakeReads;
  let parquet: ParquetLakeReader | undefined;
  try {
    if (opts.lakeReader === 'duckdb') {
      reads = await DuckLakeReader.open(opts.dataDir!, opts.threads ?? 1);
    } else {
      if ((opts.zstd ?? 'wasm') === 'wasm') await initZstd();
      reads = parquet = new ParquetLakeReader({
        store: opts.store, ...(opts.cacheBytes !== undefined && { cacheBytes: opts.cacheBytes }), ...(opts.zstd !== undefined && { zstd: opts.zstd }),
        ...(opts.locators !== undefined && { locators: opts.locators }),
      });
    }
  } catch (err) {
    await stage?.close().catch(() => undefined);
    throw err;
  }
  // search: one runner (its worker threads started by the first search) and one set of local shard files for every view
  let runner: SearchRunner | null = null;
  const searchOpts = opts.search === false ? null : opts.search ?? {};
  const runnerOf = (): SearchRunner =>
    (runner ??= new SearchRunner({ ...(searchOpts?.threads !== undefined && { threads: searchOpts.threads }), ...(searchOpts?.timeLimitMs !== undefined && { timeLimitMs: searchOpts.timeLimitMs }) }));
  const searching: SearchRunning = { run: (paths, q, o) => runnerOf().run(paths, q, o) };
  let shardDir: string | null = null;
  const shards = shardFiles(
    opts.store, opts.dataDir, () => (shardDir ??= join(stage?.dir ?? opts.indexCacheDir ?? tmpdir(), `search-${process.pid}-${Date.now().toString(36)}`)),
    searchOpts?.stagedBytes === undefined ? {} : { maxBytes: searchOpts.stagedBytes },
  );
  const pollMs = opts.pollMs ?? 1000;
  let view: LakeIndexView | null = null;
  let checkedAt = -Infinity;
  let inflight: Promise<LakeIndexView | null> | null = null;
  let closed = false;
  // views of versions other than the current one, least recently used first: the view, its resident bytes once
  // loaded, when it was last asked for
  interface Pin { p: Promise<LakeIndexView>; size: number; usedAt: number }
  const pinned = new Map<string, Pin>();
  const budget = opts.pinnedBytes ?? PINNED_BYTES;
  const pinnedTotal = (): number => [...pinned.values()].reduce((a, e) => a + e.size, 0);
  /** Evicts least recently used pins (never `keep`) while more than PINNED_VIEWS, or `reserve` more bytes would exceed the budget. */
  const trimPinned = (keep: string | null, reserve = 0): void => {
    let bytes = pinnedTotal();
    for (const [k, e] of pinned) {
      if (pinned.size <= PINNED_VIEWS && bytes + reserve <= budget) break;
      if (k === keep) continue;
      unpin(k);
      bytes -= e.size;
    }
  };
  // A view the source lets go of may still be answering a request that took it a moment ago: its files (an index read
  // in place) are closed after a grace period, not at once (every index read of a view happens at the start of a
  // call, so a request holds it for a moment, not for its lake reads). close() closes those still waiting.
  const retiring = new Map<NodeJS.Timeout, LakeIndexView>();
  const retireGraceMs = opts.retireGraceMs ?? RETIRE_GRACE_MS;
  const lateCloses = new Set<Promise<void>>(); // views let go of while close() runs: it waits for them
  const retire = (p: Promise<LakeIndexView> | LakeIndexView): void => {
    void Promise.resolve(p).then(
      (v) => {
        if (closed) {
          const c = v.close().catch(() => undefined);
          lateCloses.add(c);
          void c.then(() => lateCloses.delete(c));
          return;
        }
        const timer = setTimeout(() => {
          retiring.delete(timer);
          if (v !== view) void v.close();
        }, retireGraceMs);
        timer.unref();
        retiring.set(timer, v);
      },
      () => undefined,
    );
  };
  /** Drops a pin (its view closes after the grace period). */
  const unpin = (key: string): void => {
    const e = pinned.get(key);
    if (e === undefined) return;
    pinned.delete(key);
    retire(e.p);
  };
  /** Marks a pin used now (most recently used last). */
  const touch = (key: string, e: Pin): Pin => {
    pinned.delete(key);
    e.usedAt = Date.now();
    pinned.set(key, e);
    return e;
  };
  let manifest: IndexManifest | null = null;

  // A version is its name *and* its table of contents: a wiped and rebuilt store reuses names (v000001 again).
  const tocOf = new WeakMap<LakeIndexView, number>();
  const keyFor = (version: string, toc: number | undefined): string => `${version}#${toc}`;
  const keyOf = (v: LakeIndexView): string => keyFor(v.version, tocOf.get(v));
  const keptBy = (m: IndexManifest): Set<string> => new Set(m.versions.map((v) => keyFor(v.version, v.tocCrc32)));
  let warmed = false;
  const viewOf = async (loaded: LoadedVersion, tocCrc32: number, warm: boolean): Promise<LakeIndexView> => {
    const regBytes = await opts.store.get(layout.datasetRegistry());
    const names = new Map((regBytes ? parseDatasetRegistry(regBytes).datasets : []).map((d) => [d.id, { name: d.name, crawl: d.crawl, kind: kindOf(d), sources: d.sources ?? [] }]));
    // the secondary orderings (orderings.json), read through the Parquet reader; none with the DuckDB one
    const orderings = parquet === undefined ? null : { files: await readOrderings(opts.store, loaded.toc.version, loaded.toc), reads: parquet };
    const top = await readTopDomains(opts.store, loaded.toc.version, loaded.toc);
    // the link graphs (links.json), read through the Parquet reader too
    const linkFiles = parquet === undefined ? [] : await readLinks(opts.store, loaded.toc.version, loaded.toc);
    const graph = parquet === undefined || linkFiles.length === 0 ? null : new LinkGraph(linkFiles, parquet);
    // the search shards (search.json), run by the source's search runner
    const searchEntries = searchOpts === null ? [] : await readSearchShards(opts.store, loaded.toc.version, loaded.toc);
    const searchIndex = searchEntries.length === 0 ? null : new SearchIndex(searchEntries, searching, shards.paths);
    const v = new LakeIndexView(loaded, reads, names, orderings, top, graph, searchIndex);
    tocOf.set(v, tocCrc32);
    if (warm && opts.warmUp === true && !warmed) {
      warmed = true;
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, opts.warmUpMs ?? WARM_UP_MS);
        timer.unref();
      });
      await Promise.race([v.warm().catch(() => undefined), bound]);
      clearTimeout(timer);
    }
    // with warmUp, a version with search shards starts the search threads once its warm-up is over (≈ 250 ms each, not
    // within the first search's time limit, nor beside the warm-up); a failure to start shows on the first search
    if (opts.warmUp === true && searchIndex !== null) runnerOf().start().catch(() => undefined);
    return v;
  };
  // What a view holds against pinnedBytes: its memory, or for copies staged from a remote store their disk
  const heldBytes = new WeakMap<LakeIndexView, number>();
  const held = (v: LakeIndexView): number => heldBytes.get(v) ?? v.residentBytes;
  const load = (version: string, toc: number, warm: boolean): Promise<LakeIndexView> => {
    const inputs = files ? inputsFor(version) : null;
    const p = (inputs === null ? loadVersion(opts.store, version, toc) : loadVersionInPlace(opts.store, version, toc, inputs, closing.signal)).then(async (loaded) => {
      try {
        const v = await viewOf(loaded, toc, warm);
        if (stage !== null) heldBytes.set(v, residentBytesOf(loaded.toc));
        return v;
      } catch (err) {
        await loaded.index.close?.();
        throw err;
      }
    });
    loading.add(p);
    void p.then(
      () => loading.delete(p),
      () => loading.delete(p),
    );
    return p;
  };
  const metaOf = (m: IndexManifest, version: string | null) => m.versions.find((v) => v.version === version);

  let failed: { key: string; version: string; at: number; until: number; pause: number; err: unknown } | null = null;
  const refresh = async (): Promise<LakeIndexView | null> => {
    let m: IndexManifest;
    try {
      m = await readManifest(opts.store);
    } catch (err) {
      if (!closed) opts.onError?.(err, 'manifest');
      throw err;
    }
    manifest = m;
    // views of versions the manifest no longer keeps can never be served again
    const kept = keptBy(m);
    for (const k of [...pinned.keys()]) if (!kept.has(k)) unpin(k);
    const meta = metaOf(m, m.current);
    if (meta === undefined) return null;
    if (view !== null && view.version === meta.version && tocOf.get(view) === meta.tocCrc32) return view;
    // already loaded through at() (a client reached it before this replica polled): not loaded twice
    const key = keyFor(meta.version, meta.tocCrc32);
    const early = pinned.get(key);
    if (early !== undefined) {
      pinned.delete(key);
      const v = await early.p.catch(() => null);
      if (v !== null) return v;
    }
    // a version that failed to load is tried again after a pause that doubles (10 s up to 5 min), not at every poll:
    // each attempt reads the whole index (≈ 3.7 GB at Common Crawl's scale). A flip to another version is tried at once.
    if (failed?.key === key && Date.now() < failed.until) {
      if (view !== null) return view;
      const older = await olderIntact(m, meta.version);
      if (older !== null) return older;
      throw failed.err; // nothing to serve meanwhile: the callers get the error, the store is not read again
    }
    // room first for the view this flip replaces (it will be pinned): fewer versions resident while the next loads
    trimPinned(null, view === null ? 0 : held(view));
    try {
      const v = await load(meta.version, meta.tocCrc32, true);
      failed = null;
      return v;
    } catch (err) {
      if (closed) throw err; // a load close() aborted is no failure of the version
      const pause = failed?.key === key ? Math.min(failed.pause * 2, RETRY_MAX_MS) : RETRY_MS;
      failed = { key, version: meta.version, at: Date.now(), until: Date.now() + pause, pause, err };
      opts.onError?.(err, 'load');
      // nothing served yet (a replica starting on a damaged current version): the newest older version the manifest
      // keeps that loads is served meanwhile — /v1/status names the failed one (loadFailure), onError logged it
      if (view === null) {
        const older = await olderIntact(m, meta.version);
        if (older !== null) return older;
      }
      throw err;
    }
  };
  /** The newest version before `failedVersion` the manifest keeps that loads whole, or null (each failure reported). */
  const olderIntact = async (m: IndexManifest, failedVersion: string): Promise<LakeIndexView | null> => {
    const older = m.versions.filter((v) => versionSeq(v.version) < versionSeq(failedVersion)).sort((a, b) => versionSeq(b.version) - versionSeq(a.version));
    for (const meta of older) {
      if (closed) return null;
      try {
        return await load(meta.version, meta.tocCrc32, true);
      } catch (err) {
        if (closed) return null;
        opts.onError?.(err, 'load');
      }
    }
    return null;
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
            // the replaced view stays at hand for clients still paging on it (at()), within the pinned bounds,
            // while the manifest keeps its version
            if (view !== null && v !== view && manifest !== null && keptBy(manifest).has(keyOf(view))) {
              const key = keyOf(view);
              touch(key, { p: Promise.resolve(view), size: held(view), usedAt: 0 });
              trimPinned(key);
            } else if (view !== null && v !== view) retire(view);
            view = v;
            checkedAt = Date.now();
            return v;
          },
          (err: unknown) => {
            checkedAt = Date.now(); // refresh() has told onError what failed
            if (view === null) throw err;
            return view;
          },
        )
        .finally(() => {
          inflight = null;
        });
      if (opts.serveWhileLoading === true && view !== null) {
        // the view at hand answers; the reload (a manifest read, and a new version's load) goes on without the request
        inflight.catch(() => undefined);
        return view;
      }
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
      const key = keyFor(meta.version, meta.tocCrc32);
      // a version that just failed to load is not loaded again per request: gone for now (the client starts over)
      if (failed?.key === key && Date.now() < failed.until) return null;
      const had = pinned.get(key);
      if (had !== undefined) return touch(key, had).p;
      let size = 0; // counted from the start for an older version, so two loads at once both count
      if (versionSeq(meta.version) < versionSeq(cur?.version ?? 'v0')) {
        // an older version: loaded only if it fits beside the pinned views used lately (evicting idle ones), so
        // clients on two big older versions do not make the replica reload them in turn
        // resident bytes it would take, from its table of contents
        // (in place: the name samples only, so nothing to count before the load)
        size = files && stage === null ? 0 : residentBytesOf(await readVersionToc(opts.store, meta.version, meta.tocCrc32));
        const now = Date.now();
        let bytes = pinnedTotal();
        let count = pinned.size;
        const idle: string[] = [];
        for (const [k, e] of pinned) {
          if (count < PINNED_VIEWS && (count === 0 || bytes + size <= budget)) break;
          if (now - e.usedAt < PIN_IDLE_MS) continue;
          idle.push(k);
          bytes -= e.size;
          count -= 1;
        }
        // one view is allowed whatever its size once nothing in use is pinned (as the replaced view always is)
        if (count >= PINNED_VIEWS || (count > 0 && bytes + size > budget)) return null;
        for (const k of idle) unpin(k);
      }
      const again = pinned.get(key); // another request started it while the size was read
      if (again !== undefined) return touch(key, again).p;
      open(); // the awaits above may have met a close(): no view is loaded after it
      const entry = touch(key, { p: load(meta.version, meta.tocCrc32, false), size, usedAt: 0 });
      entry.p.then(
        (v) => {
          entry.size = held(v);
        },
        () => {
          if (pinned.get(key) === entry) pinned.delete(key);
        },
      );
      return entry.p;
    },
    cacheStats: () => parquet?.stats(),
    searchStats: () => runner?.stats(),
    loadFailure: () => failed === null ? null : {
      version: failed.version,
      code: String((failed.err as { code?: unknown } | null)?.code ?? 'other'),
      at: new Date(failed.at).toISOString(),
      retryAt: new Date(failed.until).toISOString(),
    },
    async close() {
      if (closed) return;
      closed = true;
      closing.abort(); // copies still running stop at their next chunk
      await inflight?.catch(() => undefined);
      // every load settles (a view loaded after this point closes itself: retire() sees `closed`)
      await Promise.allSettled([...loading]);
      // every view still at hand, and those waiting out their grace period, close their files now
      const pending = [...retiring];
      retiring.clear();
      for (const [t] of pending) clearTimeout(t);
      const views = [view, ...pending.map(([, v]) => v), ...(await Promise.all([...pinned.values()].map((e) => e.p.catch(() => null))))];
      await Promise.all([...new Set(views)].map((v) => v?.close()));
      await Promise.all([...lateCloses]);
      await reads.close();
      await runner?.close();
      await shards.close();
      await stage?.close();
    },
  };
  return source;
}
