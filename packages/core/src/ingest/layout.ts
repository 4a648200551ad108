import { batchKey } from './batch';

/**
 * Where everything lives in the data store (an ObjectStore: a directory or a bucket). Keys only; no I/O.
 *
 * ```
 * datasets.json                                     dataset registry: name → stable UInt32 id
 * batcher/<dataset>/checkpoint.json                 plan position before which every batch is confirmed
 * batches/dataset_id=<id>/<batch key>/part.parquet  the batch's rows (one per indexed capture)
 * batches/dataset_id=<id>/<batch key>/failures.jsonl one line per record that could not be indexed, with its reason
 * batches/dataset_id=<id>/<batch key>/import-rejects.jsonl an import batch's rejected input rows (file, line, reason, raw)
 * imports/<dataset>/<run>.json                      an import run: its inputs, options and start (ccpipe import)
 * batches/dataset_id=<id>/<batch key>/_SUCCESS.json completion marker, written last, with counts
 * inbox/dataset_id=<id>/<batch key>.json            a copy of the marker, written after it: the merger's to-do list
 * bulk/dataset_id=<id>/<crawl>/w<fileNo>.json.gz    bulk mode: a WARC file job's kept records (deleted once its batches are done)
 * index/manifest.json, index/<version>/…            the merger's immutable index versions
 * ```
 * Batch folders written by older workers also hold `postings.json` (a per-batch postings delta
 * nothing ever read: the merge takes each domain's rows from the lake files it writes); it is left where it is.
 * A batch's files are complete exactly when its marker exists; everything else in a batch folder without a marker
 * is a leftover of a crash and is overwritten by the redelivered batch. The inbox holds an entry per completed batch
 * the merger has not cleared yet, so a merge lists what is new instead of every batch of the lake (≈ 8M keys for
 * one crawl); the merger deletes an entry once a published version holds its batch.
 */
export const layout = {
  datasetRegistry: (): string => 'datasets.json',
  batcherCheckpoint: (dataset: string): string => `batcher/${dataset}/checkpoint.json`,
  batchesPrefix: (): string => 'batches/',
  batchDir: (datasetId: number, id: string): string => `batches/dataset_id=${datasetId}/${batchKey(id)}`,
  batchPart: (datasetId: number, id: string): string => `${layout.batchDir(datasetId, id)}/part.parquet`,
  batchFailures: (datasetId: number, id: string): string => `${layout.batchDir(datasetId, id)}/failures.jsonl`,
  batchMarker: (datasetId: number, id: string): string => `${layout.batchDir(datasetId, id)}/_SUCCESS.json`,
  batchRejects: (datasetId: number, id: string): string => `${layout.batchDir(datasetId, id)}/import-rejects.jsonl`,
  /** An import run's record (`ccpipe import`): `run` is its fingerprint, the same for a rerun with the same arguments. */
  importRun: (dataset: string, run: string): string => `imports/${dataset}/${run}.json`,
  /** Bulk mode: the kept records of WARC file `fileNo` of `crawl` (a WarcJob's `list`). */
  bulkList: (datasetId: number, crawl: string, fileNo: number): string => `bulk/dataset_id=${datasetId}/${crawl}/w${String(fileNo).padStart(7, '0')}.json.gz`,
  inboxPrefix: (): string => 'inbox/',
  /** The inbox entry of a batch: a copy of its marker (see {@link layout.markerOfInboxEntry} for the way back). */
  inboxEntry: (datasetId: number, id: string): string => `inbox/dataset_id=${datasetId}/${batchKey(id)}.json`,
  /** The marker key of an inbox entry, or null when `key` is no inbox entry. */
  markerOfInboxEntry: (key: string): string | null => {
    const m = /^inbox\/dataset_id=(\d+)\/([^/]+)\.json$/.exec(key);
    return m === null ? null : `batches/dataset_id=${m[1]}/${m[2]}/_SUCCESS.json`;
  },
  /** True when `key` is a batch completion marker. */
  isBatchMarker: (key: string): boolean => key.startsWith('batches/') && key.endsWith('/_SUCCESS.json'),
  /** The dataset id of a key under a batch folder (`batches/dataset_id=<id>/…`), or null for any other key. */
  batchDatasetOf: (key: string): number | null => {
    const m = /^batches\/dataset_id=(\d+)\//.exec(key);
    return m === null ? null : Number(m[1]);
  },
} as const;
