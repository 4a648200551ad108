import { CcpError, layout, newLinkCache, sortPartRows, type Batch, type ObjectStore, type RangeReader } from '@ccpipe/core';
import type { PartRow } from '@ccpipe/adapters';
import { processRecord, type Extractor, type QualityOptions, type RecordFailure } from './process-record';
import type { PageReader } from './page-pool';

/** The ports one batch needs. */
export interface BatchDeps {
  reader: RangeReader;
  store: ObjectStore;
  extract: Extractor;
  /**
   * Reads a record's page on an extraction thread from its bytes (WARC/HTTP, charset, extraction: page-pool.ts), so
   * the main thread never decodes it; without it, records are parsed and decoded here and the page is handed to `extract`.
   */
  readPage?: PageReader;
  /** Encodes rows as one Parquet part. */
  writePart: (rows: readonly PartRow[]) => Promise<Uint8Array>;
  events?: BatchEvents;
}

/** Metric hooks (closed-set labels only). */
export interface BatchEvents {
  /** `ok`: no failure; `dropped`: the quality filter that dropped the document (it has a row only under --keep-dropped). */
  onRecord?(e: { ok: boolean; reason?: string; bytes: number; dropped?: string; row?: boolean; mode: 'ranges' | 'bulk' }): void;
  /** Bulk mode read WARC bytes (`requests` sent, `bytes` received) for its records; ranges mode reads per record (`onRecord`'s bytes). */
  onSourceRead?(e: { mode: 'bulk'; requests: number; bytes: number }): void;
  onPartWritten?(e: { rows: number; bytes: number }): void;
}

/** Options of one batch. */
export interface BatchOptions {
  /** Records fetched and processed at once. */
  concurrency: number;
  includeText: boolean;
  /** False: no page is decoded or extracted (rows without title, text, outlinks, language). Default true. */
  extract?: boolean;
  /** The quality filters (default: none; documents are measured only). */
  quality?: QualityOptions;
  /** How the records' bytes are had: a range request each (default), or cut from a whole-file stream (bulk mode). */
  source?: 'ranges' | 'bulk';
}

/** The completion marker: its presence means every other file of the batch is complete. */
export interface BatchMarker {
  v: 1;
  batchId: string;
  datasetId: number;
  /** The dataset's name and the data store's id as the batch named them (absent in markers of older workers). */
  dataset?: string;
  store?: string;
  crawl: string;
  records: number;
  rows: number;
  failed: number;
  failures: Record<string, number>;
  part: string | null;
  /**
   * Markers written by older workers name the batch's `postings.json` here (a postings delta nothing read; no longer
   * written: the merge takes each domain's rows from the lake files it writes). Absent in new markers.
   */
  postings?: string | null;
  failuresFile: string | null;
  partBytes: number;
  /** Documents a quality filter dropped, by filter (kept as rows with `dropped_by` under --keep-dropped); absent when none. */
  dropped?: Record<string, number>;
  finishedAt: string;
}

/**
 * Completes a batch: its marker (`bytes`), then the marker's copy in the merger's inbox, which is how a merge finds
 * the batch without listing every batch of the lake. Both puts are idempotent; a crash between them is mended by the
 * redelivery, which finds the marker and writes the entry again ({@link processBatch}).
 */
export async function writeBatchMarker(store: ObjectStore, datasetId: number, id: string, bytes: Uint8Array): Promise<void> {
  await store.put(layout.batchMarker(datasetId, id), bytes);
  await store.put(layout.inboxEntry(datasetId, id), bytes);
}

/** What handling a batch did. */
export type BatchOutcome = { skipped: true; marker: BatchMarker } | { skipped: false; marker: BatchMarker };

/**
 * Handles one batch: fetches and extracts every record (at most `concurrency` at once), writes the part (rows sorted
 * by domain, url, time) and its failures, each atomically under names derived from the batch id,
 * then the completion marker last and its inbox entry ({@link writeBatchMarker}). A batch whose marker exists is
 * skipped (its inbox entry written again: a crash may have come between the two), so a redelivery is harmless; a
 * crash before the marker leaves files the redelivery overwrites. A bad record is recorded in the failures file and never
 * fails the batch; the call throws when a record could not be fetched for now (retryable `CCP_ERR_BATCH_TRANSIENT`,
 * nothing written), when the store cannot be written, or when `signal` aborts.
 */
export async function processBatch(batch: Batch, deps: BatchDeps, opts: BatchOptions, signal?: AbortSignal): Promise<BatchOutcome> {
  const markerKey = layout.batchMarker(batch.datasetId, batch.id);
  /** The batch's marker when it is done already (by an earlier delivery, or another copy meanwhile). */
  const doneBefore = async (): Promise<BatchOutcome | null> => {
    const b = await deps.store.get(markerKey);
    if (b === null) return null;
    // the inbox entry may be missing (a crash after the marker): the merger would never see this batch without it
    await deps.store.put(layout.inboxEntry(batch.datasetId, batch.id), b);
    return { skipped: true, marker: JSON.parse(Buffer.from(b).toString('utf8')) as BatchMarker };
  };
  const existing = await doneBefore();
  if (existing) return existing;

  const rows: PartRow[] = [];
  const failures: RecordFailure[] = [];
  let next = 0;
  const dropped: Record<string, number> = {};
  const ctx = {
    datasetId: batch.datasetId, reader: deps.reader, extract: deps.extract, includeText: opts.includeText, extractPages: opts.extract !== false,
    // one per batch: its pages share their navigation (not kept across batches, which are other sites)
    links: newLinkCache(),
    ...(deps.readPage !== undefined && { readPage: deps.readPage }),
    ...(opts.quality !== undefined && { quality: opts.quality }), ...(signal ? { signal } : {}),
  };
  let transientSeen = false;
  const lane = async (): Promise<void> => {
    // after a record the server could not give now, no new record starts: the batch is redone whole anyway, and
    // fetching on would only add load to a server asking for less
    while (next < batch.records.length && !transientSeen) {
      signal?.throwIfAborted();
      const i = next++;
      const r = await processRecord(batch.records[i]!, i, ctx);
      if (r.failure?.transient === true) transientSeen = true;
      if (r.row) rows.push(r.row);
      if (r.failure) failures.push(r.failure);
      if (r.dropped !== undefined) dropped[r.dropped] = (dropped[r.dropped] ?? 0) + 1;
      deps.events?.onRecord?.({
        ok: r.failure === null, ...(r.failure ? { reason: r.failure.reason } : {}), bytes: r.bytes, row: r.row !== null, ...(r.dropped !== undefined && { dropped: r.dropped }), mode: opts.source ?? 'ranges',
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency, Math.max(1, batch.records.length)) }, lane));
  signal?.throwIfAborted();
  // A record the server could not give now (503 SlowDown or an outage outlasting the reader's retries) is not a bad
  // record: completing the batch without it would lose it for good (a marker is never redone). Nothing is written;
  // the batch goes back to the queue, whose delivery limit bounds the retries (then the DLQ, to replay later).
  const transient = failures.filter((f) => f.transient === true);
  if (transient.length > 0) {
    const reasons: Record<string, number> = {};
    for (const f of transient) reasons[f.reason] = (reasons[f.reason] ?? 0) + 1;
    throw new CcpError('CCP_ERR_BATCH_TRANSIENT', 'records could not be fetched for now; the batch is retried whole', {
      retryable: true, detail: { records: transient.length, reasons },
    });
  }

  // Another copy of this batch (a re-published message, or one a lost channel handed to another worker) may have
  // finished while this one ran: its files stand, these are not written over them.
  const meanwhile = await doneBefore();
  if (meanwhile) return meanwhile;

  sortPartRows(rows);
  const partKey = layout.batchPart(batch.datasetId, batch.id);
  const failuresKey = layout.batchFailures(batch.datasetId, batch.id);
  let partBytes = 0;
  if (rows.length > 0) {
    const part = await deps.writePart(rows);
    partBytes = part.length;
    await deps.store.put(partKey, part);
    deps.events?.onPartWritten?.({ rows: rows.length, bytes: part.length });
  }
  if (failures.length > 0) {
    failures.sort((a, b) => a.i - b.i);
    const lines = failures.map((f) => {
      const rec = batch.records[f.i]!;
      return JSON.stringify({ ...f, url: rec.url, filename: rec.filename, offset: rec.offset, length: rec.length });
    });
    await deps.store.put(failuresKey, Buffer.from(lines.join('\n') + '\n', 'utf8'));
  }
  const byReason: Record<string, number> = {};
  for (const f of failures) byReason[f.reason] = (byReason[f.reason] ?? 0) + 1;
  const marker: BatchMarker = {
    v: 1,
    batchId: batch.id,
    datasetId: batch.datasetId,
    dataset: batch.dataset,
    ...(batch.store !== undefined && { store: batch.store }),
    crawl: batch.crawl,
    records: batch.records.length,
    rows: rows.length,
    failed: failures.length,
    failures: byReason,
    part: rows.length > 0 ? partKey : null,
    failuresFile: failures.length > 0 ? failuresKey : null,
    partBytes,
    ...(Object.keys(dropped).length > 0 && { dropped: Object.fromEntries(Object.entries(dropped).sort()) }),
    finishedAt: new Date().toISOString(),
  };
  await writeBatchMarker(deps.store, batch.datasetId, batch.id, Buffer.from(JSON.stringify(marker) + '\n', 'utf8'));
  return { skipped: false, marker };
}
