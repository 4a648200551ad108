import { readFileSync } from 'node:fs';
import { loadConfig, type Config, type ConfigKey, type IndexSource } from '@ccpipe/core';
import { localStoreDir, openObjectStore, runService, type Logger } from '@ccpipe/adapters';
import { openIndexSource } from '@ccpipe/index';
import { Acl } from './acl';
import type { Registry } from 'prom-client';
import { startApi, type StaticHandler, type StatusProvider } from './server';
import { indexMetrics, lakeReaderMetrics, searchMetrics, type IndexMetrics } from './metrics';
import { ingestStatusProvider } from './ingest-status';

/** What `apiMain` takes besides the config table's flags (until the table has api options of its own). */
export interface ApiMainOptions {
  /** Opens the index (default: {@link openLakeSource} on `config.data`). Closed by apiMain on exit. */
  openSource?: (config: Config) => Promise<IndexSource>;
  /** Default 8080; 0 = any free port. */
  port?: number;
  /** Default 0.0.0.0. */
  host?: string;
  /** Path of an ACL file (see docs/api.md); none = open API. */
  aclFile?: string;
  statusProvider?: StatusProvider;
  staticHandler?: StaticHandler;
  /** Resolves when the server should stop (default: SIGTERM/SIGINT). */
  stop?: Promise<unknown>;
  /** Called once listening (tests, `ccpipe run`). */
  onListening?: (url: string) => void;
}

/**
 * `ccpipe api`: config → logger → metrics → source → server, then serve until SIGTERM/SIGINT (or `opts.stop`),
 * close the server (open connections end), close the source, and resolve 0. Resolves 1 when startup fails (bad
 * config, unreadable ACL file, index that cannot be opened, port in use); the reason is logged.
 */
export async function apiMain(flags: Partial<Record<ConfigKey, unknown>>, env: NodeJS.ProcessEnv, opts: ApiMainOptions = {}): Promise<number> {
  const config = loadConfig(env, flags);
  // The API serves /metrics on its own port, so runService starts no separate metrics server.
  return runService({ service: 'api', logLevel: config.logLevel, metrics: null }, async ({ log, registry, signal, defer }) => {
    const aclFile = opts.aclFile ?? config.aclFile;
    const acl = aclFile !== undefined ? Acl.parse(readFileSync(aclFile)) : undefined;
    const store = openObjectStore(config.data, config);
    defer(() => store.close());
    const reporting = indexSourceReporting(log, registry);
    const source = await (opts.openSource ? opts.openSource(config) : openLakeSource(config, store, log, reporting.onError));
    defer(() => source.close());
    reporting.watch(source);
    const statusProvider = opts.statusProvider ?? ingestStatusProvider(store);
    // A stop during the first load (over S3 with --index-reads files, a copy of the whole index) ends it: the source
    // closes (deferred), which aborts the copy and removes it.
    const stopped = Symbol('stopped');
    const stopping = new Promise<typeof stopped>((resolve, reject) => {
      if (signal.aborted) resolve(stopped);
      else signal.addEventListener('abort', () => resolve(stopped), { once: true });
      opts.stop?.then(() => resolve(stopped), reject); // a failed stop fails the service (logged, exit 1)
    });
    const loading = source.current();
    const first = await Promise.race([loading, stopping]);
    if (first === stopped) {
      loading.catch(() => undefined);
      log.info('api stopped before serving');
      return 0;
    }
    log.info({ version: first?.version ?? null, acl: acl ? acl.size : 'open' }, 'index opened');
    const server = await startApi({
      source,
      port: opts.port ?? config.apiPort,
      host: opts.host ?? config.apiHost,
      registry,
      logger: log.child({ component: 'http' }),
      ...(acl && { acl }),
      statusProvider,
      ...(opts.staticHandler && { staticHandler: opts.staticHandler }),
    });
    defer(() => server.close());
    log.info({ port: server.port }, 'api listening');
    opts.onListening?.(server.url);
    await stopping;
    log.info('api stopped');
    return 0;
  });
}

/**
 * The production source: @ccpipe/index's reader over the data store `config.data` (a directory or s3://bucket/prefix:
 * index/manifest.json, lake files read by range), following manifest flips (re-read at most once a second),
 * the first version warmed up before it serves (a few pages read: the first requests find the read path compiled),
 * later ones loaded while the version at hand keeps answering (`serveWhileLoading`: a flip never stalls requests).
 * `apiMain` passes the store it also reads /v1/status from and closes it on exit; without one, a new store's S3
 * client lives as long as the process (its idle sockets do not keep it alive).
 */
export function openLakeSource(
  config: Config, store = openObjectStore(config.data, config), log?: Logger, onError?: (err: unknown, what: 'manifest' | 'load') => void,
): Promise<IndexSource> {
  const dataDir = localStoreDir(config.data);
  return openIndexSource({
    store, ...(dataDir !== undefined && { dataDir }), warmUp: true, serveWhileLoading: true, indexReads: config.apiIndexReads,
    ...(config.apiIndexCacheDir !== undefined && { indexCacheDir: config.apiIndexCacheDir }),
    search: { threads: config.apiSearchThreads, timeLimitMs: config.apiSearchTimeLimit },
    ...(log && { onStaleCopies: (dir: string) => log.info({ dir }, 'removed index copies left by a process that is gone') }),
    ...(onError && { onError }),
  });
}

/**
 * What `ccpipe api` and `ccpipe run` hang on a lake index source: `onError` for its options (the warnings below,
 * failed loads also counted), and `watch(source)` once it is open, which registers the lake-reader and index metrics
 * (`ccpipe_api_index_version`, `ccpipe_api_index_load_failures_total`) on `registry`.
 */
export function indexSourceReporting(log: Logger, registry: Registry): { onError: (err: unknown, what: 'manifest' | 'load') => void; watch(source: IndexSource): void } {
  let loads: IndexMetrics | undefined;
  return {
    onError: indexSourceWarnings(log, (err) => loads?.loadFailed(err)),
    watch(source) {
      lakeReaderMetrics(registry, () => source.cacheStats?.());
      searchMetrics(registry, () => source.searchStats?.());
      loads = indexMetrics(registry, async () => (await source.current())?.version ?? null);
    },
  };
}

/**
 * What a lake index source tells `onError`, logged at warn: each failed load of a new version (also handed to
 * `counted`; the source pauses between attempts), and an unreadable manifest at most once a minute (the source reads
 * it again at every poll). For `ccpipe api` and `ccpipe run`.
 */
export function indexSourceWarnings(log: Logger, counted?: (err: unknown) => void): (err: unknown, what: 'manifest' | 'load') => void {
  let manifestLoggedAt = -Infinity;
  return (err, what) => {
    if (what === 'load') {
      counted?.(err);
      log.warn({ err }, 'a new index version could not be loaded; the served one (if any) keeps answering');
    } else if (Date.now() - manifestLoggedAt >= 60_000) {
      manifestLoggedAt = Date.now();
      log.warn({ err }, 'the index manifest could not be read; the served version (if any) keeps answering');
    }
  };
}
