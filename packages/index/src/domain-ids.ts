import { DEFAULT_DOMAIN64_LAYOUT, SlotSpace, isIpHost, packDomain64, unpackDomain64, type Domain64Layout, type SlotSpaceSnapshot } from '@ccpipe/core';
import { IndexFormatError } from './format';

/**
 * domain-ids.json: the level-1 domain64 allocator (public suffix slots → next registered domain id). Version 2 keeps
 * only the allocator: which id each domain holds is in domains.bin (name → domain64) of the same version, so the
 * file stays a few KB whatever the number of domains. Version 1 (written before) also listed every domain — at
 * Common Crawl's ≈ 40M registered domains a JSON string past V8's limit — and is still read.
 */
export type DomainIdsSnapshot =
  | { v: 2; layout: Domain64Layout; tlds: SlotSpaceSnapshot }
  | { v: 1; layout: Domain64Layout; tlds: SlotSpaceSnapshot; domains: [string, number, number][] };

/** The domains and their keys of an index version (its domains.bin dictionary: entries in UTF-8 byte order). */
export interface AssignedDomains {
  readonly size: number;
  name(i: number): string;
  nameBytes(i: number): Uint8Array;
  d64(i: number): bigint;
  /** Entry index of a name, or -1. */
  indexOf(domain: string): number;
}

const NO_DOMAINS: AssignedDomains = { size: 0, name: () => '', nameBytes: () => new Uint8Array(0), d64: () => 0n, indexOf: () => -1 };

/**
 * The merger's domain registry: gives each registered domain one domain64 block `tld:domain:00:000000` (docs/keys.md
 * level 1, the same SlotSpace allocator as Domain64Registry) and never changes it. Only the domain level is kept —
 * O(domains) memory, not O(URLs) — because the lake sorts by (domain64, url) and needs no per-URL path id.
 * Its allocator is snapshotted into every index version and the domains' keys are that version's dictionary, so
 * ids are stable across versions. Pure, single writer.
 */
export class DomainIds {
  /** Domains assigned by {@link assign} (and those a version 1 snapshot listed); the rest are looked up in `known`. */
  private readonly byDomain = new Map<string, bigint>();
  private cursor = 0;
  private lastSorted: Buffer | null = null;
  private walked = false;

  private constructor(
    readonly layout: Domain64Layout,
    private readonly tlds: SlotSpace,
    private readonly known: AssignedDomains = NO_DOMAINS,
  ) {}

  static empty(layout: Domain64Layout = DEFAULT_DOMAIN64_LAYOUT): DomainIds {
    return new DomainIds({ ...layout }, new SlotSpace(2 ** layout.tld, 2 ** layout.domain, Math.floor(2 ** layout.tld / 8)));
  }

  /**
   * The registry of an index version: its allocator snapshot and, for a version 2 snapshot, the domains of its
   * dictionary `assigned` — looked up in place, not copied (O(1) memory for a dictionary of any size). @throws
   * IndexFormatError CCP_ERR_INDEX_FORMAT for an unknown snapshot version, or a dictionary key the allocator never
   * handed out (another layout, an unopened slot, an id not yet allocated); `keysChecked`: the caller has run
   * {@link keyCheck} over every entry already.
   */
  static fromSnapshot(s: DomainIdsSnapshot, assigned: AssignedDomains, keysChecked = false): DomainIds {
    if (s.v !== 1 && s.v !== 2) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'unknown domain-ids snapshot version', { v: (s as { v: unknown }).v });
    const tlds = SlotSpace.fromSnapshot(s.tlds);
    if (s.v === 1) {
      const r = new DomainIds({ ...s.layout }, tlds);
      for (const [d, tld, id] of s.domains) r.byDomain.set(d, packDomain64({ tld, domain: id, sub: 0, path: 0 }, r.layout));
      return r;
    }
    if (!keysChecked) {
      const check = DomainIds.keyCheck(s);
      for (let i = 0; i < assigned.size; i++) check(assigned, i);
    }
    return new DomainIds({ ...s.layout }, tlds, assigned);
  }

  /**
   * The check {@link fromSnapshot} makes of each dictionary entry of a version 2 snapshot — its key is one the
   * allocator handed out (this layout, an opened slot, an id already allocated) — for a caller that reads every entry
   * anyway and then passes `keysChecked` (no check for another snapshot version). The check throws IndexFormatError
   * CCP_ERR_INDEX_FORMAT.
   */
  static keyCheck(s: DomainIdsSnapshot): (assigned: AssignedDomains, i: number) => void {
    if (s.v !== 2) return () => undefined;
    const layout = { ...s.layout };
    const next = s.tlds.next;
    return (assigned, i) => {
      const f = unpackDomain64(assigned.d64(i), layout);
      if (f.sub !== 0 || f.path !== 0 || f.tld >= next.length || f.domain >= next[f.tld]!) {
        throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'domains.bin holds a key the domain allocator never assigned', { domain: assigned.name(i) });
      }
    };
  }

  /** Domains known: the dictionary's plus those assigned since (a domain walked by {@link assignSorted} not counted). */
  get size(): number {
    return this.known.size + this.byDomain.size;
  }

  get(domain: string): bigint | undefined {
    const own = this.byDomain.get(domain);
    if (own !== undefined) return own;
    const i = this.known.indexOf(domain);
    return i < 0 ? undefined : this.known.d64(i);
  }

  /**
   * The block key of a registered domain, assigning the next id of its public suffix's slot on first sight.
   * Idempotent per domain. @throws IndexFormatError when the tld level is full, or after {@link assignSorted}
   */
  assign(domain: string): bigint {
    if (this.walked) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'a registry walked by assignSorted cannot assign more');
    const known = this.get(domain);
    if (known !== undefined) return known;
    const key = this.allocate(domain);
    this.byDomain.set(domain, key);
    return key;
  }

  /**
   * {@link assign} for a merge's distinct domains in ascending UTF-8 byte order, in O(1) memory: known domains are
   * found by a cursor walking the dictionary alongside, new ones are allocated and not remembered — so each name
   * must come once, and the registry then only serves {@link snapshot} (a later {@link assign} could not know what
   * the walk handed out, and throws). @throws IndexFormatError on a name not after the previous one, or a full level
   */
  assignSorted(domain: string): bigint {
    const b = Buffer.from(domain, 'utf8');
    if (this.lastSorted !== null && Buffer.compare(this.lastSorted, b) >= 0) {
      throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'assignSorted needs distinct names in ascending byte order', { domain });
    }
    this.lastSorted = b;
    this.walked = true;
    const k = this.known;
    while (this.cursor < k.size && Buffer.compare(k.nameBytes(this.cursor), b) < 0) this.cursor++;
    if (this.cursor < k.size && Buffer.compare(k.nameBytes(this.cursor), b) === 0) return k.d64(this.cursor);
    return this.byDomain.get(domain) ?? this.allocate(domain);
  }

  private allocate(domain: string): bigint {
    const dot = domain.indexOf('.');
    const suffix = isIpHost(domain) || dot < 0 ? domain : domain.slice(dot + 1);
    const r = this.tlds.alloc(suffix);
    if (r === null) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'domain64 tld/domain level is full', { suffix });
    return packDomain64({ tld: r.slot, domain: r.id, sub: 0, path: 0 }, this.layout);
  }

  /** The allocator (version 2): write it with a dictionary that holds every domain this registry has assigned. */
  snapshot(): DomainIdsSnapshot {
    return { v: 2, layout: { ...this.layout }, tlds: this.tlds.snapshot() };
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

/**
 * {@link partitionOf} as a DuckDB expression over `col`, a domain64 stored as a signed BIGINT (domain64ToInt64): the
 * merge computes each row's partition in SQL instead of appending a string per domain from JS.
 */
export function partitionSql(col: string, layout: Domain64Layout = DEFAULT_DOMAIN64_LAYOUT, bits = 8): string {
  // the stored BIGINT is the key with its top bit flipped (domain64ToInt64): the partition bits must lie below it
  if (layout.sub + layout.path + bits > 63) throw new RangeError('partition bits reach the top bit of domain64');
  return `lpad(lower(to_hex((${col} >> ${layout.sub + layout.path}) & ${(1 << bits) - 1})), 2, '0')`;
}
