import { DEFAULT_DOMAIN64_LAYOUT, SlotSpace, isIpHost, packDomain64, type Domain64Layout, type SlotSpaceSnapshot } from '@ccpipe/core';
import { IndexFormatError } from './format';

/** domain-ids.json: the level-1 domain64 allocation (public suffix slots → registered domain ids). */
export interface DomainIdsSnapshot {
  v: 1;
  layout: Domain64Layout;
  tlds: SlotSpaceSnapshot;
  /** [domain, tld slot, domain id] in assignment order. */
  domains: [string, number, number][];
}

/**
 * The merger's domain registry: gives each registered domain one domain64 block `tld:domain:00:000000` (docs/keys.md
 * level 1, the same SlotSpace allocator as Domain64Registry) and never changes it. Only the domain level is kept —
 * O(domains) memory, not O(URLs) — because the lake sorts by (domain64, url) and needs no per-URL path id.
 * Snapshotted into every index version, so ids are stable across versions. Pure, single writer.
 */
export class DomainIds {
  private readonly byDomain = new Map<string, bigint>();
  private readonly order: [string, number, number][] = [];

  private constructor(
    readonly layout: Domain64Layout,
    private readonly tlds: SlotSpace,
  ) {}

  static empty(layout: Domain64Layout = DEFAULT_DOMAIN64_LAYOUT): DomainIds {
    return new DomainIds({ ...layout }, new SlotSpace(2 ** layout.tld, 2 ** layout.domain, Math.floor(2 ** layout.tld / 8)));
  }

  /** @throws IndexFormatError CCP_ERR_INDEX_FORMAT for an unknown snapshot version. */
  static fromSnapshot(s: DomainIdsSnapshot): DomainIds {
    if (s.v !== 1) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'unknown domain-ids snapshot version', { v: s.v });
    const r = new DomainIds({ ...s.layout }, SlotSpace.fromSnapshot(s.tlds));
    for (const [d, tld, id] of s.domains) {
      r.byDomain.set(d, packDomain64({ tld, domain: id, sub: 0, path: 0 }, r.layout));
      r.order.push([d, tld, id]);
    }
    return r;
  }

  get size(): number {
    return this.byDomain.size;
  }

  get(domain: string): bigint | undefined {
    return this.byDomain.get(domain);
  }

  /**
   * The block key of a registered domain, assigning the next id of its public suffix's slot on first sight.
   * Idempotent per domain. @throws Domain64Error-like IndexFormatError when the tld level is full.
   */
  assign(domain: string): bigint {
    const known = this.byDomain.get(domain);
    if (known !== undefined) return known;
    const dot = domain.indexOf('.');
    const suffix = isIpHost(domain) || dot < 0 ? domain : domain.slice(dot + 1);
    const r = this.tlds.alloc(suffix);
    if (r === null) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'domain64 tld/domain level is full', { suffix });
    const key = packDomain64({ tld: r.slot, domain: r.id, sub: 0, path: 0 }, this.layout);
    this.byDomain.set(domain, key);
    this.order.push([domain, r.slot, r.id]);
    return key;
  }

  snapshot(): DomainIdsSnapshot {
    return { v: 1, layout: { ...this.layout }, tlds: this.tlds.snapshot(), domains: this.order.map((e) => [...e] as [string, number, number]) };
  }
}

/**
 * The hive partition of a domain block: the low `bits` (1..8, default 8) bits of its domain id field as two hex
 * digits. Ids are sequential per suffix slot, so partitions fill evenly.
 */
export function partitionOf(d64: bigint, layout: Domain64Layout = DEFAULT_DOMAIN64_LAYOUT, bits = 8): string {
  const id = Number((d64 >> BigInt(layout.sub + layout.path)) & ((1n << BigInt(bits)) - 1n));
  return id.toString(16).padStart(2, '0');
}
