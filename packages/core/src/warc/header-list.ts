/**
 * An ordered list of header fields as they appeared, names in their original case, duplicates kept.
 * Look-ups are case-insensitive. Immutable once built.
 */
export class HeaderList {
  /** `[name, value]` pairs in their original order and case; values trimmed of surrounding whitespace. */
  readonly entries: ReadonlyArray<readonly [string, string]>;
  // Lower-cased names, computed once: records are looked up many times per parse.
  readonly #lower: string[];

  constructor(entries: ReadonlyArray<readonly [string, string]>) {
    this.entries = entries;
    this.#lower = entries.map(([k]) => k.toLowerCase());
  }

  #find(name: string, from: number): number {
    return this.#lower.indexOf(name.toLowerCase(), from);
  }

  /** The first value of `name` (case-insensitive), or undefined. */
  get(name: string): string | undefined {
    const i = this.#find(name, 0);
    return i < 0 ? undefined : this.entries[i]![1];
  }

  /** Every value of `name` (case-insensitive), in order. */
  getAll(name: string): string[] {
    const out: string[] = [];
    for (let i = this.#find(name, 0); i >= 0; i = this.#find(name, i + 1)) out.push(this.entries[i]![1]);
    return out;
  }

  /** True when `name` occurs at least once (case-insensitive). */
  has(name: string): boolean {
    return this.#find(name, 0) >= 0;
  }

  get size(): number {
    return this.entries.length;
  }
}
