import { join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { openDuck, queryRows, sqlString } from './duck';
import type { LakeFileEntry } from './format';
import { isoOfMs, NO_STATUS, NO_TIME, primaryLanguage } from '@ccpipe/core';
import { roundConfidence, warcOf, type LakeCaptureRow, type LakePageRow, type LakeReads, type LakeUrlRow } from './lake-reader';

/**
 * The previous lake reader, kept to compare against in bench/api.bench.js: one DuckDB `read_parquet` query per
 * call on the file's local path under `dataDir` (row groups pruned by `file_row_number`). Needs the lake on a local
 * disk and a `url_id` column. Use {@link ParquetLakeReader} otherwise.
 */
export class DuckLakeReader implements LakeReads {
  private closed = false;

  private constructor(private readonly db: DuckDBInstance, private readonly dataDir: string) {}

  /** Opens an embedded DuckDB (`threads`, default 1) reading lake files below `dataDir`. */
  static async open(dataDir: string, threads = 1): Promise<DuckLakeReader> {
    return new DuckLakeReader(await openDuck({ threads, metadataCache: true }), dataDir);
  }

  async rows(file: LakeFileEntry, from: number, to: number): Promise<LakeUrlRow[]> {
    const rows = await this.query(
      `SELECT url_id, url, ts, status, title FROM read_parquet(${sqlString(join(this.dataDir, file.key))}, file_row_number = true, hive_partitioning = false)
       WHERE file_row_number >= ${from} AND file_row_number < ${to} ORDER BY file_row_number`,
    );
    return rows.map(toRow);
  }

  async find(file: LakeFileEntry, from: number, to: number, url: string, opts: { text?: boolean } = {}): Promise<LakeCaptureRow[]> {
    const rows = await this.query(
      `SELECT COLUMNS(c -> c IN ('url_id', 'url', 'ts', 'status', 'title', 'content_length', 'languages', 'warc_filename', 'warc_offset', 'warc_length', 'text', 'extras', 'text_language', 'text_language_confidence')),
              length(text) AS text_length
       FROM read_parquet(${sqlString(join(this.dataDir, file.key))}, file_row_number = true, hive_partitioning = false)
       WHERE url = ${sqlString(url)} AND file_row_number >= ${from} AND file_row_number < ${to}`,
    );
    return rows.map((r) => ({
      ...toRow(r),
      textLength: r['text_length'] === null ? null : Number(r['text_length']),
      language: primaryLanguage(r['languages'] as string | null | undefined),
      contentLength: r['content_length'] === null || r['content_length'] === undefined ? null : Number(r['content_length']),
      ...(opts.text === true && { text: (r['text'] as string | null | undefined) ?? null }),
      warc: warcOf(r['warc_filename'] as string | null, Number(r['warc_offset']), Number(r['warc_length'])),
      extras: (r['extras'] as string | null | undefined) ?? null,
      textLanguage: (r['text_language'] as string | null | undefined) ?? null,
      textLanguageConfidence: roundConfidence((r['text_language_confidence'] as number | null | undefined) ?? null),
    }));
  }

  async scan(file: LakeFileEntry, from: number, to: number): Promise<LakePageRow[]> {
    const rows = await this.query(
      `SELECT COLUMNS(c -> c IN ('url', 'surt', 'ts', 'status', 'title', 'content_length', 'languages'))
       FROM read_parquet(${sqlString(join(this.dataDir, file.key))}, file_row_number = true, hive_partitioning = false)
       WHERE file_row_number >= ${from} AND file_row_number < ${to} ORDER BY file_row_number`,
    );
    return rows.map((r) => ({
      url: r['url'] as string,
      surt: (r['surt'] as string | null | undefined) ?? null,
      ts: r['ts'] === null ? NO_TIME : (r['ts'] as Date).getTime(),
      status: r['status'] === null ? NO_STATUS : Number(r['status']),
      title: (r['title'] as string | null) ?? null,
      contentLength: r['content_length'] === null || r['content_length'] === undefined ? null : Number(r['content_length']),
      language: primaryLanguage(r['languages'] as string | null | undefined),
    }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.closeSync();
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

function toRow(r: Record<string, unknown>): LakeUrlRow {
  return {
    urlId: r['url_id'] as bigint,
    url: r['url'] as string,
    ts: r['ts'] === null ? null : isoOfMs((r['ts'] as Date).getTime()),
    status: r['status'] === null ? null : Number(r['status']),
    title: (r['title'] as string | null) ?? null,
  };
}
