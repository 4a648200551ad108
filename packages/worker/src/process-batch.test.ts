import { DEFAULT_RETRY_POLICY, ExtractError, extractDocument, layout, qualityConfigOf, queueActionFor, type Batch, type RangeReader } from '@ccpipe/core';
import { FsRangeReader, MemoryObjectStore, UndiciRangeReader, closeDuckDbParquetEngine, writeParquetPart } from '@ccpipe/adapters';
import { serveMirror } from '@ccpipe/mirror';
import { CC_MIRROR_DEV, DEV_CRAWLS, loadOracle, oracleUrlForm } from '../../../tests/support/corpus';
import { readParquetRows } from '../../../tests/support/parquet';
import { devBatches } from '../../../tests/support/dev-batches';
import { processBatch, type BatchDeps, type BatchMarker } from './process-batch';

const crawl = DEV_CRAWLS[0];
const oracle = loadOracle();

const batchesOf = (maxBlocks?: number): Promise<Batch[]> => devBatches(crawl, { datasetId: 7, ...(maxBlocks !== undefined ? { maxBlocks } : {}) });

function deps(store: MemoryObjectStore, reader: RangeReader = new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true })): BatchDeps {
  return {
    reader,
    store,
    extract: async (html, url) => extractDocument(html, { url }),
    writePart: (rows) => writeParquetPart(rows, { engine: 'duckdb' }),
  };
}

afterAll(async () => {
  await closeDuckDbParquetEngine();
});

describe('processBatch on cc-mirror-dev', () => {
  it('indexes every kept capture of the crawl exactly once, with text, read back by an independent reader', async () => {
    const batches = await batchesOf();
    const store = new MemoryObjectStore();
    const urls: string[] = [];
    let failed = 0;
    let withText = 0;
    const reasons: Record<string, number> = {};
    for (const b of batches) {
      const { marker } = await processBatch(b, deps(store), { concurrency: 8, includeText: true });
      failed += marker.failed;
      for (const [r, n] of Object.entries(marker.failures)) reasons[r] = (reasons[r] ?? 0) + n;
      const part = await store.get(layout.batchPart(b.datasetId, b.id));
      expect(part).not.toBeNull();
      const rows = await readParquetRows(part!);
      expect(rows).toHaveLength(marker.rows);
      // the part comes domain by domain, each sorted by url then time (the merge relies on it)
      const order = rows.map((r) => [String(r['domain'] ?? ''), String(r['url']), (r['ts'] as Date).toISOString()].join('\u0000'));
      expect(order).toEqual([...order].sort());
      for (const r of rows) {
        expect(r['dataset_id']).toBe(7);
        urls.push(oracleUrlForm(String(r['raw_url'])));
      }
      withText += rows.filter((r) => typeof r['text'] === 'string' && (r['text'] as string).length > 0).length;
    }
    // Nearly every page yields text (a few bulk pagination pages are empty shells).
    expect(withText).toBeGreaterThan(urls.length * 0.9);
    // Every record was read; only extraction may fail on a few pages (the row is still written, without text).
    expect(Object.keys(reasons).filter((r) => !r.startsWith('CCP_ERR_EXTRACT'))).toEqual([]);
    expect(failed).toBeLessThan(urls.length * 0.05);
    expect(urls).toHaveLength(oracle.crawls[crawl]!.kept_captures);
    const expected = new Set(Object.values(oracle.crawls[crawl]!.domains).flatMap((d) => d.urls));
    expect(new Set(urls)).toEqual(expected);
  }, 300_000);

  it('--extract false: no page is decoded or extracted; rows keep keys, status, size and WARC location', async () => {
    const [b] = await batchesOf(1);
    const store = new MemoryObjectStore();
    let extracted = 0;
    const d = { ...deps(store), extract: async () => { extracted++; throw new Error('must not run'); } };
    const { marker } = await processBatch(b!, d, { concurrency: 4, includeText: true, extract: false });
    expect([extracted, marker.failed, marker.rows]).toEqual([0, 0, b!.records.length]);
    const rows = await readParquetRows((await store.get(layout.batchPart(b!.datasetId, b!.id)))!);
    expect(rows.every((r) => r['title'] == null && r['text'] == null && r['text_language'] == null && (r['outlinks'] as unknown[]).length === 0)).toBe(true);
    expect(rows.every((r) => r['status'] === 200 && Number(r['content_length']) > 0 && typeof r['url_id'] === 'bigint' && Number(r['warc_length']) > 0)).toBe(true);
  });

  it('a redelivered batch sees its marker and is skipped; a crash before the marker is redone whole', async () => {
    const [b] = await batchesOf(1);
    const store = new MemoryObjectStore();
    const first = await processBatch(b!, deps(store), { concurrency: 4, includeText: false });
    expect(first.skipped).toBe(false);
    const again = await processBatch(b!, deps(store), { concurrency: 4, includeText: false });
    expect(again).toEqual({ skipped: true, marker: first.marker });

    // Simulate a crash after the part but before the marker: the redelivery rewrites the same files, then the marker.
    const crashed = new MemoryObjectStore();
    const partKey = layout.batchPart(b!.datasetId, b!.id);
    await crashed.put(partKey, Buffer.from('half-written garbage'));
    const redo = await processBatch(b!, deps(crashed), { concurrency: 4, includeText: false });
    expect(redo.skipped).toBe(false);
    expect((await readParquetRows((await crashed.get(partKey))!)).length).toBe(redo.marker.rows);
    const keys: string[] = [];
    for await (const o of crashed.list(layout.batchDir(b!.datasetId, b!.id))) keys.push(o.key);
    // part and marker only: no postings delta (nothing read it; the merge takes postings from the lake it writes)
    expect(keys.sort()).toEqual([layout.batchMarker(b!.datasetId, b!.id), partKey].sort());
    expect(redo.marker).not.toHaveProperty('postings');
  });

  it("writes the marker's copy to the merger's inbox after the marker; a redelivery after a crash between the two writes it again", async () => {
    const [b] = await batchesOf(1);
    const store = new MemoryObjectStore();
    const order: string[] = [];
    const watched = Object.assign(Object.create(store) as MemoryObjectStore, {
      put: async (key: string, data: Uint8Array) => {
        order.push(key);
        await store.put(key, data);
      },
    });
    const first = await processBatch(b!, deps(watched), { concurrency: 4, includeText: false });
    const entry = layout.inboxEntry(b!.datasetId, b!.id);
    expect(order.slice(-2)).toEqual([layout.batchMarker(b!.datasetId, b!.id), entry]);
    expect(JSON.parse(Buffer.from((await store.get(entry))!).toString())).toEqual(first.marker);
    expect(layout.markerOfInboxEntry(entry)).toBe(layout.batchMarker(b!.datasetId, b!.id));

    // the crash: the marker stands, its entry was never written; the redelivery skips the batch but writes the entry
    await store.delete(entry);
    order.length = 0;
    expect(await processBatch(b!, deps(watched), { concurrency: 4, includeText: false })).toEqual({ skipped: true, marker: first.marker });
    expect(order).toEqual([entry]);
    expect(JSON.parse(Buffer.from((await store.get(entry))!).toString())).toEqual(first.marker);
  });

  it('a copy of the batch that another worker finished meanwhile is not written over', async () => {
    const [b] = await batchesOf(1);
    const store = new MemoryObjectStore();
    const theirs = { batchId: b!.id, rows: 1, part: 'theirs' };
    const inner = new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true });
    let first = true;
    const reader: RangeReader = {
      read: async (path, offset, length, signal) => {
        if (first) {
          // the other copy completes while this one reads
          first = false;
          await store.put(layout.batchPart(b!.datasetId, b!.id), Buffer.from('their part'));
          await store.put(layout.batchMarker(b!.datasetId, b!.id), Buffer.from(JSON.stringify(theirs)));
        }
        return inner.read(path, offset, length, signal);
      },
      stream: (path, signal) => inner.stream(path, signal),
      streamRange: (path, offset, length, signal) => inner.streamRange(path, offset, length, signal),
      close: () => inner.close(),
    };
    const r = await processBatch(b!, deps(store, reader), { concurrency: 2, includeText: false });
    expect(r).toEqual({ skipped: true, marker: theirs });
    // their marker's inbox entry is written (again: the other copy may have stopped between the two)
    expect(JSON.parse(Buffer.from((await store.get(layout.inboxEntry(b!.datasetId, b!.id)))!).toString())).toEqual(theirs);
    expect(Buffer.from((await store.get(layout.batchPart(b!.datasetId, b!.id)))!).toString()).toBe('their part');
  });

  it('a bad record is written to failures with its reason and never fails the batch', async () => {
    const [b] = await batchesOf(1);
    const broken: Batch = {
      ...b!,
      records: [
        ...b!.records,
        { ...b!.records[0]!, offset: b!.records[0]!.offset + 1 }, // not a gzip member
        { ...b!.records[0]!, filename: 'crawl-data/../../etc/passwd' }, // SSRF attempt
        { ...b!.records[0]!, filename: 'crawl-data/CC-MAIN-2030-40/missing.warc.gz' }, // 404
      ],
    };
    const store = new MemoryObjectStore();
    const { marker } = await processBatch(broken, deps(store), { concurrency: 4, includeText: true });
    expect(marker.rows).toBe(b!.records.length);
    expect(marker.failed).toBe(3);
    expect(marker.failures).toEqual({ CCP_ERR_FETCH_NOT_GZIP: 1, CCP_ERR_SSRF: 1, CCP_ERR_FETCH_STATUS: 1 });
    const lines = Buffer.from((await store.get(layout.batchFailures(b!.datasetId, b!.id)))!).toString().trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { i: number }).i)).toEqual([b!.records.length, b!.records.length + 1, b!.records.length + 2]);
  });

  it('a record holding a value the part cannot (a 14-digit timestamp that is no date) fails alone', async () => {
    const [b] = await batchesOf(1);
    const bad: Batch = { ...b!, records: b!.records.map((r, i) => (i === 1 ? { ...r, ts: '20241399000000' } : r)) };
    const store = new MemoryObjectStore();
    const { marker } = await processBatch(bad, deps(store), { concurrency: 4, includeText: false });
    expect([marker.rows, marker.failed, marker.failures]).toEqual([b!.records.length - 1, 1, { CCP_ERR_PARQUET_ROW: 1 }]);
    const lines = Buffer.from((await store.get(layout.batchFailures(b!.datasetId, b!.id)))!).toString().trim().split('\n');
    expect(lines.map((l) => JSON.parse(l) as { i: number; stage: string })).toEqual([expect.objectContaining({ i: 1, stage: 'row', reason: 'CCP_ERR_PARQUET_ROW' })]);
  });

  it('records the server cannot give now (503 SlowDown after every retry) write nothing: the batch is requeued, and its retry completes it whole', async () => {
    const [b] = await batchesOf(1);
    const store = new MemoryObjectStore();
    const overloaded = await serveMirror({ dir: CC_MIRROR_DEV, port: 0, faults: { slowDownEvery: 1 } });
    const policy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 2, baseDelayMs: 1, maxRetryAfterMs: 0 };
    try {
      const reader = new UndiciRangeReader({ baseUrl: overloaded.url, connections: 4, userAgent: 'ccpipe-test', retryPolicy: policy, expectGzip: true });
      const err = await processBatch(b!, deps(store, reader), { concurrency: 4, includeText: false }).then(() => null, (e: unknown) => e);
      await reader.close();
      expect(err).toMatchObject({ code: 'CCP_ERR_BATCH_TRANSIENT', retryable: true, detail: { reasons: { CCP_ERR_FETCH_STATUS: expect.any(Number) } } });
      // no record starts after the first such failure: only those already in flight (4 lanes) were fetched
      expect(b!.records.length).toBeGreaterThan(4);
      expect((err as { detail: { records: number } }).detail.records).toBeLessThanOrEqual(4);
      expect(queueActionFor({ ok: false, error: err })).toEqual({ action: 'requeue', reason: 'CCP_ERR_BATCH_TRANSIENT' });
      const written: string[] = [];
      for await (const o of store.list('batches/')) written.push(o.key);
      expect(written).toEqual([]);
    } finally {
      await overloaded.close();
    }
    const healthy = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
    try {
      const reader = new UndiciRangeReader({ baseUrl: healthy.url, connections: 4, userAgent: 'ccpipe-test', retryPolicy: policy, expectGzip: true });
      const { marker } = await processBatch(b!, deps(store, reader), { concurrency: 4, includeText: false });
      await reader.close();
      expect([marker.rows, marker.failed]).toEqual([b!.records.length, 0]);
    } finally {
      await healthy.close();
    }
  });

  it('an extractor that cannot run at all fails the batch (the worker stops) instead of completing it without text', async () => {
    const [b] = await batchesOf(1);
    const store = new MemoryObjectStore();
    const d = deps(store);
    d.extract = async () => {
      throw new ExtractError('CCP_ERR_EXTRACT_UNAVAILABLE', 'extraction workers cannot start');
    };
    const err = await processBatch(b!, d, { concurrency: 4, includeText: true }).then(() => null, (e: unknown) => e);
    expect(queueActionFor({ ok: false, error: err })).toEqual({ action: 'crash', reason: 'CCP_ERR_EXTRACT_UNAVAILABLE' });
    expect(await store.get(layout.batchMarker(b!.datasetId, b!.id))).toBeNull();
  });

  it('an extraction failure keeps the row without text and records the failure', async () => {
    const [b] = await batchesOf(1);
    const store = new MemoryObjectStore();
    let calls = 0;
    const d = deps(store);
    d.extract = async (html, url) => {
      if (calls++ === 0) throw Object.assign(new Error('too slow'), { code: 'CCP_ERR_EXTRACT_TIMEOUT' });
      return extractDocument(html, { url });
    };
    const { marker }: { marker: BatchMarker } = await processBatch(b!, d, { concurrency: 1, includeText: true });
    expect(marker.rows).toBe(b!.records.length);
    expect(marker.failed).toBe(1);
  });

  it('with --status any, an error page (status >= 400) gets its row with status and size and is never extracted', async () => {
    const batches = await devBatches(crawl, { datasetId: 7, filter: { status: null, languages: null } });
    const withErrors = batches.find((b) => b.records.some((r) => Number(r.status) >= 400));
    expect(withErrors).toBeDefined();
    const store = new MemoryObjectStore();
    const d = deps(store);
    const extracted: string[] = [];
    d.extract = async (html, url) => {
      extracted.push(url);
      return extractDocument(html, { url });
    };
    const { marker } = await processBatch(withErrors!, d, { concurrency: 4, includeText: true });
    const rows = await readParquetRows((await store.get(layout.batchPart(withErrors!.datasetId, withErrors!.id)))!);
    expect(marker.rows).toBe(withErrors!.records.length);
    const errors = rows.filter((r) => Number(r['status']) >= 400);
    expect(errors.length).toBe(withErrors!.records.filter((r) => Number(r.status) >= 400).length);
    for (const r of errors) {
      expect([r['text'], r['title']]).toEqual([null, null]);
      expect(Number(r['content_length'])).toBeGreaterThan(0);
      expect(extracted).not.toContain(r['url']);
    }
    // the pages beside them are extracted as before
    expect(rows.some((r) => Number(r['status']) === 200 && typeof r['text'] === 'string')).toBe(true);
  });
});

describe('processBatch: the quality step', () => {
  const text = (words: number): string => Array.from({ length: words }, (_, i) => `word${i % 7}`).join(' ');
  /** An extractor whose text has as many words as the URL's last path digit × 20, computed as the pool would. */
  const sized = (html: string, url: string) => {
    const ex = extractDocument(html, { url });
    return { ...ex, text: `${text(Number(/(\d)\D*$/.exec(url)?.[1] ?? '0') * 20)}.` };
  };

  it('drops a document a filter fails, counts it by the filter name, keeps it with dropped_by on request; every text gets its language and signals', async () => {
    const [batch] = await batchesOf(1);
    const quality = (keepDropped: boolean) => ({ config: qualityConfigOf(['min-words'], { 'min-words': '100' }), keepDropped });
    const events: { dropped?: string; row?: boolean }[] = [];
    const run = async (keepDropped: boolean) => {
      const store = new MemoryObjectStore();
      const d = { ...deps(store), extract: async (html: string, url: string) => sized(html, url), events: { onRecord: (e: { dropped?: string; row?: boolean }) => void events.push(e) } };
      const { marker } = await processBatch(batch!, d, { concurrency: 4, includeText: true, quality: quality(keepDropped) });
      return { marker, rows: await readParquetRows((await store.get(layout.batchPart(batch!.datasetId, batch!.id)))!) };
    };
    const lean = await run(false);
    const all = await run(true);
    const short = all.rows.filter((r) => r['text'] !== null && Number(r['word_count']) < 100);
    expect(short.length).toBeGreaterThan(0);
    expect(short.every((r) => r['dropped_by'] === 'min-words')).toBe(true);
    expect(all.rows.filter((r) => r['dropped_by'] === null).every((r) => r['text'] === null || Number(r['word_count']) >= 100)).toBe(true);
    expect(lean.marker.dropped).toEqual({ 'min-words': short.length });
    expect(all.marker.dropped).toEqual({ 'min-words': short.length });
    expect(lean.rows.length).toBe(all.rows.length - short.length);
    expect(lean.marker.rows).toBe(lean.rows.length);
    // a dropped document without a row is not counted as indexed
    expect(events.filter((e) => e.dropped === 'min-words' && e.row === false)).toHaveLength(short.length);
    // signals and language are stored for every text, kept or not
    for (const r of all.rows.filter((x) => x['text'] !== null)) {
      expect(r['word_count']).toBe(r['text'] === '.' ? 0 : String(r['text']).split(' ').length);
      expect(typeof r['mean_word_length']).toBe('number');
    }
  }, 120_000);

  it('with no filter on, nothing is dropped and an English text gets eng', async () => {
    const [batch] = await batchesOf(1);
    const store = new MemoryObjectStore();
    const { marker } = await processBatch(batch!, deps(store), { concurrency: 4, includeText: true });
    expect(marker.dropped).toBeUndefined();
    const rows = await readParquetRows((await store.get(layout.batchPart(batch!.datasetId, batch!.id)))!);
    const langs = rows.filter((r) => typeof r['text'] === 'string' && (r['text'] as string).length > 500).map((r) => r['text_language']);
    expect(langs.length).toBeGreaterThan(0);
    expect(langs.filter((l) => l === 'eng').length).toBeGreaterThan(langs.length / 2);
  }, 120_000);
});
