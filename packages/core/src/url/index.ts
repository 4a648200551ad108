export { UrlError } from './url-error';
export type { UrlErrorCode } from './url-error';
export { canonicalizeUrl, canonicalQuery } from './canonicalize';
export type { CanonicalUrl } from './canonicalize';
export { registeredDomainOf, registeredDomainsOfHost, isIpHost, normalizeHost } from './registered-domain';
export type { RegisteredDomains } from './registered-domain';
export { surtOf, surtPrefixForDomain, surtRangesForDomain, surtInRanges, surtHost } from './surt';
export type { SurtRange } from './surt';
export { normalizePercent } from './percent';
