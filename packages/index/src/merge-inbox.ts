import { errorCode, layout, runLanes, type ObjectStore } from '@ccpipe/core';
import type { BatchSet } from './batch-set';
import { parseJson, type VersionStatus } from './format';

/** What a merge reads of a batch's completion marker. */
export interface Marker {
  datasetId: number;
  /** The dataset's name and the data store's id the batch named (markers of older workers have neither). */
  dataset?: string;
  store?: string;
  part: string | null;
  rows?: number;
  failed?: number;
  /** When the batch was completed (ISO time). */
  finishedAt?: string;
  /** Failed records (an import's rejected rows) by reason. */
  failures?: Record<string, number>;
  /** Documents a quality filter dropped, by filter. */
  dropped?: Record<string, number>;
}

/**
 * Where a merge looks for completed batches: the inbox only, or a listing of every batch marker besides. Workers
 * write an inbox entry per batch after its marker; a worker of a ccpipe older than the inbox writes none. So a lake
 * goes on listing every marker until a full listing has found no marker without an entry for {@link INBOX_SETTLE_MS}
 * (status.json `markerInboxSince` to `fullScanAt`), and a rescan lists every marker again.
 */
export type MarkerScan = 'inbox' | 'full';

/**
 * How long full listings must go on finding no marker without an inbox entry before merges read the inbox alone:
 * time for the old workers of a rolling upgrade to drain (compose stops a worker within 45 s).
 */
export const INBOX_SETTLE_MS = 3_600_000;

/** The inbox bookkeeping a version's status.json carries. */
export type InboxState = Pick<VersionStatus, 'markerInboxSince' | 'fullScanAt'>;

/** The scan a merge over a version with `status` makes ({@link MarkerScan}). Pure. */
export function markerScanOf(status: InboxState | null | undefined, rescan = false): MarkerScan {
  const since = Date.parse(status?.markerInboxSince ?? '');
  const scanned = Date.parse(status?.fullScanAt ?? '');
  return !rescan && scanned - since >= INBOX_SETTLE_MS ? 'inbox' : 'full';
}

/**
 * The inbox bookkeeping of the version a merge publishes, from the previous version's (`prev`), the scan it made
 * (started at `at`) and how many new markers that scan found without an inbox entry: the clock starts with the first
 * merge that reads the inbox, and starts again at any full listing that finds such a marker (an old worker is still
 * at work). A `markerInboxSince` ahead of `at` (a clock that went back) is taken as `at`. Pure.
 */
export function nextInboxState(prev: InboxState | null | undefined, scan: MarkerScan, withoutEntry: number, at: Date): Required<InboxState> {
  const now = at.toISOString();
  const since = prev?.markerInboxSince !== undefined && Date.parse(prev.markerInboxSince) <= at.getTime() ? prev.markerInboxSince : now;
  if (scan === 'inbox') return { markerInboxSince: since, fullScanAt: prev?.fullScanAt ?? now };
  return { markerInboxSince: withoutEntry > 0 ? now : since, fullScanAt: now };
}

/** Completed batches a merge has not folded in, as a listing found them ({@link listNewBatches}). */
export interface NewBatches {
  /** Their marker keys, sorted. */
  pending: string[];
  /** Those found by the full listing alone: no inbox entry. */
  withoutEntry: Set<string>;
  /**
   * Every inbox entry listed → the marker it names. Each names a batch `merged` holds, or one in `pending`: a merge
   * that publishes (or finds nothing to publish) folds in every pending marker it can read, and the others are gone,
   * so all of them can be deleted after it.
   */
  entries: Map<string, string>;
}

/** Lists the inbox (and with 'full', every marker) for the completed batches `merged` does not hold. */
export async function listNewBatches(store: ObjectStore, merged: Pick<BatchSet, 'has'>, scan: MarkerScan): Promise<NewBatches> {
  const entries = new Map<string, string>();
  const pending = new Set<string>();
  for await (const o of store.list(layout.inboxPrefix())) {
    const marker = layout.markerOfInboxEntry(o.key);
    if (marker === null) continue; // not an entry (a temp file, or something put there by hand): left alone
    entries.set(o.key, marker);
    if (!merged.has(marker)) pending.add(marker);
  }
  const withoutEntry = new Set<string>();
  if (scan === 'full') {
    for await (const o of store.list(layout.batchesPrefix())) {
      if (!layout.isBatchMarker(o.key) || merged.has(o.key) || pending.has(o.key)) continue;
      pending.add(o.key);
      withoutEntry.add(o.key);
    }
  }
  return { pending: [...pending].sort(), withoutEntry, entries };
}

/** Store requests (marker reads, entry deletes) at once. */
const STORE_LANES = 16;

/**
 * Reads the markers `keys`, {@link STORE_LANES} at a time: the marker itself, not its inbox copy, so what a merge
 * folds in is what the batch's folder holds now. A marker that is gone maps to null (its batch folder was removed:
 * its inbox entry is stale). @throws IndexFormatError on a marker that is not JSON; store errors as they come.
 */
export async function readMarkers(store: ObjectStore, keys: readonly string[]): Promise<Map<string, Marker | null>> {
  const got = new Array<Marker | null>(keys.length);
  await runLanes(keys.length, STORE_LANES, async (i) => {
    const b = await store.get(keys[i]!);
    got[i] = b === null ? null : parseJson<Marker>(b, 'batch marker');
  });
  return new Map(keys.map((k, i) => [k, got[i]!]));
}

/**
 * Deletes inbox entries, {@link STORE_LANES} at a time. Never throws (also not for a store that refuses
 * synchronously, as the merge lease's fence does): an entry left behind is deleted by a later merge. Returns the
 * error code of the first failure.
 */
export async function clearInbox(store: ObjectStore, keys: readonly string[]): Promise<string | undefined> {
  let failed: string | undefined;
  await runLanes(keys.length, STORE_LANES, async (i) => {
    try {
      await store.delete(keys[i]!);
    } catch (err) {
      failed ??= errorCode(err);
    }
  });
  return failed;
}
