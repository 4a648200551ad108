/**
 * Sorts a batch's rows in place into the order its part is written in: by (domain, url, timestamp), rows without a
 * domain first under the empty string, so each domain's rows are one contiguous run (the merge and the lake rely on
 * a part's rows coming domain by domain). A row without a timestamp (an import that gave none) comes before the URL's
 * timed rows. Stable: rows alike keep their input order. Pure apart from the sort; O(n log n).
 */
export function sortPartRows<R extends { domain: string | null; url: string; timestamp: string | null }>(rows: R[]): void {
  rows.sort((a, b) => {
    const da = a.domain ?? '';
    const db = b.domain ?? '';
    if (da !== db) return da < db ? -1 : 1;
    if (a.url !== b.url) return a.url < b.url ? -1 : 1;
    const ta = a.timestamp ?? '';
    const tb = b.timestamp ?? '';
    return ta < tb ? -1 : ta > tb ? 1 : 0;
  });
}
