import { Histogram, type Registry } from 'prom-client';

/** Route labels: the closed set of route templates (never a raw path, domain or URL). */
export const API_ROUTES = [
  '/v1/domain/:domain',
  '/v1/domain/:domain/datasets/:dataset_id/urls',
  '/v1/url',
  '/v1/datasets',
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
