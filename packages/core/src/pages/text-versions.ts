/**
 * The content-versions policy (`--text-versions N`, docs/webtable.md): of a URL's captures across datasets, only
 * the newest N keep their extracted text; older ones keep their metadata. "Newest" is by capture time, then by the
 * higher dataset id (two crawls capturing a URL in the same second). The merge applies it to the lake
 * (packages/index/src/text-versions.ts, the same order in SQL); this is the reference the tests and the API use.
 */

/** One capture of a URL as the policy weighs it. */
export interface VersionedCapture {
  datasetId: number;
  /** Capture time, epoch ms (or any number that orders like it). */
  ts: number;
}

/** Orders captures newest first: later time, then higher dataset id. */
export function compareNewestFirst(a: VersionedCapture, b: VersionedCapture): number {
  return b.ts - a.ts || b.datasetId - a.datasetId;
}

/**
 * Whether each capture of `captures` (one URL, any order) keeps its text under a policy of `versions` (null: all
 * keep it). Returns flags in the input's order. @throws RangeError when versions is not a whole number ≥ 1.
 */
export function textKept(captures: readonly VersionedCapture[], versions: number | null): boolean[] {
  if (versions === null) return captures.map(() => true);
  if (!Number.isInteger(versions) || versions < 1) throw new RangeError(`text versions must be a whole number ≥ 1, not ${versions}`);
  const order = captures.map((_, i) => i).sort((i, j) => compareNewestFirst(captures[i]!, captures[j]!));
  const kept = captures.map(() => false);
  for (let k = 0; k < Math.min(versions, order.length); k++) kept[order[k]!] = true;
  return kept;
}
