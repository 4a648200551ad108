import { Domain64Registry } from './domain64-registry';
import type { Domain64Item, Domain64Range } from './domain64-registry';
import { DEFAULT_DOMAIN64_LAYOUT, domain64FromInt64, domain64ToInt64, formatDomain64, packDomain64, parseDomain64, unpackDomain64 } from './domain64';
import { hasCode } from '../errors';
import { canonicalizeUrl } from '../url';
import { domain64ItemOf } from './domain64-item';

/** mulberry32: small seeded PRNG so every run makes the same sequence. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A fixed opening that drives every overflow path with the tiny layout (one suffix with 9 domains,
 * one host with 10 URLs, one domain with 5 hosts and 40 URLs), then skewed random URLs: a few
 * suffixes and domains get most URLs, like the web.
 */
function* items(seed: number): Generator<Domain64Item> {
  for (let d = 0; d < 9; d++) yield { suffix: 'big', domain: `d${d}.big`, host: `d${d}.big`, url: `d${d}.big/` };
  for (let i = 0; i < 40; i++) {
    const host = i < 10 ? 'a.d0.big' : `${'abcde'[i % 5]}.d0.big`;
    yield { suffix: 'big', domain: 'd0.big', host, url: `${host}/forced${i}` };
  }
  const r = rng(seed);
  const skew = (n: number) => Math.floor(n * r() ** 3);
  for (let i = 0; ; i++) {
    const suffix = `s${skew(12)}`;
    const domain = `d${skew(40)}.${suffix}`;
    const host = `h${skew(12)}.${domain}`;
    yield { suffix, domain, host, url: `${host}/p${i}` };
  }
}

const TINY = { tld: 2, domain: 3, sub: 2, path: 3 };
const inRanges = (k: bigint, rs: Domain64Range[]) => rs.some((x) => k >= x.lo && k < x.hi);

function fill(reg: Domain64Registry, seed: number, max: number): { assigned: Array<[Domain64Item, bigint]>; full: unknown } {
  const assigned: Array<[Domain64Item, bigint]> = [];
  let full: unknown;
  const it = items(seed);
  for (let i = 0; i < max; i++) {
    const item = it.next().value as Domain64Item;
    try {
      assigned.push([item, reg.assign(item)]);
    } catch (err) {
      full = err;
      // a failed assign changes nothing: the url stays unknown (checked without expect: it is slow)
      if (reg.lookup(item.url) !== undefined) expect(item.url).toBe('not assigned after a failure');
    }
  }
  return { assigned, full };
}

/** Ranges of different owners must not overlap (an exclusive range overlaps nothing else at all). */
function expectDisjoint(owned: Array<[string, Domain64Range]>): void {
  const sorted = [...owned].sort(([, a], [, b]) => (a.lo < b.lo ? -1 : a.lo > b.lo ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) {
    const [po, p] = sorted[i - 1] as [string, Domain64Range];
    const [co, c] = sorted[i] as [string, Domain64Range];
    if (c.lo < p.hi && po !== co) expect([po, co, p.exclusive || c.exclusive]).toEqual([po, co, false]);
  }
}

function checkInvariants(reg: Domain64Registry, assigned: Array<[Domain64Item, bigint]>, totalBits: number): void {
  const keys = new Set(assigned.map(([, k]) => k));
  expect(keys.size).toBe(assigned.length); // no collisions
  const domains = new Set<string>();
  const hosts = new Set<string>();
  for (const [it, k] of assigned) {
    if (k < 0n || k >= 1n << BigInt(totalBits)) expect(k).toBe('within the layout');
    if (reg.lookup(it.url) !== k) expect(reg.lookup(it.url)).toBe(k);
    if (reg.domainOfKey(k) !== it.domain) expect(reg.domainOfKey(k)).toBe(it.domain);
    // every key lies in its domain's ranges and in its host's ranges
    if (!inRanges(k, reg.rangesForDomain(it.domain))) expect([it.url, 'outside its domain ranges']).toBe(false);
    if (!inRanges(k, reg.rangesForHost(it.domain, it.host))) expect([it.url, 'outside its host ranges']).toBe(false);
    domains.add(it.domain);
    hosts.add(`${it.domain} ${it.host}`);
  }
  // no two domains share key space; an exclusive host range shares it with no other host
  expectDisjoint([...domains].flatMap((d) => reg.rangesForDomain(d).map((r) => [d, r] as [string, Domain64Range])));
  expectDisjoint([...hosts].flatMap((dh) => {
    const [d = '', h = ''] = dh.split(' ');
    return reg.rangesForHost(d, h).map((r) => [dh, r] as [string, Domain64Range]);
  }));
}

describe('Domain64Registry with tiny widths (tld 2, domain 3, sub 2, path 3 bits)', () => {
  it('takes every overflow path, never collides, and fails loudly when full', () => {
    const reg = new Domain64Registry({ layout: TINY, tldReserve: 1, subReserve: 1 });
    const { assigned, full } = fill(reg, 42, 5000);
    expect(hasCode(full, 'CCP_ERR_DOMAIN64_FULL')).toBe(true);
    const s = reg.stats();
    expect(s.tld.shared).toBeGreaterThan(0); // suffixes past the dedicated tld slots share
    expect(s.tld.continued).toBeGreaterThan(0); // a suffix filled its tld slot and continued
    expect(s.continuedDomains).toBeGreaterThan(0); // a domain filled its block and continued
    expect(s.sharedSubSlots).toBeGreaterThan(0); // hosts past the dedicated sub slots share
    expect(s.continuedHosts).toBeGreaterThan(0); // a host filled its sub slot (path overflow)
    // 32 domain blocks of 32 keys: full once 32 blocks are open, however sparse (by design: a
    // registered domain gets a whole block so it stays one contiguous range)
    expect(assigned.length).toBeGreaterThan(200);
    expect(s.tld.free).toBe(0);
    checkInvariants(reg, assigned, 10);
  });

  it('is stable: same url same key, and a snapshot restores the exact same state', () => {
    for (const seed of [1, 2, 3]) {
      const reg = new Domain64Registry({ layout: { tld: 3, domain: 4, sub: 3, path: 4 }, tldReserve: 2, subReserve: 2 });
      const { assigned } = fill(reg, seed, 3000);
      for (const [it, k] of assigned) expect(reg.assign(it)).toBe(k);
      const restored = Domain64Registry.fromSnapshot(JSON.parse(JSON.stringify(reg.snapshot())));
      expect(restored.snapshot()).toEqual(reg.snapshot());
      checkInvariants(restored, assigned, 14);
      // both go on identically from here (deterministic single writer)
      const more = [...Array(300)].map((_, i) => ({ suffix: `s${i % 20}`, domain: `n${i % 50}.s${i % 20}`, host: `x${i % 7}.n${i % 50}.s${i % 20}`, url: `new-${i}` }));
      const a = more.map((m) => { try { return reg.assign(m); } catch { return 'full'; } });
      const b = more.map((m) => { try { return restored.assign(m); } catch { return 'full'; } });
      expect(b).toEqual(a);
      checkInvariants(restored, [...assigned, ...more.filter((_, i) => a[i] !== 'full').map((m, i) => [m, a.filter((x) => x !== 'full')[i] as bigint] as [Domain64Item, bigint])], 14);
    }
  });

  it('keeps one registered domain in one contiguous range while it fits', () => {
    const reg = new Domain64Registry({ layout: TINY, tldReserve: 1, subReserve: 1 });
    const keys = [...Array(20)].map((_, i) => reg.assign({ suffix: 'com', domain: 'example.com', host: `h${i % 3}.example.com`, url: `u${i}` }));
    const rs = reg.rangesForDomain('example.com');
    expect(rs.length).toBe(1);
    expect(keys.every((k) => inRanges(k, rs))).toBe(true);
    expect((rs[0] as Domain64Range).hi - (rs[0] as Domain64Range).lo).toBe(32n); // 2^(sub+path)
  });
});

describe('domain64 text and int64 forms', () => {
  it('formats and parses tld:domain:sub:path', () => {
    const k = packDomain64({ tld: 1, domain: 1, sub: 2, path: 2 });
    expect(formatDomain64(k)).toBe('01:000001:02:000002');
    expect(parseDomain64('01:000001:02:000002')).toBe(k);
    expect(unpackDomain64(k, DEFAULT_DOMAIN64_LAYOUT)).toEqual({ tld: 1, domain: 1, sub: 2, path: 2 });
    expect(() => parseDomain64('100:0:0:0')).toThrow(expect.objectContaining({ code: 'CCP_ERR_DOMAIN64_INPUT' }));
  });

  it('int64 form keeps the order of uint64 keys', () => {
    const ks = [0n, 1n, (1n << 63n) - 1n, 1n << 63n, (1n << 64n) - 1n];
    const signed = ks.map(domain64ToInt64);
    expect([...signed].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(signed);
    expect(signed.map(domain64FromInt64)).toEqual(ks);
  });
});

describe('domain64ItemOf', () => {
  it('maps canonical URLs to registry items', () => {
    expect(domain64ItemOf(canonicalizeUrl('https://a.b.example.co.uk/x'))).toEqual({ suffix: 'co.uk', domain: 'example.co.uk', host: 'a.b.example.co.uk', url: 'https://a.b.example.co.uk/x' });
    expect(domain64ItemOf(canonicalizeUrl('http://10.0.0.1/'))).toMatchObject({ suffix: '10.0.0.1', domain: '10.0.0.1' });
    expect(domain64ItemOf(canonicalizeUrl('http://co.uk/'))).toMatchObject({ suffix: 'co.uk', domain: 'co.uk' });
    const reg = new Domain64Registry();
    const k = reg.assign(domain64ItemOf(canonicalizeUrl('https://www.berlin.de/a')));
    expect(formatDomain64(k)).toBe('00:000000:00:000000');
    expect(formatDomain64(reg.assign(domain64ItemOf(canonicalizeUrl('https://service.berlin.de/b'))))).toBe('00:000000:01:000000');
    expect(formatDomain64(reg.assign(domain64ItemOf(canonicalizeUrl('https://www.bund.de/'))))).toBe('00:000001:00:000000');
  });
});
