import type { ParsedQuery } from '@ccpipe/core';
import type { SearchOptions } from './open-search-shard';
import type { ShardsResult } from './search-shards';

/** What each search worker is started with (`workerData`). */
export interface SearchWorkerConfig {
  /** Shard files a worker keeps open, least recently used closed first. */
  maxOpenShards: number;
}

/** One search sent to a worker. */
export interface SearchRequest {
  id: number;
  /** Shard files, searched in this order (a hit's `shard` is its index here). */
  paths: readonly string[];
  query: ParsedQuery;
  /** The search's options without a time limit: the worker sets its deadline from `budgetMs`. */
  opts: Omit<SearchOptions, 'deadline' | 'timeLimitMs'>;
  /** Milliseconds left of the time limit when the request was posted (a thread's `performance.now()` has its own origin). */
  budgetMs: number;
}

/** A failure as it crosses the thread boundary: a SearchError's code, else the thrown error's own code if any. */
export interface WireError {
  code: string | undefined;
  message: string;
  detail?: Record<string, unknown>;
}

/** A worker's answer to one {@link SearchRequest}. */
export type SearchReply = { id: number; ok: true; result: ShardsResult } | { id: number; ok: false; error: WireError };

/** Posted once by a worker when its modules have loaded and it can take searches. */
export interface SearchReady {
  ready: true;
}
