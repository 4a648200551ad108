import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { LakeReaderStats, SearchRunnerCounters } from '@ccpipe/core';

/** Route labels: the closed set of route templates (never a raw path, domain or URL). */
export const API_ROUTES = [
  '/v1/domain/:domain',
  '/v1/domain/:domain/datasets/:dataset_id/urls',
  '/v1/domain/:domain/pages',
  '/v1/domain/:domain/inlinks',
  '/v1/url',
  '/v1/url/links',
  '/v1/pages',
  '/v1/search',
  '/v1/datasets',
  '/v1/datasets/:dataset_id/domains',
  '/v1/status',
  '/healthz',
  '/metrics',
  'static',
  'unmatched',
] as const;
export type ApiRoute = (typeof API_ROUTES)[number];

const DURATION = 'ccpipe_api_request_duration_seconds';

/** What the server reports per request. */
export interface ApiMetrics {
  observe(route: ApiRoute, status: number, seconds: number): void;
}

/**
 * `ccpipe_api_request_duration_seconds{route, status_class}` on `registry` (created once per registry): route is a
 * template from {@link API_ROUTES}, status_class `2xx`…`5xx`. Buckets are fine at the low end (goal: p99 ≤ 2 ms).
 */
export function apiMetrics(registry: Registry): ApiMetrics {
  // a second server on the same registry (a restart inside one process) shares the histogram
  const existing = registry.getSingleMetric(DURATION);
  const h = existing instanceof Histogram ? (existing as Histogram<'route' | 'status_class'>) : new Histogram({
    name: DURATION,
    help: 'API request latency, by route template and status class',
    labelNames: ['route', 'status_class'],
    buckets: [0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  // children are looked up once per (route, class), not per request
  const children = new Map<string, { observe(v: number): void }>();
  return {
    observe(route, status, seconds) {
      const cls = `${Math.floor(status / 100)}xx`;
      const k = `${route} ${cls}`;
      let c = children.get(k);
      if (c === undefined) children.set(k, (c = h.labels({ route, status_class: cls })));
      c.observe(seconds);
    },
  };
}

const LAKE_SOURCE = new WeakMap<Registry, () => LakeReaderStats | undefined>();

/**
 * The lake reader's counters on `registry`, read from `stats` at each scrape: `ccpipe_api_lake_cache_bytes` (decoded
 * chunks held), `ccpipe_api_lake_cache_{hits,misses,evictions}_total` and `ccpipe_api_lake_locator_fallbacks_total`
 * (lake files read by their footer because their row-group locator was missing or damaged: slower, not lost) and
 * `ccpipe_api_lake_damaged_chunks_total` (column chunks whose bytes failed their CRC32: the request fails with
 * `CCP_ERR_API_DATA_DAMAGED`).
 * Registered once per registry; a later call (a restart inside one process) points them at its own source. No labels.
 */
export function lakeReaderMetrics(registry: Registry, stats: () => LakeReaderStats | undefined): void {
  LAKE_SOURCE.set(registry, stats);
  if (registry.getSingleMetric('ccpipe_api_lake_cache_bytes') !== undefined) return;
  const now = (): LakeReaderStats | undefined => LAKE_SOURCE.get(registry)?.();
  new Gauge({
    name: 'ccpipe_api_lake_cache_bytes',
    help: 'Estimated bytes of decoded lake column chunks held by the API',
    registers: [registry],
    collect() {
      this.set(now()?.bytes ?? 0);
    },
  });
  const counter = (name: string, help: string, pick: (s: LakeReaderStats) => number): void => {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const s = now();
        this.reset();
        if (s !== undefined) this.inc(pick(s));
      },
    });
  };
  counter('ccpipe_api_lake_cache_hits_total', 'Lake column chunks answered from the decoded-chunk cache', (s) => s.hits);
  counter('ccpipe_api_lake_cache_misses_total', 'Lake column chunks fetched and decoded', (s) => s.misses);
  counter('ccpipe_api_lake_cache_evictions_total', 'Decoded lake column chunks evicted from the cache', (s) => s.evictions);
  counter('ccpipe_api_lake_locator_fallbacks_total', 'Lake files read by their Parquet footer because their row-group locator was missing or damaged', (s) => s.locatorFallbacks);
  counter('ccpipe_api_lake_damaged_chunks_total', 'Lake column chunks refused because their bytes did not match the CRC32 their locator records', (s) => s.damagedChunks);
}

const SEARCH_SOURCE = new WeakMap<Registry, () => SearchRunnerCounters | undefined>();

/**
 * The search threads' counters on `registry`, read at each scrape: `ccpipe_api_search_{completed,failed,timeouts,
 * restarts}_total` (a search past its time limit counts in failed and timeouts; a restart is a thread replaced, silent
 * past a deadline or dead) and `ccpipe_api_search_{queued,busy}` (searches waiting for a thread, threads searching).
 * Zero until the first search starts the threads. Registered once per registry, like {@link lakeReaderMetrics}.
 */
export function searchMetrics(registry: Registry, stats: () => SearchRunnerCounters | undefined): void {
  SEARCH_SOURCE.set(registry, stats);
  if (registry.getSingleMetric('ccpipe_api_search_completed_total') !== undefined) return;
  const now = (): SearchRunnerCounters | undefined => SEARCH_SOURCE.get(registry)?.();
  const counters: [string, string, keyof SearchRunnerCounters][] = [
    ['ccpipe_api_search_completed_total', 'Full-text searches answered', 'completed'],
    ['ccpipe_api_search_failed_total', 'Full-text searches that failed (time limit, a damaged shard, a thread that died)', 'failed'],
    ['ccpipe_api_search_timeouts_total', 'Full-text searches past their time limit (answered 503)', 'timeouts'],
    ['ccpipe_api_search_restarts_total', 'Search threads replaced (silent past a deadline, or dead)', 'restarts'],
  ];
  for (const [name, help, key] of counters) {
    new Counter({ name, help, registers: [registry], collect() {
      this.reset();
      this.inc(now()?.[key] ?? 0);
    } });
  }
  for (const [name, help, key] of [['ccpipe_api_search_queued', 'Full-text searches waiting for a search thread', 'queued'], ['ccpipe_api_search_busy', 'Search threads running a search', 'busy']] as const) {
    new Gauge({ name, help, registers: [registry], collect() {
      this.set(now()?.[key] ?? 0);
    } });
  }
}

/** Error codes a failed version load is counted under (anything else is `other`): a closed label set. */
export const INDEX_LOAD_FAILURE_CODES = ['CCP_ERR_INDEX_CRC', 'CCP_ERR_INDEX_MISSING', 'CCP_ERR_INDEX_FORMAT', 'CCP_ERR_STORE_IO', 'CCP_ERR_STORE_ACCESS', 'other'] as const;

/** What the API reports about the index versions it serves. */
export interface IndexMetrics {
  /** A new version could not be loaded (the served one keeps answering). */
  loadFailed(err: unknown): void;
}

const INDEX_SOURCE = new WeakMap<Registry, () => Promise<string | null>>();

/**
 * `ccpipe_api_index_version` (sequence number of the version this replica serves, read at each scrape: v000042 → 42,
 * 0 = none; beside the merger's `ccpipe_merge_index_version` it shows a replica that has not followed a flip) and
 * `ccpipe_api_index_load_failures_total{code}` (failed attempts to load a new version, by error code from
 * {@link INDEX_LOAD_FAILURE_CODES}). Registered once per registry; a later call points the gauge at its own source.
 */
export function indexMetrics(registry: Registry, served: () => Promise<string | null>): IndexMetrics {
  INDEX_SOURCE.set(registry, served);
  if (registry.getSingleMetric('ccpipe_api_index_version') === undefined) {
    new Gauge({
      name: 'ccpipe_api_index_version',
      help: 'Sequence number of the index version this API serves (v000042 → 42; 0 = none)',
      registers: [registry],
      async collect() {
        const v = await INDEX_SOURCE.get(registry)?.().catch(() => null);
        this.set(v === undefined || v === null ? 0 : Number(/^v(\d+)$/.exec(v)?.[1] ?? 0));
      },
    });
  }
  const existing = registry.getSingleMetric('ccpipe_api_index_load_failures_total');
  const failures = existing instanceof Counter ? (existing as Counter<'code'>) : new Counter({
    name: 'ccpipe_api_index_load_failures_total',
    help: 'Failed attempts to load a new index version (the one at hand kept serving; attempts pause 10 s to 5 min), by error code',
    labelNames: ['code'],
    registers: [registry],
  });
  for (const code of INDEX_LOAD_FAILURE_CODES) failures.inc({ code }, 0);
  return {
    loadFailed(err) {
      const c = (err as { code?: unknown } | null)?.code;
      const code = (INDEX_LOAD_FAILURE_CODES as readonly unknown[]).includes(c) ? (c as string) : 'other';
      failures.inc({ code });
    },
  };
}
