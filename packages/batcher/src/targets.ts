import { normalizeHost, registeredDomainOf, surtRangesForDomain, type SurtRange } from '@ccpipe/core';

/**
 * The SURT key ranges a domain-targeted run covers, merged and sorted so membership is a binary search
 * (a targets file may hold hundreds of thousands of domains).
 */
export class TargetSet {
  readonly ranges: readonly SurtRange[];

  private constructor(ranges: SurtRange[]) {
    this.ranges = ranges;
  }

  /**
   * From lines of registered domains or hosts (blank lines and `#` comments skipped). A registered domain covers
   * itself and every subdomain; a host below a registered domain covers that host and its subdomains.
   * Throws UrlError (CCP_ERR_URL_INVALID) naming the first invalid line.
   */
  static fromLines(lines: Iterable<string>): TargetSet {
    const ranges: SurtRange[] = [];
    for (const raw of lines) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      const host = normalizeHost(line);
      ranges.push(...surtRangesForDomain(host, true));
    }
    return new TargetSet(mergeRanges(ranges));
  }

  /** Number of merged ranges. */
  get size(): number {
    return this.ranges.length;
  }

  /** True when a SURT key lies in a target range. O(log n). */
  has(surt: string): boolean {
    let lo = 0;
    let hi = this.ranges.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ranges[mid]!.end <= surt) lo = mid + 1;
      else hi = mid;
    }
    const r = this.ranges[lo];
    return r !== undefined && r.start <= surt && surt < r.end;
  }

  /** The key prefixes whose blocks must be read: each range is exactly the keys starting with its start. */
  prefixes(): string[] {
    return this.ranges.map((r) => r.start);
  }
}

function mergeRanges(ranges: SurtRange[]): SurtRange[] {
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: SurtRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end) {
      if (r.end > last.end) out[out.length - 1] = { start: last.start, end: r.end };
    } else out.push({ ...r });
  }
  return out;
}

export { registeredDomainOf };
