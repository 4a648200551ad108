import { gunzipSync } from 'node:zlib';
import {
  CcpError,
  cutRanges,
  decodeRecordList,
  layout,
  subBatchesOf,
  subBatchCount,
  warcJobBatchId,
  type Batch,
  type BatchRecord,
  type RangeReader,
  type WarcJob,
} from '@ccpipe/core';
import { processBatch, type BatchDeps, type BatchOptions, type BatchOutcome } from './process-batch';

/** What handling a WARC file job did: each sub-batch's outcome, in order, with the time it took. */
export interface WarcJobOutcome {
  batches: { id: string; outcome: BatchOutcome; ms: number }[];
}

/** A job's list is gone while some of its batches are not done: nothing can make them (the batcher publishes it again). */
export class BulkListMissingError extends CcpError {
  constructor(job: WarcJob, undone: number) {
    super('CCP_ERR_BULK_LIST_MISSING', 'the WARC file job\'s record list is missing from the data store while some of its batches are not done', {
      retryable: false, detail: { job: job.id, undone },
    });
  }
}

/**
 * Handles one bulk-mode job: reads the job's list of kept records, skips the sub-batches whose markers exist, streams
 * the WARC file once — from the first record of the first sub-batch not done to the end of the last record — cuts the
 * listed records out of the stream and hands each sub-batch to {@link processBatch} with a reader over the bytes in
 * hand, while the next sub-batch's bytes arrive. Parts, markers and inbox entries are a range batch's, so the rows
 * are the ones ranges mode writes for the same records. The list is deleted once every sub-batch is done.
 *
 * A stream that fails before its first byte for good (a missing file: 404, 416) fails every record of the undone
 * sub-batches with that code, as range reads would, and the job completes. One that fails for now (503 SlowDown after
 * the reader's retries, a connection cut mid-file) throws a retryable error: the sub-batches done stay done, and the
 * redelivery resumes at the first one that is not. Never holds more than two sub-batches' compressed bytes.
 */
export async function processWarcJob(job: WarcJob, deps: BatchDeps, opts: BatchOptions, signal?: AbortSignal): Promise<WarcJobOutcome> {
  const n = subBatchCount(job.records, job.batchSize);
  const listBytes = await deps.store.get(job.list);
  if (listBytes === null) {
    // a redelivery after the job finished (its list deleted): done when every sub-batch is
    const ids = Array.from({ length: n }, (_, seq) => warcJobBatchId(job, seq));
    const markers = await Promise.all(ids.map((id) => deps.store.head(layout.batchMarker(job.datasetId, id))));
    const undone = markers.filter((m) => m === null).length;
    if (undone > 0) throw new BulkListMissingError(job, undone);
    return { batches: [] };
  }
  let list: BatchRecord[];
  try {
    list = decodeRecordList(gunzipSync(listBytes));
  } catch (err) {
    if (err instanceof CcpError) throw err;
    throw new CcpError('CCP_ERR_BATCH_FORMAT', 'a WARC file job\'s record list does not inflate', { retryable: false, cause: err, detail: { job: job.id } });
  }
  const batches = subBatchesOf(job, list);
  const done = await Promise.all(batches.map(async (b) => (await deps.store.head(layout.batchMarker(b.datasetId, b.id))) !== null));
  const out: WarcJobOutcome = { batches: [] };
  const timed = async (batch: Batch, d: BatchDeps, o: BatchOptions): Promise<void> => {
    const t0 = Date.now();
    const outcome = await processBatch(batch, d, o, signal);
    out.batches.push({ id: batch.id, outcome, ms: Date.now() - t0 });
  };
  const todo: Batch[] = [];
  for (let i = 0; i < batches.length; i++) {
    // a done one still goes through processBatch: it writes its inbox entry again (a crash may have come between the two)
    if (done[i]) await timed(batches[i]!, deps, opts);
    else todo.push(batches[i]!);
  }
  if (todo.length > 0) {
    const first = todo[0]!.records[0]!.offset;
    const end = Math.max(...todo.map((b) => Math.max(...b.records.map((r) => r.offset + r.length))));
    deps.events?.onSourceRead?.({ mode: 'bulk', requests: 1, bytes: 0 });
    const chunks = countBytes(deps.reader.streamRange(job.filename, first, end - first, signal), (k) => deps.events?.onSourceRead?.({ mode: 'bulk', requests: 0, bytes: k }));
    const cut = cutSubBatches(chunks, todo, first)[Symbol.asyncIterator]();
    let next = cut.next();
    next.catch(() => undefined);
    try {
      for (;;) {
        const r = await next;
        if (r.done) break;
        next = cut.next(); // the next sub-batch's bytes arrive while this one is processed
        next.catch(() => undefined);
        const { batch, reader } = r.value;
        await timed(batch, { ...deps, reader }, { ...opts, source: 'bulk' });
      }
    } finally {
      await cut.return?.(undefined).catch(() => undefined);
    }
  }
  await deps.store.delete(job.list);
  return out;
}

async function* countBytes(chunks: AsyncIterable<Uint8Array>, on: (n: number) => void): AsyncGenerator<Uint8Array> {
  for await (const c of chunks) {
    on(c.length);
    yield c;
  }
}

/** A reader over the records of one sub-batch, cut from the stream; anything else is a programming error. */
class SliceReader implements RangeReader {
  constructor(private readonly filename: string, private readonly bytes: ReadonlyMap<string, Uint8Array>) {}
  async read(path: string, offset: number, length: number): Promise<Uint8Array> {
    const b = path === this.filename ? this.bytes.get(`${offset}:${length}`) : undefined;
    if (b === undefined) throw new CcpError('CCP_ERR_BULK_NOT_CUT', 'a record outside the sub-batch was asked of the bulk reader', { retryable: false, detail: { offset, length } });
    return b;
  }
  // eslint-disable-next-line require-yield
  async *stream(): AsyncIterable<Uint8Array> {
    throw new CcpError('CCP_ERR_BULK_NOT_CUT', 'the bulk reader streams nothing', { retryable: false });
  }
  // eslint-disable-next-line require-yield
  async *streamRange(): AsyncIterable<Uint8Array> {
    throw new CcpError('CCP_ERR_BULK_NOT_CUT', 'the bulk reader streams nothing', { retryable: false });
  }
  async close(): Promise<void> {}
}

/** Fails every read with `err`: the file cannot be had, so each record fails as its range read would. */
class FailingReader implements RangeReader {
  constructor(private readonly err: unknown) {}
  read(): Promise<Uint8Array> {
    return Promise.reject(this.err);
  }
  // eslint-disable-next-line require-yield
  async *stream(): AsyncIterable<Uint8Array> {
    throw this.err;
  }
  // eslint-disable-next-line require-yield
  async *streamRange(): AsyncIterable<Uint8Array> {
    throw this.err;
  }
  async close(): Promise<void> {}
}

/**
 * Walks the stream (which starts at file offset `start`) and yields each sub-batch with a reader over its records'
 * bytes, once they are all in (core `cutRanges`: bytes no later record needs are let go). A stream that fails before
 * its first record with a non-retryable error (the file is missing: 404, 416) yields every sub-batch with a reader
 * failing each record so, as range reads would; any other failure is thrown (retryable: the job is redelivered).
 */
export async function* cutSubBatches(
  chunks: AsyncIterable<Uint8Array>, batches: readonly Batch[], start: number,
): AsyncGenerator<{ batch: Batch; reader: RangeReader }> {
  const short = (at: number, upTo: number): Error =>
    new CcpError('CCP_ERR_FETCH_SHORT_BODY', 'the WARC file stream ended before the records it should hold', { retryable: true, detail: { at, upTo } });
  const cut = cutRanges(chunks, batches.flatMap((b) => b.records), start, short)[Symbol.asyncIterator]();
  let any = false;
  try {
    for (const batch of batches) {
      const bytes = new Map<string, Uint8Array>();
      for (const r of batch.records) {
        let c: IteratorResult<Uint8Array>;
        try {
          c = await cut.next();
        } catch (err) {
          if (any || !(err instanceof CcpError) || err.retryable) throw err;
          for (const b of batches) yield { batch: b, reader: new FailingReader(err) };
          return;
        }
        if (c.done) throw short(r.offset, r.offset + r.length);
        any = true;
        bytes.set(`${r.offset}:${r.length}`, c.value);
      }
      yield { batch, reader: new SliceReader(batch.records[0]!.filename, bytes) };
    }
  } finally {
    await cut.return?.(undefined);
  }
}
