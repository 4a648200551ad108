import { SearchError, type ParsedQuery } from '@ccpipe/core';
import { checkOptions, deadlineOf, type SearchHit, type SearchOptions, type SearchShard } from './open-search-shard';

/** A hit of a search over several shards: which shard (its index in the array searched) it came from. */
export interface ShardHit extends SearchHit {
  shard: number;
}

/** A page of hits over several shards. */
export interface ShardsResult {
  hits: ShardHit[];
  /** The sum of the shards' totals; an estimate when any shard's was (`totalExact` false). */
  total: number;
  totalExact: boolean;
  /** Shards searched (all of them: a search past its deadline throws instead of answering in part). */
  shards: number;
}

/**
 * Searches every shard and merges their best matches by score (−BM25, higher first; ties by shard order, then rowId),
 * then reads fields and snippets for the final page only. Each shard ranks with its own BM25 statistics (document
 * count, term document frequencies, average length): scores are comparable across shards as far as those statistics
 * agree, which they do for lake partitions (a dataset's domains split evenly); docs/search.md gives the measured
 * agreement with one index over all the docs and the caveat (a term common in one partition and rare in the others
 * scores lower there). One deadline covers the whole search. Synchronous.
 * @throws SearchError `CCP_ERR_SEARCH_TIMEOUT` when the deadline passes (checked between shards and within each),
 *   `CCP_ERR_SEARCH_QUERY` (`bad_option`) for bad options (see {@link SearchShard.search}).
 */
export function searchShards(shards: readonly SearchShard[], query: ParsedQuery, opts: SearchOptions): ShardsResult {
  checkOptions(opts);
  const deadline = deadlineOf(opts);
  const offset = opts.offset ?? 0;
  const all: { shard: number; rowId: number; score: number }[] = [];
  let total = 0;
  let exact = true;
  shards.forEach((shard, i) => {
    if (performance.now() > deadline) throw new SearchError('CCP_ERR_SEARCH_TIMEOUT', 'the search ran past its time limit');
    const r = shard.rank(query, { ...opts, deadline });
    total += r.total;
    exact &&= r.totalExact;
    for (const row of r.rows) all.push({ ...row, shard: i });
  });
  all.sort((a, b) => b.score - a.score || a.shard - b.shard || a.rowId - b.rowId);
  const hits = all.slice(offset, offset + opts.limit).map((row) => ({ ...shards[row.shard]!.hits(query, [row], opts)[0]!, shard: row.shard }));
  return { hits, total, totalExact: exact, shards: shards.length };
}
