export { SearchError, type SearchErrorCode, type SearchQueryProblem } from './search-error';
export { parseSearchQuery, MAX_QUERY_CHARS, MAX_QUERY_WORDS, type ParsedQuery } from './parse-query';
