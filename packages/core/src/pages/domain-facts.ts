import { isoOfMs, NO_TIME } from './page-query';
import type { DomainFacts } from '../ports/index-view';

/** What {@link domainFactsOf} needs of one row. */
export interface FactsRow {
  host: string;
  status: number;
  /** Primary language, or null. */
  language: string | null;
  /** Epoch ms. */
  ts: number;
  contentLength: number | null;
}

/** The nearest-rank percentile `p` (0–100) of sorted values; null for none. */
function nearestRank(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * The facts of one (domain, dataset) from its rows, as {@link DomainFacts} defines them. A reference computation in
 * plain code: the merger computes the same at scale; in-memory views and tests use this. Null for no rows.
 */
export function domainFactsOf(rows: readonly FactsRow[]): DomainFacts | null {
  if (rows.length === 0) return null;
  const hosts = new Set<string>();
  const classes = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  const langs = new Map<string, number>();
  const sizes: number[] = [];
  let first = Infinity;
  let last = -Infinity;
  for (const r of rows) {
    hosts.add(r.host);
    const c = `${Math.floor(r.status / 100)}xx`;
    if (c in classes) classes[c as keyof typeof classes]++;
    if (r.language !== null) langs.set(r.language, (langs.get(r.language) ?? 0) + 1);
    if (r.contentLength !== null) sizes.push(r.contentLength);
    if (r.ts === NO_TIME) continue;
    first = Math.min(first, r.ts);
    last = Math.max(last, r.ts);
  }
  sizes.sort((a, b) => a - b);
  const iso = (ms: number): string | null => (Number.isFinite(ms) ? isoOfMs(ms) : null);
  return {
    hosts: hosts.size,
    statusClasses: classes,
    languages: [...langs].map(([code, count]) => ({ code, count })).sort((a, b) => b.count - a.count || (a.code < b.code ? -1 : 1)).slice(0, 10),
    firstTs: iso(first),
    lastTs: iso(last),
    contentLengthMedian: nearestRank(sizes, 50),
    contentLengthP90: nearestRank(sizes, 90),
  };
}
