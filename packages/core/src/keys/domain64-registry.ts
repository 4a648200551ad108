import { DEFAULT_DOMAIN64_LAYOUT, Domain64Error, checkLayout, packDomain64, unpackDomain64 } from './domain64';
import type { Domain64Layout } from './domain64';
import { SlotSpace } from './slot-space';
import type { SlotSpaceSnapshot } from './slot-space';

/** Where one URL belongs: its public suffix, ICANN registered domain, host, and a unique URL key (canonical URL or url_id hex). */
export interface Domain64Item {
  suffix: string;
  domain: string;
  host: string;
  url: string;
}

/** A half-open key range `lo <= key < hi`; `exclusive` false means other owners' keys live there too (filter). */
export interface Domain64Range {
  lo: bigint;
  hi: bigint;
  exclusive: boolean;
}

interface Block {
  tld: number;
  domain: number;
  space: SlotSpace; // sub slots × path ids inside this (tld, domain)
}

interface DomainEntry {
  suffix: string;
  blocks: Block[];
  hosts: Map<string, Array<[block: number, sub: number]>>;
}

/** Plain, JSON-safe snapshot (keys as hex strings) for the merger to persist. */
export interface Domain64Snapshot {
  version: 1;
  layout: Domain64Layout;
  reserve: { tld: number; sub: number };
  tlds: SlotSpaceSnapshot;
  domains: Array<{ domain: string; suffix: string; blocks: Array<{ tld: number; domain: number; space: SlotSpaceSnapshot }>; hosts: Array<[string, Array<[number, number]>]> }>;
  urls: Array<[string, string]>;
}

/** Options: field widths and how many slots each level keeps back for shared use. */
export interface Domain64RegistryOptions {
  layout?: Domain64Layout;
  /** tld slots kept for suffixes that come after the dedicated ones are gone (default 1/8 of them). */
  tldReserve?: number;
  /** sub slots per domain block kept for hosts after the dedicated ones are gone (default 1/8). */
  subReserve?: number;
}

/**
 * Assigns domain64 keys (docs/keys.md). One writer (the merger) calls `assign`; ids are stable
 * forever once given and never collide: when a level is full the registry overflows into shared or
 * continuation slots, and throws CCP_ERR_DOMAIN64_FULL rather than reuse a key. A registered
 * domain's keys fill one contiguous range (its block) until it holds 2^(sub+path) URLs; past that
 * it continues in another block, and `rangesForDomain` lists all of them. In-memory, pure.
 */
export class Domain64Registry {
  readonly layout: Domain64Layout;
  private tlds: SlotSpace;
  private readonly subReserve: number;
  private readonly domains = new Map<string, DomainEntry>();
  private readonly blockOwner = new Map<number, string>(); // tld * 2^domainBits + domain → registered domain
  private readonly urls = new Map<string, bigint>();

  constructor(opts: Domain64RegistryOptions = {}) {
    this.layout = { ...(opts.layout ?? DEFAULT_DOMAIN64_LAYOUT) };
    checkLayout(this.layout);
    const { tld, domain, sub } = this.layout;
    this.tlds = new SlotSpace(2 ** tld, 2 ** domain, opts.tldReserve ?? Math.floor(2 ** tld / 8));
    this.subReserve = opts.subReserve ?? Math.floor(2 ** sub / 8);
  }

  /**
   * The key of `item.url`, assigning one on first sight. Idempotent per url: a url already known
   * returns its key whatever suffix/domain/host come with it.
   * @throws Domain64Error CCP_ERR_DOMAIN64_FULL when no slot is left; nothing is changed then.
   */
  assign(item: Domain64Item): bigint {
    const known = this.urls.get(item.url);
    if (known !== undefined) return known;
    let entry = this.domains.get(item.domain);
    const fresh = entry === undefined;
    if (entry === undefined) entry = { suffix: item.suffix, blocks: [], hosts: new Map() };
    let blockIdx = entry.blocks.length - 1;
    let block = entry.blocks[blockIdx];
    let r = block?.space.alloc(item.host) ?? null;
    if (r === null) {
      block = this.newBlock(entry, item.domain);
      blockIdx = entry.blocks.length - 1;
      r = block.space.alloc(item.host);
      if (r === null) throw new Domain64Error('CCP_ERR_DOMAIN64_FULL', 'domain64 sub level cannot place a host in a fresh block');
    }
    if (fresh) this.domains.set(item.domain, entry);
    const places = entry.hosts.get(item.host);
    if (places === undefined) entry.hosts.set(item.host, [[blockIdx, r.slot]]);
    else if (!places.some(([b, s]) => b === blockIdx && s === r.slot)) places.push([blockIdx, r.slot]);
    const b = block as Block;
    const key = packDomain64({ tld: b.tld, domain: b.domain, sub: r.slot, path: r.id }, this.layout);
    this.urls.set(item.url, key);
    return key;
  }

  /** The key of a url, or undefined when it was never assigned. */
  lookup(url: string): bigint | undefined {
    return this.urls.get(url);
  }

  /** The registered domain whose block holds `key`, or undefined for a key no block owns. */
  domainOfKey(key: bigint): string | undefined {
    const f = unpackDomain64(key, this.layout);
    return this.blockOwner.get(f.tld * 2 ** this.layout.domain + f.domain);
  }

  /** Every key range of a registered domain (one per block; one unless it overflowed). All exclusive. */
  rangesForDomain(domain: string): Domain64Range[] {
    const entry = this.domains.get(domain);
    if (entry === undefined) return [];
    const width = 1n << BigInt(this.layout.sub + this.layout.path);
    return entry.blocks.map((b) => {
      const lo = packDomain64({ tld: b.tld, domain: b.domain, sub: 0, path: 0 }, this.layout);
      return { lo, hi: lo + width, exclusive: true };
    });
  }

  /** Key ranges holding a host's URLs: its dedicated sub slots (exclusive) and shared ones (filter by url). */
  rangesForHost(domain: string, host: string): Domain64Range[] {
    const entry = this.domains.get(domain);
    const places = entry?.hosts.get(host);
    if (entry === undefined || places === undefined) return [];
    const width = 1n << BigInt(this.layout.path);
    return places.map(([bi, sub]) => {
      const b = entry.blocks[bi] as Block;
      const lo = packDomain64({ tld: b.tld, domain: b.domain, sub, path: 0 }, this.layout);
      return { lo, hi: lo + width, exclusive: b.space.ownerOf(sub) === host };
    });
  }

  /** Counts of every overflow path taken so far (monitoring, tests). */
  stats(): { domains: number; urls: number; tld: ReturnType<SlotSpace['stats']>; continuedDomains: number; sharedSubSlots: number; continuedHosts: number } {
    let continuedDomains = 0;
    let sharedSubSlots = 0;
    let continuedHosts = 0;
    for (const e of this.domains.values()) {
      if (e.blocks.length > 1) continuedDomains++;
      for (const b of e.blocks) {
        const s = b.space.stats();
        sharedSubSlots += s.shared;
        continuedHosts += s.continued;
      }
    }
    return { domains: this.domains.size, urls: this.urls.size, tld: this.tlds.stats(), continuedDomains, sharedSubSlots, continuedHosts };
  }

  snapshot(): Domain64Snapshot {
    return {
      version: 1,
      layout: { ...this.layout },
      reserve: { tld: this.tlds.reserve, sub: this.subReserve },
      tlds: this.tlds.snapshot(),
      domains: [...this.domains].map(([domain, e]) => ({
        domain,
        suffix: e.suffix,
        blocks: e.blocks.map((b) => ({ tld: b.tld, domain: b.domain, space: b.space.snapshot() })),
        hosts: [...e.hosts].map(([h, p]) => [h, p.map(([b, s]) => [b, s] as [number, number])] as [string, Array<[number, number]>]),
      })),
      urls: [...this.urls].map(([u, k]) => [u, k.toString(16)]),
    };
  }

  /**
   * Rebuilds a registry from `snapshot()` output (possibly after a JSON round trip).
   * @throws Domain64Error CCP_ERR_DOMAIN64_INPUT for an unknown snapshot version or layout.
   */
  static fromSnapshot(s: Domain64Snapshot): Domain64Registry {
    if (s.version !== 1) throw new Domain64Error('CCP_ERR_DOMAIN64_INPUT', 'unknown domain64 snapshot version', { version: s.version });
    const reg = new Domain64Registry({ layout: s.layout, tldReserve: s.reserve.tld, subReserve: s.reserve.sub });
    reg.tlds = SlotSpace.fromSnapshot(s.tlds);
    for (const d of s.domains) {
      const blocks = d.blocks.map((b) => ({ tld: b.tld, domain: b.domain, space: SlotSpace.fromSnapshot(b.space) }));
      reg.domains.set(d.domain, { suffix: d.suffix, blocks, hosts: new Map(d.hosts.map(([h, p]) => [h, p.map(([b, x]) => [b, x] as [number, number])])) });
      for (const b of blocks) reg.blockOwner.set(b.tld * 2 ** reg.layout.domain + b.domain, d.domain);
    }
    for (const [u, k] of s.urls) reg.urls.set(u, BigInt(`0x${k}`));
    return reg;
  }

  private newBlock(entry: DomainEntry, domain: string): Block {
    const r = this.tlds.alloc(entry.suffix);
    if (r === null) throw new Domain64Error('CCP_ERR_DOMAIN64_FULL', 'domain64 tld/domain level is full', { suffix: entry.suffix });
    const block: Block = { tld: r.slot, domain: r.id, space: new SlotSpace(2 ** this.layout.sub, 2 ** this.layout.path, this.subReserve) };
    entry.blocks.push(block);
    this.blockOwner.set(r.slot * 2 ** this.layout.domain + r.id, domain);
    return block;
  }
}
