import type { CanonicalUrl } from '../url';
import { isIpHost } from '../url';
import type { Domain64Item } from './domain64-registry';

/**
 * The registry item of a canonical URL: ICANN registered domain and its public suffix; an IP host
 * is its own domain and suffix; a host that is itself a public suffix (`domain` null) is its own
 * domain under itself. Pure.
 */
export function domain64ItemOf(c: Pick<CanonicalUrl, 'host' | 'domain' | 'url'>): Domain64Item {
  const domain = c.domain ?? c.host;
  const dot = domain.indexOf('.');
  const suffix = isIpHost(domain) || c.domain === null || dot < 0 ? domain : domain.slice(dot + 1);
  return { suffix, domain, host: c.host, url: c.url };
}
