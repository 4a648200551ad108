import { join } from 'node:path';
import type { DuckDBInstance } from '@duckdb/node-api';
import { openDuck, queryRows, sqlString } from './duck';
import type { LakeFileEntry } from './format';
import type { LakeCaptureRow, LakeReads, LakeUrlRow } from './lake-reader';

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

  async find(file: LakeFileEntry, from: number, to: number, url: string): Promise<LakeCaptureRow[]> {
    const rows = await this.query(
      `SELECT url_id, url, ts, status, title, length(text) AS text_length, warc_filename, warc_offset, warc_length
       FROM read_parquet(${sqlString(join(this.dataDir, file.key))}, file_row_number = true, hive_partitioning = false)
       WHERE url = ${sqlString(url)} AND file_row_number >= ${from} AND file_row_number < ${to}`,
    );
    return rows.map((r) => ({
      ...toRow(r),
      textLength: r['text_length'] === null ? null : Number(r['text_length']),
      warc: { filename: r['warc_filename'] as string, offset: Number(r['warc_offset']), length: Number(r['warc_length']) },
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
    ts: (r['ts'] as Date).toISOString().replace('.000Z', 'Z'),
    status: Number(r['status']),
    title: (r['title'] as string | null) ?? null,
  };
}
