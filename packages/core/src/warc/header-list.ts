/**
 * An ordered list of header fields as they appeared, names in their original case, duplicates kept.
 * Look-ups are case-insensitive. Immutable once built.
 */
export class HeaderList {
  /** `[name, value]` pairs in their original order and case; values trimmed of surrounding whitespace. */
  readonly entries: ReadonlyArray<readonly [string, string]>;

  constructor(entries: ReadonlyArray<readonly [string, string]>) {
    this.entries = entries;
  }

  /** The first value of `name` (case-insensitive), or undefined. */
  get(name: string): string | undefined {
    const want = name.toLowerCase();
    for (const [k, v] of this.entries) if (k.toLowerCase() === want) return v;
    return undefined;
  }

  /** Every value of `name` (case-insensitive), in order. */
  getAll(name: string): string[] {
    const want = name.toLowerCase();
    const out: string[] = [];
    for (const [k, v] of this.entries) if (k.toLowerCase() === want) out.push(v);
    return out;
  }

  /** True when `name` occurs at least once (case-insensitive). */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  get size(): number {
    return this.entries.length;
  }
}
