import { CcpError } from '../errors';

/** Stable codes a search can fail with. */
export type SearchErrorCode = 'CCP_ERR_SEARCH_QUERY' | 'CCP_ERR_SEARCH_TIMEOUT' | 'CCP_ERR_SEARCH_SHARD';

/** Why a query was refused (`detail.reason` of a `CCP_ERR_SEARCH_QUERY`), a small closed set safe as a metric label. */
export type SearchQueryProblem = 'empty' | 'too_long' | 'no_words' | 'only_exclusions' | 'too_many_words' | 'bad_option';

/**
 * A search that cannot be answered:
 * - `CCP_ERR_SEARCH_QUERY`: the user's query (or a search option) is unusable — empty, longer than the limit, no
 *   searchable word, only exclusions, too many words. The message names the problem in words a user can act on (the
 *   API returns it with a 400); `detail.reason` is the {@link SearchQueryProblem}. Never retryable.
 * - `CCP_ERR_SEARCH_TIMEOUT`: the query ran past its time limit and was interrupted (the API answers 503 with
 *   Retry-After). Retryable: the same query may pass on a less busy replica.
 * - `CCP_ERR_SEARCH_SHARD`: a shard file is missing, not a search shard, or of an unknown format version.
 * The query text is never in the message (it is untrusted); it may be in `detail.query`, cut to 200 chars.
 */
export class SearchError extends CcpError {
  declare readonly code: SearchErrorCode;

  constructor(code: SearchErrorCode, message: string, options: { cause?: unknown; detail?: Record<string, unknown> } = {}) {
    super(code, message, { ...options, retryable: code === 'CCP_ERR_SEARCH_TIMEOUT' });
  }
}
