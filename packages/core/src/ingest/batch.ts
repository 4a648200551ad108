import { z } from 'zod';
import { CcpError } from '../errors';

/** One capture to fetch and index: the CDX fields a worker needs, nothing more. */
export const BatchRecordSchema = z.object({
  url: z.string().min(1),
  ts: z.string().regex(/^\d{14}$/),
  status: z.string().optional(),
  mime: z.string().optional(),
  mimeDetected: z.string().optional(),
  charset: z.string().optional(),
  languages: z.array(z.string()).default([]),
  digest: z.string().optional(),
  filename: z.string().min(1),
  offset: z.number().int().min(0),
  length: z.number().int().min(1),
});
export type BatchRecord = z.infer<typeof BatchRecordSchema>;

/** The message the batcher publishes and a worker consumes. `v` versions the wire format. */
export const BatchSchema = z.object({
  v: z.literal(1),
  id: z.string().regex(/^[A-Za-z0-9._-]+\/\d{8}\/\d{4}$/),
  crawl: z.string().min(1),
  dataset: z.string().min(1),
  /** Stable id of `dataset` from the dataset registry (assigned by the batcher, the registry's one writer). */
  datasetId: z.number().int().min(0).max(0xffffffff),
  /** The data store's id (its registry's `storeId`) the batch was published for; absent from older batchers. */
  store: z.string().min(1).max(64).optional(),
  blockNo: z.number().int().min(0),
  seq: z.number().int().min(0),
  records: z.array(BatchRecordSchema),
});
export type Batch = z.infer<typeof BatchSchema>;

/** A message that is not a batch: it can never succeed, so it goes straight to the DLQ. */
export class BatchFormatError extends CcpError {
  constructor(message: string, options: { cause?: unknown; detail?: Record<string, unknown> } = {}) {
    super('CCP_ERR_BATCH_FORMAT', message, { ...options, retryable: false });
  }
}

/**
 * The deterministic id of a batch: crawl, global ZipNum block number, sequence within the block.
 * The same block always yields the same ids, so a re-published batch writes the same files downstream.
 * Example: `CC-MAIN-2024-30/00012345/0002`. Throws RangeError on out-of-range numbers.
 */
export function batchId(crawl: string, blockNo: number, seq: number): string {
  if (!/^[A-Za-z0-9._-]+$/.test(crawl)) throw new RangeError('crawl name must match [A-Za-z0-9._-]+');
  if (!Number.isInteger(blockNo) || blockNo < 0 || blockNo > 99_999_999) throw new RangeError('blockNo out of range');
  if (!Number.isInteger(seq) || seq < 0 || seq > 9_999) throw new RangeError('seq out of range');
  return `${crawl}/${String(blockNo).padStart(8, '0')}/${String(seq).padStart(4, '0')}`;
}

/** A file-system and object-key safe form of a batch id (`/` → `__`). */
export function batchKey(id: string): string {
  return id.replaceAll('/', '__');
}

/** Serializes a queue message: a batch, a WARC file job (warc-job.ts) or a merge task — JSON with an id. */
export function encodeMessage(m: { readonly id: string }): Buffer {
  return Buffer.from(JSON.stringify(m), 'utf8');
}

/** Parses and validates a queue message. Throws {@link BatchFormatError} (never retryable) on anything else. */
export function decodeBatch(body: Uint8Array): Batch {
  return parseWith(BatchSchema, parseJson(body, 'batch message'), 'batch message');
}

/** The JSON of a message or file body. @throws BatchFormatError (`what` is not JSON) */
export function parseJson(body: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (cause) {
    throw new BatchFormatError(`${what} is not JSON`, { cause });
  }
}

/** `json` checked against `schema`. @throws BatchFormatError (`what` does not match the schema), naming the first issues */
export function parseWith<T>(schema: z.ZodType<T>, json: unknown, what: string): T {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new BatchFormatError(`${what} does not match the schema`, {
      detail: { issues: parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`) },
    });
  }
  return parsed.data;
}
