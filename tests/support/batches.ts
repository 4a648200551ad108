import { canonicalizeUrl, layout, urlId, type ObjectStore } from '@ccpipe/core';
import { writeParquetPart, type PartRow } from '@ccpipe/adapters';

/**
 * A part row of `raw` (canonicalized, its url_id, host and registered domain as the worker computes them) captured
 * at `ts` (YYYYMMDDhhmmss), with a 200 text/html response titled `t <ts>`; `over` replaces any field.
 */
export function partRow(datasetId: number, raw: string, ts: string, over: Partial<PartRow> = {}): PartRow {
  const c = canonicalizeUrl(raw);
  return {
    datasetId, urlId: urlId(c.url), url: c.url, rawUrl: raw, host: c.host, domain: c.domain ?? c.host, privateDomain: c.privateDomain, surt: c.surt,
    timestamp: ts, status: 200, mime: 'text/html', charset: null, languages: null, title: `t ${ts}`, text: 'body', contentLength: 10, outlinks: [], outlinkDomains: [],
    warcFilename: 'crawl-data/x.warc.gz', warcOffset: 0, warcLength: 100, digest: 'AAAA', ...over,
  };
}

/**
 * Writes one completed batch the way a worker does: its Parquet part, then the completion marker and its inbox
 * entry; `inbox: false` leaves the entry out, as a worker of a ccpipe older than the inbox did.
 */
export async function putBatch(store: ObjectStore, datasetId: number, id: string, rows: PartRow[], opts: { inbox?: boolean } = {}): Promise<void> {
  const part = layout.batchPart(datasetId, id);
  await store.put(part, await writeParquetPart(rows, { engine: 'duckdb' }));
  const marker = Buffer.from(JSON.stringify({ v: 1, batchId: id, datasetId, rows: rows.length, part }));
  await store.put(layout.batchMarker(datasetId, id), marker);
  if (opts.inbox !== false) await store.put(layout.inboxEntry(datasetId, id), marker);
}
