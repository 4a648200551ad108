import { z } from 'zod';
import { BatchFormatError, BatchRecordSchema, BatchSchema, batchId, parseJson, parseWith, type Batch, type BatchRecord } from './batch';

/** The largest file number (7 digits in a job id; BULK_BLOCK_BASE + it stays within a batch id's 8 block digits). */
export const MAX_FILE_NO = 9_999_999;

/**
 * Bulk mode's unit of work: one WARC file read in one GET, instead of one range request per record.
 *
 * The batcher still decides which records are kept, from the CDX (so both modes keep the same records and write the
 * same rows): it reads whole CDX files, groups the kept records by WARC file and stores each file's list (sorted by
 * offset) in the data store; the job names the file and the list. A worker streams the file once and cuts the listed
 * records out of the stream, in sub-batches of `batchSize` records. Sub-batch `seq` of file `fileNo` is an ordinary
 * batch with id `crawl/<BULK_BLOCK_BASE + fileNo>/<seq>`: its part, marker and inbox entry are a range batch's, so
 * merge and API need nothing new, and a redelivered job skips the sub-batches whose markers exist (it resumes at the
 * first record of the first one without).
 */
export const WarcJobSchema = z.object({
  v: z.literal(1),
  kind: z.literal('warc'),
  /** `crawl/w<fileNo, 7 digits>`: also the message id. */
  id: z.string().regex(/^[A-Za-z0-9._-]+\/w\d{7}$/),
  crawl: z.string().min(1),
  dataset: z.string().min(1),
  datasetId: z.number().int().min(0).max(0xffffffff),
  store: z.string().min(1).max(64).optional(),
  /** The file's index in the crawl's `warc.paths.gz` (0-based). */
  fileNo: z.number().int().min(0).max(MAX_FILE_NO),
  filename: z.string().min(1),
  /** Data-store key of the kept records' list (gzip JSON array of batch records, sorted by offset). */
  list: z.string().min(1),
  /** Records in the list. */
  records: z.number().int().min(1),
  /** Records per sub-batch. */
  batchSize: z.number().int().min(1).max(10_000),
});
export type WarcJob = z.infer<typeof WarcJobSchema>;

/**
 * Block numbers from here on name a WARC file of bulk mode (block = BULK_BLOCK_BASE + fileNo), so sub-batch ids keep a
 * range batch's shape. They never meet a ZipNum block number of the same dataset: a dataset keeps the read mode it was
 * begun in (batcher read-mode.ts), and a crawl's block numbers stay far below anyway (≈ 10⁶ blocks).
 */
export const BULK_BLOCK_BASE = 90_000_000;

/** The largest sub-batch count of one WARC file (batch ids hold 4 digits of seq). */
export const MAX_SUB_BATCHES = 10_000;

/** What goes on the batch queue: a batch of records (ranges mode) or a WARC file job (bulk mode). */
export type QueueMessage = Batch | WarcJob;

/** True for a bulk-mode job. */
export function isWarcJob(m: QueueMessage): m is WarcJob {
  return (m as { kind?: unknown }).kind === 'warc';
}

/** The id of the job of `fileNo` in `crawl`. Throws RangeError out of range. */
export function warcJobId(crawl: string, fileNo: number): string {
  if (!/^[A-Za-z0-9._-]+$/.test(crawl)) throw new RangeError('crawl name must match [A-Za-z0-9._-]+');
  if (!Number.isInteger(fileNo) || fileNo < 0 || fileNo > MAX_FILE_NO) throw new RangeError('fileNo out of range');
  return `${crawl}/w${String(fileNo).padStart(7, '0')}`;
}

/** How many sub-batches a job's `records` make. */
export function subBatchCount(records: number, batchSize: number): number {
  return Math.ceil(records / batchSize);
}

/** The id of sub-batch `seq` of a job: an ordinary batch id at block BULK_BLOCK_BASE + fileNo. */
export function warcJobBatchId(job: Pick<WarcJob, 'crawl' | 'fileNo'>, seq: number): string {
  return batchId(job.crawl, BULK_BLOCK_BASE + job.fileNo, seq);
}

/**
 * The sub-batches of a job, given its list (sorted by offset): ordinary batches, `batchSize` records each in list order.
 * Throws BatchFormatError when the list does not fit the job (count, file, order) or makes too many sub-batches.
 */
export function subBatchesOf(job: WarcJob, list: readonly BatchRecord[]): Batch[] {
  if (list.length !== job.records) throw new BatchFormatError('the job\'s record list does not hold the records the job names', { detail: { job: job.id, listed: list.length, records: job.records } });
  for (let i = 0; i < list.length; i++) {
    const r = list[i]!;
    if (r.filename !== job.filename) throw new BatchFormatError('a record of the job\'s list is in another WARC file', { detail: { job: job.id, i } });
    if (i > 0 && r.offset < list[i - 1]!.offset) throw new BatchFormatError('the job\'s record list is not sorted by offset', { detail: { job: job.id, i } });
  }
  const n = subBatchCount(list.length, job.batchSize);
  if (n > MAX_SUB_BATCHES) throw new BatchFormatError('a WARC file job makes more sub-batches than a batch id can number', { detail: { job: job.id, subBatches: n } });
  const blockNo = BULK_BLOCK_BASE + job.fileNo;
  return Array.from({ length: n }, (_, seq) => ({
    v: 1 as const,
    id: warcJobBatchId(job, seq),
    crawl: job.crawl,
    dataset: job.dataset,
    datasetId: job.datasetId,
    ...(job.store !== undefined && { store: job.store }),
    blockNo,
    seq,
    records: list.slice(seq * job.batchSize, (seq + 1) * job.batchSize),
  }));
}

/** Parses and validates a queue message of either kind. Throws {@link BatchFormatError} (never retryable) on anything else. */
export function decodeMessage(body: Uint8Array): QueueMessage {
  const json = parseJson(body, 'batch message');
  return (json as { kind?: unknown } | null)?.kind === 'warc' ? parseWith(WarcJobSchema, json, 'WARC file job') : parseWith(BatchSchema, json, 'batch message');
}

/** Encodes a job's record list (what the batcher stores under `list`). */
export function encodeRecordList(records: readonly BatchRecord[]): Buffer {
  return Buffer.from(JSON.stringify(records), 'utf8');
}

/** Decodes a job's record list. Throws BatchFormatError when it is not a list of batch records. */
export function decodeRecordList(bytes: Uint8Array): BatchRecord[] {
  const what = 'a WARC file job\'s record list';
  return parseWith(z.array(BatchRecordSchema), parseJson(bytes, what), what);
}
