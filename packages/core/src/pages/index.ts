export {
  PAGE_SORTS, comparePageKeys, matchesPage, pageKeyOf, parseStatusMatch, primaryLanguage, selectPage, sortValueOf,
} from './page-query';
export type { PageFilter, PageKey, PageOrder, PageQuery, PageResult, PageRow, PageSort, StatusMatch } from './page-query';
export { domainFactsOf, type FactsRow } from './domain-facts';
