import { randomBytes } from 'node:crypto';
import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DuckDBDataChunk, DuckDBInstance, DuckDBTimestampTZValue, listValue, type DuckDBConnection, type DuckDBType, type DuckDBValue,
} from '@duckdb/node-api';
import { cdxTimestampToMillis, DUCKDB_VECTOR_SIZE, PART_COLUMNS, QUALITY_COLUMNS, type PartRow, type WriteParquetPartOptions } from './part-row';

/** DuckDB's type of each part column. */
export const PART_SQL_TYPES: Record<(typeof PART_COLUMNS)[number]['name'], string> = {
  dataset_id: 'UINTEGER', url_id: 'BIGINT', url: 'VARCHAR', raw_url: 'VARCHAR', host: 'VARCHAR', domain: 'VARCHAR',
  private_domain: 'VARCHAR', surt: 'VARCHAR', ts: 'TIMESTAMPTZ', status: 'SMALLINT', mime: 'VARCHAR', charset: 'VARCHAR',
  languages: 'VARCHAR', title: 'VARCHAR', text: 'VARCHAR', content_length: 'INTEGER', outlink_count: 'INTEGER',
  outlinks: 'VARCHAR[]', outlink_domains: 'VARCHAR[]', warc_filename: 'VARCHAR', warc_offset: 'BIGINT', warc_length: 'INTEGER', digest: 'VARCHAR',
  extras: 'VARCHAR', text_language: 'VARCHAR', text_language_confidence: 'FLOAT', word_count: 'INTEGER', mean_word_length: 'FLOAT',
  symbol_word_ratio: 'FLOAT', line_punct_fraction: 'FLOAT', dup_line_fraction: 'FLOAT', dup_line_char_fraction: 'FLOAT',
  top_2gram_char_fraction: 'FLOAT', dup_5gram_char_fraction: 'FLOAT', dropped_by: 'VARCHAR',
};
const DDL_COLUMNS = PART_COLUMNS.map((c) => `${c.name} ${PART_SQL_TYPES[c.name]}${c.nullable ? '' : ' NOT NULL'}`).join(', ');

let instance: Promise<DuckDBInstance> | null = null;
let seq = 0;

function getInstance(): Promise<DuckDBInstance> {
  // One in-memory database per process; each write gets its own connection and temp table.
  // threads=1: a parallel COPY merges row groups and ignores ROW_GROUP_SIZE; workers run batches in parallel anyway.
  // Never fetch extensions at run time (Parquet is built in); TIMESTAMPTZ values are UTC micros without ICU.
  const config = { threads: '1', autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' };
  instance ??= DuckDBInstance.create(':memory:', config).catch((err: unknown) => {
    instance = null;
    throw err;
  });
  return instance;
}

/** Closes the process-wide DuckDB instance used by the duckdb engine. Idempotent; a later write reopens one. */
export async function closeDuckDbParquetEngine(): Promise<void> {
  const p = instance;
  instance = null;
  if (p !== null) (await p.catch(() => null))?.closeSync();
}

/**
 * Encodes rows with DuckDB: data chunks of 2048 rows filled column by column into the appender of a temp table,
 * then `COPY … TO` a temp file (DuckDB cannot COPY to memory), whose bytes are returned; file and table are
 * removed either way. Rows must already be checked (checkRow).
 */
export async function writeWithDuckDb(rows: readonly PartRow[], opts: Required<WriteParquetPartOptions>): Promise<Uint8Array> {
  const conn = await (await getInstance()).connect();
  const table = `part_${process.pid}_${++seq}`;
  const file = join(opts.tmpDir, `ccpipe-${table}-${randomBytes(6).toString('hex')}.parquet`);
  try {
    await conn.run(`CREATE TEMP TABLE ${table} (${DDL_COLUMNS})`);
    await appendRows(conn, table, rows, opts);
    const rg = Math.ceil(opts.rowGroupSize / DUCKDB_VECTOR_SIZE) * DUCKDB_VECTOR_SIZE;
    await conn.run(
      `COPY ${table} TO '${file.replaceAll("'", "''")}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${opts.compressionLevel}, ROW_GROUP_SIZE ${rg})`,
    );
    const buf = await readFile(file);
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  } finally {
    await unlink(file).catch(() => undefined);
    await conn.run(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    conn.closeSync();
  }
}

async function appendRows(conn: DuckDBConnection, table: string, rows: readonly PartRow[], opts: Required<WriteParquetPartOptions>): Promise<void> {
  const appender = await conn.createAppender(table);
  try {
    const types: DuckDBType[] = [];
    for (let i = 0; i < appender.columnCount; i++) types.push(appender.columnType(i));
    for (let start = 0; start < rows.length; start += DUCKDB_VECTOR_SIZE) {
      const slice = rows.slice(start, start + DUCKDB_VECTOR_SIZE);
      const chunk = DuckDBDataChunk.create(types, slice.length);
      chunk.setColumns(columnsOf(slice, opts));
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

function columnsOf(rows: readonly PartRow[], opts: Required<WriteParquetPartOptions>): DuckDBValue[][] {
  const none = listValue([]);
  const col = <T extends DuckDBValue>(get: (r: PartRow) => T): T[] => rows.map(get);
  return [
    col((r) => r.datasetId),
    col((r) => r.urlId),
    col((r) => r.url),
    col((r) => r.rawUrl),
    col((r) => r.host),
    col((r) => r.domain),
    col((r) => r.privateDomain),
    col((r) => r.surt),
    col((r) => (r.timestamp === null ? null : new DuckDBTimestampTZValue(BigInt(r.timestampMs ?? cdxTimestampToMillis(r.timestamp)) * 1000n))),
    col((r) => r.status),
    col((r) => r.mime),
    col((r) => r.charset),
    col((r) => r.languages),
    col((r) => r.title),
    col(opts.includeText ? (r) => r.text : () => null),
    col((r) => r.contentLength),
    col((r) => r.outlinks.length),
    col(opts.includeOutlinks ? (r) => listValue(r.outlinks) : () => none),
    col(opts.includeOutlinks ? (r) => listValue(r.outlinkDomains) : () => none),
    col((r) => r.warcFilename),
    col((r) => BigInt(r.warcOffset)),
    col((r) => r.warcLength),
    col((r) => r.digest),
    col((r) => r.extras ?? null),
    col((r) => r.textLanguage ?? null),
    col((r) => r.textLanguageConfidence ?? null),
    ...QUALITY_COLUMNS.map(([, field]) => col((r) => r.quality?.[field] ?? null)),
    col((r) => r.droppedBy ?? null),
  ];
}
