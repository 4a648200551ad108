export { buildSearchShard, ShardBuilder, type SearchDoc, type BuildShardOptions, type BuildShardResult } from './build-search-shard';
export { ShardBuildPool, type ShardBuildPoolOptions } from './build-pool';
export {
  openSearchShard,
  MAX_WINDOW,
  DEFAULT_COUNT_CAP,
  DEFAULT_TIME_LIMIT_MS,
  TITLE_WEIGHT,
  type SearchShard,
  type SearchOptions,
  type SearchHit,
  type SearchResult,
  type RankedRow,
  type RankResult,
} from './open-search-shard';
export { searchShards, type ShardHit, type ShardsResult } from './search-shards';
export {
  SearchRunner,
  defaultSearchWorkerPath,
  DEFAULT_GRACE_MS,
  DEFAULT_MAX_OPEN_SHARDS,
  type SearchRunnerOptions,
  type SearchRunOptions,
  type SearchRunnerStats,
} from './search-runner';
export { snippetParts, snippetHtml, escapeHtml, type SnippetPart } from './snippet';
export { SHARD_FORMAT, TOKENIZER_PLAIN, TOKENIZER_PORTER } from './shard-schema';
export { parseSearchQuery, SearchError, MAX_QUERY_CHARS, MAX_QUERY_WORDS, type ParsedQuery } from '@ccpipe/core';
