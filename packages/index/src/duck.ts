import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';

/** Options of an embedded DuckDB database. */
export interface DuckOptions {
  /** Worker threads (default 1: COPY keeps ROW_GROUP_SIZE and row order only single-threaded). */
  threads?: number;
  /** e.g. '512MB'; DuckDB spills to `tempDir` beyond it. */
  memoryLimit?: string;
  tempDir?: string;
  /** Keep Parquet footers in memory between queries (readers: files are immutable, so this is safe). */
  metadataCache?: boolean;
}

/** Opens an in-memory DuckDB that never downloads extensions (Parquet is built in). Caller closes it. */
export async function openDuck(opts: DuckOptions = {}): Promise<DuckDBInstance> {
  const config: Record<string, string> = {
    threads: String(opts.threads ?? 1),
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    preserve_insertion_order: 'true',
  };
  if (opts.metadataCache === true) config['enable_object_cache'] = 'true';
  if (opts.memoryLimit !== undefined) config['memory_limit'] = opts.memoryLimit;
  if (opts.tempDir !== undefined) config['temp_directory'] = opts.tempDir;
  return DuckDBInstance.create(':memory:', config);
}

/** Rows of a query as plain JS objects (BIGINT → bigint, TIMESTAMPTZ → Date). */
export async function queryRows(conn: DuckDBConnection, sql: string, params?: DuckDBValue[]): Promise<Record<string, unknown>[]> {
  const r = await conn.runAndReadAll(sql, params);
  return r.getRowObjectsJS() as Record<string, unknown>[];
}

/**
 * A query's result streamed one DuckDB chunk (2,048 rows) at a time, as column arrays (BIGINT → bigint, VARCHAR →
 * string): memory is one chunk whatever the result's size. Run nothing else on `conn` until the loop ends — not even
 * an appender: DuckDB's appender flushes on its own every 204,800 rows, and a statement on the streaming connection
 * silently ends the stream there (tested). To append while streaming, stream on a connection of its own.
 */
export async function* streamColumns(conn: DuckDBConnection, sql: string): AsyncGenerator<unknown[][]> {
  const res = await conn.stream(sql);
  for (let c = await res.fetchChunk(); c !== null && c.rowCount > 0; c = await res.fetchChunk()) yield c.getColumns();
}

/**
 * The values of a one-column query (`SELECT v FROM …`: distinct, no NULL) in ascending byte order, as JS strings
 * fetched `bucket` at a time, each bucket one joined string. The bindings copy every string of more than 12 bytes
 * across on its own (≈ 1 µs each: most domain names); one copy per bucket made the merger's domain list ≈ 3× faster
 * (632k domains: 0.37–0.45 s against 1.24–1.27 s). @throws Error when a value is NULL or holds a newline (the separator)
 */
export async function* streamSortedStrings(conn: DuckDBConnection, sql: string, bucket = 4096): AsyncGenerator<string[]> {
  const q = `SELECT string_agg(v, chr(10) ORDER BY v) AS s, count(*) AS n
    FROM (SELECT v, (row_number() OVER (ORDER BY v) - 1) // ${bucket} AS b FROM (${sql})) GROUP BY b ORDER BY b`;
  for await (const [joined, counts] of streamColumns(conn, q)) {
    for (let i = 0; i < joined!.length; i++) {
      const values = (joined![i] as string).split('\n');
      if (values.length !== Number(counts![i])) throw new Error('a value is NULL or holds a newline: it cannot be streamed joined');
      yield values;
    }
  }
}

/** Appends rows to `table` through one appender (flushed, then closed whatever happens). */
export async function appendTo(conn: DuckDBConnection, table: string, fill: (app: DuckDBAppender) => void | Promise<void>): Promise<void> {
  const app = await conn.createAppender(table);
  try {
    await fill(app);
    app.flushSync();
  } finally {
    app.closeSync();
  }
}

/** A SQL string literal (paths we build ourselves; quotes doubled anyway). */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** A SQL list of string literals. */
export function sqlList(items: readonly string[]): string {
  return `[${items.map(sqlString).join(', ')}]`;
}
