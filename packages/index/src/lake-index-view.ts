import { join } from 'node:path';
import { RoaringBitmap32 } from 'roaring';
import type { DuckDBInstance } from '@duckdb/node-api';
import {
  canonicalizeUrl, domain64ToInt64, formatDomain64, urlIdHex, type CaptureItem, type DatasetSummary, type DomainDatasets, type IndexView,
  type UrlItem,
} from '@ccpipe/core';
import { queryRows, sqlString } from './duck';
import { DomainDictionary, bitmapBytes, postingsOf, type LakeFileEntry, type Posting } from './format';
import type { LoadedVersion } from './version-files';

const ITEM_COLS = 'url_id, url, ts, status, title';

/**
 * One index version, read side: `domain()` and `datasets()` answer from resident structures (dictionary, Roaring
 * bitmaps, postings with exact counts); `urls()` reads only the rows [first + offset, first + offset + limit) of the
 * one lake file holding the (domain, dataset) run (DuckDB prunes row groups by `file_row_number`); `captures()`
 * reads the domain's runs filtered by URL. Lake files are read from `dataDir`. Immutable; safe to share.
 */
export class LakeIndexView implements IndexView {
  readonly version: string;
  private readonly dict: DomainDictionary;
  private readonly files: LakeFileEntry[];

  constructor(
    private readonly loaded: LoadedVersion,
    private readonly dataDir: string,
    private readonly db: DuckDBInstance,
    private readonly names: ReadonlyMap<number, { name: string; crawl: string | null }>,
  ) {
    this.version = loaded.toc.version;
    this.dict = new DomainDictionary(loaded.domains);
    this.files = loaded.files;
  }

  domain(domain: string): DomainDatasets | null {
    const i = this.dict.indexOf(domain);
    if (i < 0) return null;
    const ids = RoaringBitmap32.deserialize(bitmapBytes(this.loaded.bitmaps, i), 'portable').toArray();
    const counts = new Map(postingsOf(this.loaded.postings, i).map((p) => [p.datasetId, p.rows]));
    return { domain, domain64: formatDomain64(this.dict.d64(i)), datasets: ids.map((datasetId) => ({ datasetId, urlCount: counts.get(datasetId) ?? 0 })) };
  }

  async urls(domain: string, datasetId: number, offset: number, limit: number): Promise<{ total: number; items: UrlItem[] }> {
    const p = this.posting(domain, datasetId);
    if (p === null) return { total: 0, items: [] };
    const from = p.first + Math.max(0, offset);
    const to = p.first + Math.min(p.rows, Math.max(0, offset) + Math.max(0, limit));
    if (from >= to) return { total: p.rows, items: [] };
    const rows = await this.query(
      `SELECT ${ITEM_COLS} FROM read_parquet(${sqlString(this.pathOf(p.file))}, file_row_number = true, hive_partitioning = false)
       WHERE file_row_number >= ${from} AND file_row_number < ${to} ORDER BY file_row_number`,
    );
    return { total: p.rows, items: rows.map(toUrlItem) };
  }

  async captures(canonicalUrl: string): Promise<CaptureItem[]> {
    let domain: string;
    try {
      const c = canonicalizeUrl(canonicalUrl);
      domain = c.domain ?? c.host;
    } catch {
      return [];
    }
    const i = this.dict.indexOf(domain);
    if (i < 0) return [];
    const d64 = domain64ToInt64(this.dict.d64(i));
    const out: CaptureItem[] = [];
    for (const p of postingsOf(this.loaded.postings, i)) {
      const rows = await this.query(
        `SELECT ${ITEM_COLS}, text_length, warc_filename, warc_offset, warc_length FROM (
           SELECT *, length(text) AS text_length FROM read_parquet(${sqlString(this.pathOf(p.file))}, file_row_number = true, hive_partitioning = false)
           WHERE domain64 = ${d64} AND url = ${sqlString(canonicalUrl)} AND file_row_number >= ${p.first} AND file_row_number < ${p.first + p.rows})`,
      );
      for (const r of rows) {
        out.push({
          datasetId: p.datasetId, ...toUrlItem(r), textLength: r['text_length'] === null ? null : Number(r['text_length']),
          warc: { filename: r['warc_filename'] as string, offset: Number(r['warc_offset']), length: Number(r['warc_length']) },
        });
      }
    }
    return out;
  }

  datasets(): DatasetSummary[] {
    return this.loaded.status.datasets.map((d) => {
      const n = this.names.get(d.datasetId);
      return { datasetId: d.datasetId, name: n?.name ?? `dataset-${d.datasetId}`, crawl: n?.crawl ?? null, urlCount: d.urlCount, domainCount: d.domainCount };
    });
  }

  /** Progress facts of this version (status.json) for /v1/status. */
  status(): LoadedVersion['status'] {
    return this.loaded.status;
  }

  private posting(domain: string, datasetId: number): Posting | null {
    const i = this.dict.indexOf(domain);
    if (i < 0) return null;
    return postingsOf(this.loaded.postings, i).find((p) => p.datasetId === datasetId) ?? null;
  }

  private pathOf(file: number): string {
    return join(this.dataDir, this.files[file]!.key);
  }

  private async query(sql: string): Promise<Record<string, unknown>[]> {
    const conn = await this.db.connect();
    try {
      return await queryRows(conn, sql);
    } finally {
      conn.closeSync();
    }
  }
}

function toUrlItem(r: Record<string, unknown>): UrlItem {
  return {
    urlId: urlIdHex(r['url_id'] as bigint),
    url: r['url'] as string,
    ts: (r['ts'] as Date).toISOString().replace('.000Z', 'Z'),
    status: Number(r['status']),
    title: (r['title'] as string | null) ?? null,
  };
}
