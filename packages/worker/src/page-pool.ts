import { join } from 'node:path';
import type { Extracted } from '@ccpipe/core';
import type { ExtractionPool, WireError } from '@ccpipe/adapters';
import type { PageFacts, PageRecord } from './read-page';
import type { Extractor } from './process-record';

/**
 * The worker's extraction-thread script (page-thread.ts) for `ExtractionPool`'s `workerPath`: the compiled file beside
 * this one, or in ../dist when this runs as TypeScript source (jest: build first, `npx tsc -b packages/worker`).
 */
export function pageThreadPath(): string {
  return __filename.endsWith('.ts') ? join(__dirname, '../dist/page-thread.js') : join(__dirname, 'page-thread.js');
}

/** One record sent to a page thread: its bytes as read, its CDX fields and its canonical URL (the page's base). */
export interface PageRequest {
  record: Uint8Array;
  rec: PageRecord;
  url: string;
}

/**
 * A page thread's answer: the record could not be read (`warc`: the error code; the record gets no row), or its facts
 * — the charset when the payload was decoded, the text of a page that is text but not HTML — and, for an HTML page,
 * what extraction made of it or why it failed.
 */
export type PageResult =
  | { warc: string }
  | {
    facts: Omit<PageFacts, 'decoded'> & { charset: string | null; text: string | null };
    extracted: Extracted | null;
    extractError: WireError | null;
  };

/**
 * Reads a record's page on an extraction thread. Rejects as `ExtractionPool.request` does (time limit, a dead thread,
 * abort, pool closed or unavailable); an unreadable record or a page extraction refused is an answer.
 */
export type PageReader = (bytes: Uint8Array, rec: PageRecord, url: string, signal?: AbortSignal) => Promise<PageResult>;

/**
 * The {@link PageReader} of a pool started with {@link pageThreadPath}. The bytes are copied to the thread (structured
 * clone, not transferred: a request retried after a timeout is posted again, and the caller keeps them to build the
 * row should the thread fail); a view into a larger buffer is cut to the record first, since a clone would copy all of it.
 */
export function pagesIn(pool: ExtractionPool): PageReader {
  return (bytes, rec, url, signal) => {
    const record = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
    const r: PageRecord = { url: rec.url, ...(rec.status !== undefined && { status: rec.status }), ...(rec.mime !== undefined && { mime: rec.mime }) };
    return pool.request<PageResult>({ record, rec: r, url } satisfies PageRequest, signal);
  };
}

/**
 * The extraction ports of a batch (`extract`, `readPage`) on a pool started with {@link pageThreadPath}, each call timed
 * by `startTimer` (the worker's extraction-seconds histogram): what `ccpipe worker` and `ccpipe run` hand processBatch.
 */
export function extractionPorts(pool: ExtractionPool, startTimer: () => () => unknown): { extract: Extractor; readPage: PageReader } {
  const pages = pagesIn(pool);
  const timed = async <R>(work: () => Promise<R>): Promise<R> => {
    const end = startTimer();
    try {
      return await work();
    } finally {
      end();
    }
  };
  return {
    extract: (html, url, signal) => timed(() => pool.extract(html, url, signal)),
    readPage: (bytes, rec, url, signal) => timed(() => pages(bytes, rec, url, signal)),
  };
}
