import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/**
 * Writes a completed batch whose part has the schema of a worker from before #21 (no `outlink_domains` column), as an
 * upgrade meets it: the part is written as today, then rewritten by DuckDB without that column.
 */
export async function writeOldPart(store: ObjectStore, datasetId: number, id: string, rows: PartRow[]): Promise<void> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const dir = await mkdtemp(join(tmpdir(), 'ccpipe-oldpart-'));
  try {
    await writeFile(join(dir, 'new.parquet'), await writeParquetPart(rows, { engine: 'duckdb' }));
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    await conn.run(`COPY (SELECT * EXCLUDE (outlink_domains) FROM read_parquet('${join(dir, 'new.parquet')}')) TO '${join(dir, 'old.parquet')}' (FORMAT parquet)`);
    conn.closeSync();
    db.closeSync();
    const part = layout.batchPart(datasetId, id);
    await store.put(part, await readFile(join(dir, 'old.parquet')));
    const marker = Buffer.from(JSON.stringify({ v: 1, batchId: id, datasetId, rows: rows.length, part }));
    await store.put(layout.batchMarker(datasetId, id), marker);
    await store.put(layout.inboxEntry(datasetId, id), marker);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
