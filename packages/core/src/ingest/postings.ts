/** Where one registered domain's rows sit in one batch part: rows [first, first + rows) after sorting. */
export interface DomainPosting {
  domain: string;
  first: number;
  rows: number;
}

/** The per-batch postings delta the merger folds into the next index version. */
export interface PostingsDelta {
  v: 1;
  batchId: string;
  datasetId: number;
  /** Object key of the part the rows are in. */
  part: string;
  rows: number;
  domains: DomainPosting[];
}

/**
 * Sorts rows in place by (domain, url, timestamp) — the order a part is written in, so each domain is one contiguous run —
 * and returns the runs. Rows without a domain sort last under the empty string. Pure; O(n log n).
 */
export function sortAndPost<R extends { domain: string | null; url: string; timestamp: string }>(rows: R[]): DomainPosting[] {
  rows.sort((a, b) => {
    const da = a.domain ?? '';
    const db = b.domain ?? '';
    if (da !== db) return da < db ? -1 : 1;
    if (a.url !== b.url) return a.url < b.url ? -1 : 1;
    return a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0;
  });
  const out: DomainPosting[] = [];
  for (let i = 0; i < rows.length; ) {
    const d = rows[i]!.domain ?? '';
    let j = i + 1;
    while (j < rows.length && (rows[j]!.domain ?? '') === d) j++;
    out.push({ domain: d, first: i, rows: j - i });
    i = j;
  }
  return out;
}
