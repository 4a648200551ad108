export { UrlError } from './url-error';
export type { UrlErrorCode } from './url-error';
export { canonicalizeUrl, canonicalQuery, canonicalLinkTarget } from './canonicalize';
export type { CanonicalUrl, LinkTarget } from './canonicalize';
export { registeredDomainOf, registeredDomainsOfHost, icannDomainOfHost, isIpHost, normalizeHost } from './registered-domain';
export type { RegisteredDomains } from './registered-domain';
export { surtOf, surtPrefixForDomain, surtRangesForDomain, surtInRanges, surtHost } from './surt';
export type { SurtRange } from './surt';
export { normalizePercent } from './percent';
