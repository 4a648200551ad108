import { TOP_DOMAINS_KEPT, type ObjectStore } from '@ccpipe/core';
import { IndexFormatError, crcOf, indexLayout, parseJson, type VersionToc } from './format';

/** The name of a version's largest-domains list, a file of `index/<v>/`. */
export const TOP_DOMAINS_FILE = 'top-domains.json';

/** `top-domains.json`: per dataset, its largest registered domains by URL count, most first (ties by name). */
export interface TopDomainsFile {
  v: 1;
  datasets: { datasetId: number; domains: [string, number][] }[];
}

/**
 * Keeps, per dataset, the `k` registered domains with the most URLs while the index build walks every domain once
 * (a bounded min-heap each: O(domains · log k), k entries of memory per dataset).
 */
export class TopDomains {
  private readonly heaps = new Map<number, [string, number][]>();

  constructor(private readonly k = TOP_DOMAINS_KEPT) {}

  /**
   * A domain's URL count in one dataset. `domain` may be a function: called only when the count could enter the list
   * (an index build walks every domain, and most never come near a list of the largest).
   */
  add(datasetId: number, domain: string | (() => string), urls: number): void {
    let h = this.heaps.get(datasetId);
    if (h === undefined) this.heaps.set(datasetId, (h = []));
    if (h.length >= this.k && urls < h[0]![1]) return;
    const e: [string, number] = [typeof domain === 'string' ? domain : domain(), urls];
    if (h.length < this.k) {
      h.push(e);
      this.up(h, h.length - 1);
    } else if (before(e, h[0]!)) {
      h[0] = e;
      this.down(h, 0);
    }
  }

  /** The lists, most URLs first (ties by domain name), by dataset id. */
  toFile(): TopDomainsFile {
    const datasets = [...this.heaps].sort((a, b) => a[0] - b[0]).map(([datasetId, h]) => ({ datasetId, domains: [...h].sort((a, b) => (before(a, b) ? -1 : 1)) }));
    return { v: 1, datasets };
  }

  // a min-heap by "comes later in the list": the root is the entry the next better one replaces
  private up(h: [string, number][], i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[p]!, h[i]!)) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  private down(h: [string, number][], i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && before(h[m]!, h[l]!)) m = l;
      if (r < h.length && before(h[m]!, h[r]!)) m = r;
      if (m === i) return;
      [h[m], h[i]] = [h[i]!, h[m]!];
      i = m;
    }
  }
}

/** Whether `a` comes before `b` in a largest-domains list: more URLs, then the smaller name. */
function before(a: [string, number], b: [string, number]): boolean {
  return a[1] !== b[1] ? a[1] > b[1] : a[0] < b[0];
}

/**
 * A version's largest-domains lists, checked against version.json's CRC32; null for a version written before them.
 * @throws IndexFormatError on a mismatch
 */
export async function readTopDomains(store: ObjectStore, version: string, toc: VersionToc): Promise<TopDomainsFile | null> {
  const e = toc.files[TOP_DOMAINS_FILE];
  if (e === undefined) return null;
  const b = await store.get(indexLayout.versionFile(version, TOP_DOMAINS_FILE));
  if (b === null || b.length !== e.size || crcOf(b) !== e.crc32) throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'top-domains.json does not match its checksum', { version });
  return parseJson<TopDomainsFile>(b, TOP_DOMAINS_FILE);
}
