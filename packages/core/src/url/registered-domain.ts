import { domainToASCII } from 'node:url';
import { parse as tldtsParse, getDomain } from 'tldts';

// The host we pass in is already a WHATWG hostname (lower-case, punycode, IPs normalised), so tldts
// need not extract or validate it again; that roughly halves its cost.
const ICANN_OPTS = { allowPrivateDomains: false, extractHostname: false, validateHostname: false, detectIp: false, mixedInputs: false } as const;
const PRIVATE_OPTS = { ...ICANN_OPTS, allowPrivateDomains: true } as const;

const IPV4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** True for a WHATWG-serialised IP host: dotted-quad IPv4 or bracketed IPv6. */
export function isIpHost(host: string): boolean {
  return host.charCodeAt(0) === 91 /* [ */ || IPV4.test(host);
}

/** Registered domains of one hostname under the ICANN section and with the private section too. */
export interface RegisteredDomains {
  /** eTLD+1 under the ICANN section only (`foo.blogspot.com` → `blogspot.com`); the IP itself for IP hosts. */
  domain: string | null;
  /** eTLD+1 with the private section too (`foo.blogspot.com` → `foo.blogspot.com`); the IP for IP hosts. */
  privateDomain: string | null;
}

/**
 * Registered domains of a canonical hostname (lower-case ASCII/punycode, no trailing dot, as
 * `canonicalizeUrl` yields). IP hosts are their own registered domain: a crawl groups an IP's pages
 * together the way it groups a domain's. `null` when the host is itself a public suffix (`co.uk`).
 * Pure, idempotent; never throws.
 */
export function registeredDomainsOfHost(host: string): RegisteredDomains {
  if (isIpHost(host)) return { domain: host, privateDomain: host };
  // An empty label (`exa..com`, which WHATWG hosts allow) has no registered domain: tldts would answer `.com`.
  if (host.includes('..')) return { domain: null, privateDomain: null };
  const r = tldtsParse(host, PRIVATE_OPTS);
  if (r.isPrivate !== true) return { domain: r.domain, privateDomain: r.domain };
  return { domain: getDomain(host, ICANN_OPTS), privateDomain: r.domain };
}

/**
 * The ICANN registered domain of a canonical hostname: `registeredDomainsOfHost(host).domain` without the private
 * section's lookup (one PSL walk instead of up to two), for callers that need only that (link targets, core
 * `canonicalLinkTarget`). Pure; never throws.
 */
export function icannDomainOfHost(host: string): string | null {
  if (isIpHost(host)) return host;
  if (host.includes('..')) return null;
  return getDomain(host, ICANN_OPTS);
}

/**
 * Normalises a bare host the way the WHATWG parser would for the common cases: lower-case, IDNA to
 * punycode, trailing dot dropped, `:port` dropped, a bare IPv6 address bracketed. Returns '' when the
 * host is not valid.
 */
export function normalizeHost(input: string): string {
  let h = input.trim();
  if (h.length === 0) return '';
  if (h.charCodeAt(0) !== 91 && h.includes(':')) {
    // a bare IPv6 address has several colons; host:port has one
    if (h.indexOf(':') !== h.lastIndexOf(':')) h = `[${h}]`;
    else h = h.slice(0, h.indexOf(':'));
  } else if (h.charCodeAt(0) === 91) {
    const end = h.indexOf(']');
    if (end > 0) h = h.slice(0, end + 1);
  }
  if (h.charCodeAt(0) === 91) {
    try {
      return new URL(`http://${h}/`).hostname;
    } catch {
      return '';
    }
  }
  const ascii = domainToASCII(h); // lower-cases, maps IDNA, '' when invalid; also normalises IPv4 forms
  return ascii.endsWith('.') ? ascii.slice(0, -1) : ascii;
}

/**
 * Fast helper: the ICANN registered domain of a URL (anything containing `://`) or a bare host.
 * Same rules as `canonicalizeUrl(...).domain`; `null` when the input has no host, the host is a
 * public suffix, or the input does not parse. Never throws.
 */
export function registeredDomainOf(urlOrHost: string): string | null {
  let host: string;
  if (urlOrHost.includes('://')) {
    try {
      host = new URL(urlOrHost).hostname;
    } catch {
      return null;
    }
    if (host.endsWith('.')) host = host.slice(0, -1);
  } else {
    host = normalizeHost(urlOrHost);
  }
  // '.example.com' is not a host name (PSL test vectors expect null)
  if (host.length === 0 || host.charCodeAt(0) === 46) return null;
  if (isIpHost(host)) return host;
  if (host.includes('..')) return null;
  return getDomain(host, ICANN_OPTS);
}
