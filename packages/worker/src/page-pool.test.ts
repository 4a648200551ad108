import { extractDocument, layout, type Batch, type RangeReader } from '@ccpipe/core';
import { ExtractionPool, FsRangeReader, MemoryObjectStore, closeDuckDbParquetEngine, writeParquetPart } from '@ccpipe/adapters';
import { CC_MIRROR_DEV, DEV_CRAWLS } from '../../../tests/support/corpus';
import { readParquetRows } from '../../../tests/support/parquet';
import { devBatches } from '../../../tests/support/dev-batches';
import { processBatch, type BatchDeps } from './process-batch';
import { pageThreadPath, pagesIn } from './page-pool';

// The page thread (page-thread.ts, run from dist: build first) does gzip, WARC/HTTP, charset and extraction off the
// main thread. What a batch yields must not depend on where that happens.

const crawl = DEV_CRAWLS[0];

/** Every read handed back as a view into a larger buffer, as bulk mode's cut records are (the copy must cut it). */
class ViewReader implements RangeReader {
  constructor(private readonly inner: RangeReader) {}
  async read(path: string, offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    const b = await this.inner.read(path, offset, length, signal);
    const big = new Uint8Array(b.length + 64);
    big.set(b, 32);
    return big.subarray(32, 32 + b.length);
  }
  stream(path: string, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    return this.inner.stream(path, signal);
  }
  streamRange(path: string, offset: number, length: number, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    return this.inner.streamRange(path, offset, length, signal);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const pools: ExtractionPool[] = [];
function pagePool(opts: ConstructorParameters<typeof ExtractionPool>[0] = {}): ExtractionPool {
  const p = new ExtractionPool({ size: 2, workerPath: pageThreadPath(), ...opts });
  pools.push(p);
  return p;
}

afterAll(async () => {
  for (const p of pools) await p.close();
  await closeDuckDbParquetEngine();
});

function deps(store: MemoryObjectStore, reader: RangeReader = new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true })): BatchDeps {
  return { reader, store, extract: async (html, url) => extractDocument(html, { url }), writePart: (rows) => writeParquetPart(rows, { engine: 'duckdb' }) };
}

/** A batch's part rows and failures file as written. */
async function written(store: MemoryObjectStore, b: Batch): Promise<{ rows: Record<string, unknown>[]; failures: unknown[] }> {
  const part = await store.get(layout.batchPart(b.datasetId, b.id));
  const f = await store.get(layout.batchFailures(b.datasetId, b.id));
  return {
    rows: part === null ? [] : await readParquetRows(part),
    failures: f === null ? [] : Buffer.from(f).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown),
  };
}

describe('records read on the page thread', () => {
  it('give the same rows, failures and marker as parsing, decoding and extracting on the main thread', async () => {
    // --status any: error pages too (not decoded, not extracted); and records no row can come from
    const batches = await devBatches(crawl, { datasetId: 7, maxBlocks: 3, filter: { status: null, languages: null } });
    expect(batches.some((b) => b.records.some((r) => Number(r.status) >= 400))).toBe(true);
    const first = batches[0]!.records[0]!;
    batches[0] = {
      ...batches[0]!,
      records: [
        ...batches[0]!.records,
        { ...first, length: first.length - 200 }, // a gzip member cut short: the WARC stage fails
        { ...first, url: `${first.url}?other` }, // WARC-Target-URI differs from the CDX url
      ],
    };
    const pool = pagePool();
    const here = new MemoryObjectStore();
    const there = new MemoryObjectStore();
    for (const b of batches) {
      const a = await processBatch(b, deps(here), { concurrency: 4, includeText: true });
      const t = await processBatch(b, { ...deps(there, new ViewReader(new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true }))), readPage: pagesIn(pool) }, { concurrency: 4, includeText: true });
      expect({ ...t.marker, finishedAt: '' }).toEqual({ ...a.marker, finishedAt: '' });
      expect(await written(there, b)).toEqual(await written(here, b));
    }
    const w = await written(there, batches[0]!);
    expect(w.failures).toEqual([
      expect.objectContaining({ stage: 'warc', indexed: false, reason: expect.stringMatching(/^CCP_ERR_WARC_/) }),
      expect.objectContaining({ stage: 'warc', indexed: false, reason: 'CCP_ERR_WARC_URI_MISMATCH' }),
    ]);
    // pages were extracted there (text, language, links), error pages were not
    expect(w.rows.filter((r) => typeof r['text'] === 'string' && r['text_language'] !== null).length).toBeGreaterThan(w.rows.length / 2);
    expect(w.rows.filter((r) => Number(r['status']) >= 400).every((r) => r['text'] === null && r['title'] === null)).toBe(true);
  }, 300_000);

  it('a page past the time limit keeps its row without text, its facts read on the main thread; nothing else differs', async () => {
    const [b] = await devBatches(crawl, { datasetId: 7, maxBlocks: 1 });
    const pool = pagePool({ timeoutMs: 1, retryTimeoutMs: 0 });
    const here = new MemoryObjectStore();
    const there = new MemoryObjectStore();
    await processBatch(b!, deps(here), { concurrency: 4, includeText: true });
    const { marker } = await processBatch(b!, { ...deps(there), readPage: pagesIn(pool) }, { concurrency: 4, includeText: true });
    expect([marker.rows, marker.failed, marker.failures]).toEqual([b!.records.length, b!.records.length, { CCP_ERR_EXTRACT_TIMEOUT: b!.records.length }]);
    const slow = await written(there, b!);
    const fast = await written(here, b!);
    const facts = (r: Record<string, unknown>): unknown[] => [r['url'], r['status'], r['mime'], r['charset'], r['content_length'], r['warc_offset']];
    expect(slow.rows.map(facts)).toEqual(fast.rows.map(facts));
    expect(slow.rows.every((r) => r['text'] === null && r['title'] === null)).toBe(true);
    expect(slow.failures.every((f) => (f as { stage: string; indexed: boolean }).stage === 'extract' && (f as { indexed: boolean }).indexed)).toBe(true);
  }, 120_000);

  it('a closed pool fails the batch instead of completing it without text', async () => {
    const [b] = await devBatches(crawl, { datasetId: 7, maxBlocks: 1 });
    const pool = pagePool();
    await pool.close();
    const store = new MemoryObjectStore();
    const err = await processBatch(b!, { ...deps(store), readPage: pagesIn(pool) }, { concurrency: 4, includeText: true }).then(() => null, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'CCP_ERR_EXTRACT_CLOSED' });
    expect(await store.get(layout.batchMarker(b!.datasetId, b!.id))).toBeNull();
  });

  it('the page thread also extracts a decoded page as the pool\'s own script does', async () => {
    const pool = pagePool({ size: 1 });
    const html = '<html lang="en"><head><title>T</title></head><body><article><p>One paragraph of text that is long enough to be kept as the article body of this page.</p><a href="/next">next</a></article></body></html>';
    const got = await pool.extract(html, 'https://example.com/a');
    expect({ ...got, quality: undefined }).toEqual({ ...extractDocument(html, { url: 'https://example.com/a' }), quality: undefined });
    expect(got.quality?.signals.word_count).toBeGreaterThan(10);
  });
});
