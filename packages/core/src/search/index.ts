export { SearchError, type SearchErrorCode, type SearchQueryProblem } from './search-error';
export { parseSearchQuery, MAX_QUERY_CHARS, MAX_QUERY_WORDS, MAX_SEARCH_LIMIT, MAX_SEARCH_WINDOW, type ParsedQuery } from './parse-query';
