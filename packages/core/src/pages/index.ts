export {
  NO_STATUS, NO_TIME, PAGE_SORTS, comparePageKeys, isoOfMs, matchesPage, pageAfter, pageKeyOf, parseStatusMatch, primaryLanguage, selectPage, sortMatches, sortValueOf,
} from './page-query';
export type { PageFilter, PageKey, PageOrder, PageQuery, PageResult, PageRow, PageSort, StatusMatch } from './page-query';
export { domainFactsOf, type FactsRow } from './domain-facts';
export { compareNewestFirst, textKept, type VersionedCapture } from './text-versions';
