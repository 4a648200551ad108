import { renameSync, rmSync, statSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { deflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { SHARD_FORMAT, STRIPPED, TOKENIZER_PLAIN, TOKENIZER_PORTER, registerInflate, schemaSql } from './shard-schema';

/** One document to index: a row of a lake partition with text. */
export interface SearchDoc {
  /** The row's position in the lake partition, or any stable integer unique within the shard (a safe integer). */
  rowId: number;
  urlId: bigint | string;
  url: string;
  /** The registered domain (the lake's `domain`): what a domain-scoped search filters on. */
  domain: string;
  datasetId: number;
  /** Capture time, epoch seconds. */
  ts: number;
  title: string | null;
  text: string | null;
  /** ISO 639-3 code(s) as the lake has them; kept, not used for tokenization (see docs/search.md). */
  language?: string | null;
}

/** Options of {@link buildSearchShard}. */
export interface BuildShardOptions {
  /** Porter stemming (English only) after unicode61; default false: it did not help on the judged set (docs/search.md). */
  stem?: boolean;
  /** Keep a deflated copy of the text for snippets; default true. Without it hits have empty snippets. */
  storeText?: boolean;
  /** Merge the index into one b-tree and VACUUM after loading (smaller and faster to query); default true. */
  optimize?: boolean;
}

/** What {@link buildSearchShard} wrote. */
export interface BuildShardResult {
  docs: number;
  /** Size of the shard file. */
  bytes: number;
  /** Bytes of the FTS5 index alone (its shadow tables), without the doc store. */
  indexBytes: number;
  /** UTF-8 bytes of the titles and texts indexed: the denominator of the index/text ratio. */
  textBytes: number;
  ms: number;
}

const BATCH = 2000;

/**
 * A search shard being written: documents are added in batches (each one SQLite transaction), then `finish()` writes
 * the tables' last rows, merges the index, VACUUMs and renames the file into place. The work is synchronous, so a
 * caller that must not block (the merge's reader) drives one from a worker thread (build-pool.ts). Either `finish()`
 * or `abort()` must end it: both close the database; `abort()` removes the temp file.
 */
export class ShardBuilder {
  private readonly t0 = performance.now();
  private readonly tmp: string;
  private readonly db: Database.Database;
  private readonly flush: (rows: readonly SearchDoc[]) => void;
  private readonly insRun: Database.Statement;
  private n = 0;
  private textBytes = 0;
  private run: { domain: string; lo: number; hi: number } | null = null;

  constructor(
    private readonly path: string,
    private readonly opts: BuildShardOptions = {},
  ) {
    this.tmp = `${path}.tmp-${process.pid}-${threadId}`;
    rmSync(this.tmp, { force: true });
    const db = (this.db = new Database(this.tmp));
    try {
      db.pragma('journal_mode = OFF');
      db.pragma('synchronous = OFF');
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('cache_size = -65536');
      registerInflate(db);
      db.exec(schemaSql(opts.stem ? TOKENIZER_PORTER : TOKENIZER_PLAIN));
      // no incremental merging of the index's segments while loading (finish() merges them all once, 'optimize'),
      // and a crisis merge only past 64 segments of a level: 11 % less build CPU and wall on 20k corpus docs (medians of
      // 5 alternated rounds, a process each, load 1.1–1.4: 2.40 against 2.71 CPU-s)
      db.exec("INSERT INTO fts(fts, rank) VALUES ('automerge', 0)");
      db.exec("INSERT INTO fts(fts, rank) VALUES ('crisismerge', 64)");
    } catch (err) {
      this.abort();
      throw err;
    }
    const insDoc = db.prepare('INSERT INTO docs(rowid, dataset_id, ts, url_id, url, title, lang, text_z) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    const insFts = db.prepare('INSERT INTO fts(rowid, title, text) VALUES (?, ?, ?)');
    this.insRun = db.prepare('INSERT INTO domain_runs(domain, lo, hi) VALUES (?, ?, ?)');
    const storeText = opts.storeText ?? true;
    this.flush = db.transaction((rows: readonly SearchDoc[]) => {
      for (const d of rows) {
        const title = d.title ? d.title.replace(STRIPPED, ' ') : null;
        const text = d.text ? d.text.replace(STRIPPED, ' ') : null;
        if (!title && !text) continue;
        if (!Number.isSafeInteger(d.rowId)) throw new RangeError(`rowId ${d.rowId} is not a safe integer`);
        const urlId = typeof d.urlId === 'bigint' ? d.urlId : BigInt(d.urlId);
        const textZ = storeText && text ? deflateRawSync(text, { level: 4 }) : null;
        insDoc.run(d.rowId, d.datasetId, Math.floor(d.ts), urlId, d.url, title, d.language ?? null, textZ);
        insFts.run(d.rowId, title, text);
        this.textBytes += (title ? Buffer.byteLength(title) : 0) + (text ? Buffer.byteLength(text) : 0);
        this.n++;
        const run = this.run;
        if (run && run.domain === d.domain && d.rowId === run.hi + 1) run.hi = d.rowId;
        else {
          if (run) this.insRun.run(run.domain, run.lo, run.hi);
          this.run = { domain: d.domain, lo: d.rowId, hi: d.rowId };
        }
      }
    });
  }

  /** Adds documents (one transaction). @throws on a duplicate rowId or an unsafe integer; the builder must then be aborted */
  add(docs: readonly SearchDoc[]): void {
    this.flush(docs);
  }

  /** Completes the shard and renames it into place. @throws as SQLite does; the temp file is then removed */
  finish(): BuildShardResult {
    try {
      const db = this.db;
      if (this.run) this.insRun.run(this.run.domain, this.run.lo, this.run.hi);
      db.exec('CREATE INDEX domain_runs_domain ON domain_runs(domain)');
      const meta = db.prepare('INSERT INTO meta(key, value) VALUES (?, ?)');
      meta.run('format', String(SHARD_FORMAT));
      meta.run('docs', String(this.n));
      meta.run('text_bytes', String(this.textBytes));
      meta.run('stem', this.opts.stem ? '1' : '0');
      if (this.opts.optimize ?? true) {
        db.exec("INSERT INTO fts(fts) VALUES ('optimize')");
        db.exec('VACUUM');
      }
      const indexBytes = Number(
        (db.prepare("SELECT coalesce(sum(pgsize), 0) AS b FROM dbstat WHERE name LIKE 'fts\\_%' ESCAPE '\\'").get() as { b: number }).b,
      );
      db.close();
      renameSync(this.tmp, this.path);
      return { docs: this.n, bytes: statSync(this.path).size, indexBytes, textBytes: this.textBytes, ms: performance.now() - this.t0 };
    } catch (err) {
      this.abort();
      throw err;
    }
  }

  /** Drops the shard being written (closes the database, removes the temp file). Idempotent. */
  abort(): void {
    if (this.db?.open) this.db.close();
    rmSync(this.tmp, { force: true });
  }
}

/**
 * Writes one search shard: a SQLite database file at `path` holding the FTS5 index (title and text, BM25), the hit
 * fields and (by default) the deflated text of `docs`. Docs should come in the lake's order (domain, url), so each
 * domain is one rowid run; any order is correct, only slower to search by domain. Docs with neither title nor text
 * are skipped. The file is written beside `path` and renamed into place last, so a reader never sees a partial
 * shard; building the same docs again gives an equivalent shard (idempotent). Synchronous SQLite work between batches
 * of an async iterable (see {@link ShardBuilder}; build-pool.ts runs it off the caller's thread). @throws on a
 * duplicate rowId or an unsafe integer (SqliteError / RangeError); the temp file is removed.
 */
export async function buildSearchShard(
  path: string,
  docs: Iterable<SearchDoc> | AsyncIterable<SearchDoc>,
  opts: BuildShardOptions = {},
): Promise<BuildShardResult> {
  const b = new ShardBuilder(path, opts);
  try {
    let batch: SearchDoc[] = [];
    for await (const d of docs as AsyncIterable<SearchDoc>) {
      batch.push(d);
      if (batch.length >= BATCH) {
        b.add(batch);
        batch = [];
      }
    }
    b.add(batch);
  } catch (err) {
    b.abort();
    throw err;
  }
  return b.finish();
}
