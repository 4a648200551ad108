import { unpackDomain64, type Domain64Layout } from '@ccpipe/core';
import { DomainIds, type DomainIdsSnapshot } from './domain-ids';
import { DomainDictionary } from './format';
import { indexFiles } from '../../../tests/support/index-files';
import { rng } from '../../../tests/support/rng';

// Common Crawl's distribution scaled down (docs/keys.md, bench/domain64-distribution.bench.js for the full size): the
// domain field 14 bits narrower (1,024 ids a tld slot for 2²⁴) and the domains of CC-MAIN-2024-42 divided by 2¹⁴
// (bench/data/cc-main-2024-42-tlds.csv, scaled to the crawl's 38.3 M distinct domains): .com holds 1.10 slots, as at
// full size, and 600 small suffixes come after the 224 that get a slot of their own.
const LAYOUT: Domain64Layout = { tld: 8, domain: 10, sub: 8, path: 31 };
const PER_SLOT = 2 ** LAYOUT.domain;
const TOP: [string, number][] = [
  ['com', 1122], ['de', 139], ['org', 90], ['net', 68], ['ru', 66], ['uk', 52], ['nl', 47], ['fr', 43], ['jp', 41], ['it', 37],
];
const MERGES = 5;

const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));
const suffixOf = (domain: string): string => domain.slice(domain.indexOf('.') + 1);

/** Every domain of the scaled crawl with the merge it first appears in (seeded). */
function crawl(seed: number): { domain: string; first: number }[] {
  const r = rng(seed);
  const counts: [string, number][] = [...TOP, ...Array.from({ length: 600 }, (_, j): [string, number] => [`t${j}`, 1 + r.next(4)])];
  const out: { domain: string; first: number }[] = [];
  for (const [suffix, n] of counts) {
    for (let i = 0; i < n; i++) {
      const label = Array.from({ length: 3 + r.next(8) }, () => String.fromCharCode(97 + r.next(26))).join('');
      out.push({ domain: `${label}-${i.toString(36)}.${suffix}`, first: r.next(MERGES) });
    }
  }
  return out;
}

/**
 * Runs the merges the way runMerge does: each restores the registry from the previous version's allocator snapshot
 * (through JSON) and its domains.bin, walks the merge's distinct domains in byte order (new ones and a share of those
 * already known) with assignSorted, and writes the union as the next domains.bin. Returns every key a merge handed
 * out per domain, the final dictionary and snapshot.
 */
function runMerges(seed: number): { seen: Map<string, bigint[]>; dict: DomainDictionary; snap: DomainIdsSnapshot; domains: string[] } {
  const all = crawl(seed);
  const r = rng(seed + 1);
  const seen = new Map<string, bigint[]>();
  const known = new Map<string, bigint>();
  let snap: DomainIdsSnapshot | null = null;
  let dict = new DomainDictionary(indexFiles([]).domains);
  for (let m = 0; m < MERGES; m++) {
    const batch = all.filter((d) => d.first === m || (d.first < m && r.chance(0.3))).map((d) => d.domain).sort(byteOrder);
    const ids = snap === null ? DomainIds.empty(LAYOUT) : DomainIds.fromSnapshot(snap, dict);
    for (const d of batch) {
      const k = ids.assignSorted(d);
      seen.set(d, [...(seen.get(d) ?? []), k]);
      if (!known.has(d)) known.set(d, k);
    }
    snap = JSON.parse(JSON.stringify(ids.snapshot())) as DomainIdsSnapshot;
    dict = new DomainDictionary(indexFiles([...known].map(([domain, d64]) => ({ domain, d64 }))).domains);
  }
  return { seen, dict, snap: snap!, domains: all.map((d) => d.domain) };
}

describe('domain64 at Common Crawl’s distribution (scaled down)', () => {
  const { seen, dict, snap, domains } = runMerges(23);
  const keyOf = (d: string): bigint => seen.get(d)![0]!;

  it('gives every registered domain its own block, and a known domain the same key in every later merge', () => {
    expect(seen.size).toBe(domains.length);
    expect(new Set(domains.map(keyOf)).size).toBe(domains.length);
    for (const d of domains) {
      const f = unpackDomain64(keyOf(d), LAYOUT);
      expect([f.sub, f.path]).toEqual([0, 0]); // a block: the whole site's range
    }
    const again = [...seen.values()].filter((ks) => ks.length > 1);
    expect(again.length).toBeGreaterThan(500);
    for (const ks of again) expect(new Set(ks).size).toBe(1);
    // the last version's dictionary and allocator agree (every key one the allocator handed out) and give the same keys
    const back = DomainIds.fromSnapshot(snap, dict);
    for (const d of domains) expect(back.get(d)).toBe(keyOf(d));
  });

  it('puts .com past its slot into shared slots, and every key in a slot of its own suffix or a shared one', () => {
    const owners = snap.tlds.owners;
    const slotOf = (d: string): number => unpackDomain64(keyOf(d), LAYOUT).tld;
    const com = domains.filter((d) => suffixOf(d) === 'com');
    expect(com.length).toBeGreaterThan(PER_SLOT);
    const comSlots = com.map(slotOf);
    const home = comSlots.filter((s) => owners[s] === 'com');
    // .com fills its own slot before a single one of its domains goes elsewhere
    expect(home.length).toBe(PER_SLOT);
    expect(comSlots.filter((s) => owners[s] === null).length).toBe(com.length - PER_SLOT);
    // no key lands in a slot another suffix owns, so a dedicated slot's keys all belong to its suffix
    for (const d of domains) expect([suffixOf(d), null]).toContain(owners[slotOf(d)]);
    // 224 suffixes got a slot of their own (the reserve of 32 kept for shared ones), the rest share
    expect(owners.filter((o) => o !== null).length).toBe(224);
    expect(owners.filter((o) => o === null).length).toBeGreaterThan(0);
    const withSlot = new Set(owners.filter((o) => o !== null));
    expect(new Set(domains.map(suffixOf)).size - withSlot.size).toBeGreaterThan(300);
  });

  it('assigns the same keys on a replay of the same merges', () => {
    const replay = runMerges(23);
    for (const d of domains.slice(0, 500)) expect(replay.seen.get(d)![0]).toBe(keyOf(d));
  });
});
