/**
 * One level of domain64 allocation: `slotCount` slots of `idsPerSlot` ids each (tld slots of domain
 * ids, or sub slots of path ids). An owner (a public suffix, or a host) first gets slots of its own
 * ("dedicated", opened in order, a full one continued by the next free slot) while more than
 * `reserve` slots are free; after that its new items go to "shared" slots that hold items of many
 * owners. Ids are handed out sequentially and never reused, so an (owner, item) pair once placed
 * keeps its (slot, id) forever. Pure, deterministic: the same call sequence gives the same answers.
 */
export interface SlotSpaceSnapshot {
  slotCount: number;
  idsPerSlot: number;
  reserve: number;
  /** Per opened slot, in opening order (slot number = index): owner, or null for a shared slot. */
  owners: Array<string | null>;
  /** Per opened slot: the next free id. */
  next: number[];
}

export class SlotSpace {
  private readonly owners: Array<string | null> = [];
  private readonly next: number[] = [];
  private readonly ownerSlots = new Map<string, number[]>();
  private readonly shared: number[] = [];

  constructor(
    readonly slotCount: number,
    readonly idsPerSlot: number,
    readonly reserve: number,
  ) {}

  /** The next (slot, id) for one more item of `owner`; null when every slot is full. */
  alloc(owner: string): { slot: number; id: number } | null {
    const own = this.ownerSlots.get(owner);
    if (own !== undefined) {
      const s = own[own.length - 1] as number;
      if ((this.next[s] as number) < this.idsPerSlot) return this.take(s);
    }
    const free = this.slotCount - this.next.length;
    if (free > this.reserve) return this.take(this.open(owner));
    const sh = this.shared[this.shared.length - 1];
    if (sh !== undefined && (this.next[sh] as number) < this.idsPerSlot) return this.take(sh);
    if (free > 0) return this.take(this.open(null));
    return null;
  }

  /** Owner of an opened slot (null = shared); undefined when the slot was never opened. */
  ownerOf(slot: number): string | null | undefined {
    return this.owners[slot];
  }

  /** Slots dedicated to `owner`, in opening order. */
  slotsOf(owner: string): readonly number[] {
    return this.ownerSlots.get(owner) ?? [];
  }

  /** Counts for monitoring: dedicated slots, shared slots, owners with more than one dedicated slot. */
  stats(): { dedicated: number; shared: number; continued: number; free: number } {
    let continued = 0;
    for (const s of this.ownerSlots.values()) if (s.length > 1) continued++;
    return { dedicated: this.next.length - this.shared.length, shared: this.shared.length, continued, free: this.slotCount - this.next.length };
  }

  snapshot(): SlotSpaceSnapshot {
    return { slotCount: this.slotCount, idsPerSlot: this.idsPerSlot, reserve: this.reserve, owners: [...this.owners], next: [...this.next] };
  }

  static fromSnapshot(s: SlotSpaceSnapshot): SlotSpace {
    const sp = new SlotSpace(s.slotCount, s.idsPerSlot, s.reserve);
    s.owners.forEach((o, i) => {
      sp.register(o);
      sp.next[i] = s.next[i] as number;
    });
    return sp;
  }

  private open(owner: string | null): number {
    const slot = this.register(owner);
    this.next[slot] = 0;
    return slot;
  }

  private register(owner: string | null): number {
    const slot = this.owners.length;
    this.owners.push(owner);
    if (owner === null) this.shared.push(slot);
    else {
      const list = this.ownerSlots.get(owner);
      if (list === undefined) this.ownerSlots.set(owner, [slot]);
      else list.push(slot);
    }
    return slot;
  }

  private take(slot: number): { slot: number; id: number } {
    const id = this.next[slot] as number;
    this.next[slot] = id + 1;
    return { slot, id };
  }
}
