import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { MAX_SEARCH_LIMIT, MAX_SEARCH_WINDOW, SearchError, type ParsedQuery } from '@ccpipe/core';
import { MARK_CLOSE, MARK_CUT, MARK_OPEN, SHARD_FORMAT, registerInflate } from './shard-schema';
import { snippetHtml, snippetParts, type SnippetPart } from './snippet';

/** Deepest page a search serves: `offset + limit` beyond it is refused (each shard ranks that many hits). */
export const MAX_WINDOW = MAX_SEARCH_WINDOW;
/** Matches counted exactly per shard (and per domain run); beyond it `total` is an estimate (`totalExact` false). */
export const DEFAULT_COUNT_CAP = 10_000;
/** Time limit of a search when none is given. */
export const DEFAULT_TIME_LIMIT_MS = 1000;
/** BM25 weight of the title against the text's 1 (the judged set's best of 1, 2, 4: docs/search.md). */
export const TITLE_WEIGHT = 2;

/** Options of a search. */
export interface SearchOptions {
  /** Only captures at or after this time (epoch seconds). */
  from?: number;
  /** Only captures at or before this time (epoch seconds). */
  to?: number;
  /** Only this registered domain (one rowid range per run of the domain in the shard). */
  domain?: string;
  /** Hits to return, 1–100. */
  limit: number;
  /** Hits to skip; `offset + limit` ≤ {@link MAX_WINDOW}. */
  offset?: number;
  /** Time limit from the call; default {@link DEFAULT_TIME_LIMIT_MS}. Ignored when `deadline` is given. */
  timeLimitMs?: number;
  /** Absolute deadline on `performance.now()`'s clock (a global search shares one across its shards). */
  deadline?: number;
  /** Matches counted exactly before `total` is estimated; default {@link DEFAULT_COUNT_CAP}. */
  countCap?: number;
  /** BM25 weight of the title against the text's 1; default {@link TITLE_WEIGHT}. Use one weight for every shard of a search. */
  titleWeight?: number;
  /** Words of text around the hits in a snippet (FTS5's max 64); default 24. */
  snippetTokens?: number;
}

/** One matching document. */
export interface SearchHit {
  rowId: number;
  /** The url_id as a decimal string (it may pass 2⁵³). */
  urlId: string;
  url: string;
  datasetId: number;
  ts: number;
  title: string | null;
  /** The best passage of the text, HTML: matched words in `<mark>…</mark>`, all else escaped; '' without stored text. */
  snippet: string;
  /** The same passage as plain-text parts, for clients that do not render HTML. */
  snippetParts: SnippetPart[];
  /** −BM25 (higher is better), with this shard's statistics. */
  score: number;
}

/** A page of hits and the number of matches. */
export interface SearchResult {
  hits: SearchHit[];
  /** Matches of the query with the filters; an estimate when `totalExact` is false. */
  total: number;
  totalExact: boolean;
}

/** An open search shard. */
export interface SearchShard {
  readonly path: string;
  /** Documents indexed. */
  readonly docs: number;
  /**
   * The best hits for `query` (BM25 over title and text, title weighted {@link TITLE_WEIGHT}; ties by rowId), with
   * filters, and the match count. Synchronous; the time limit is checked on about one candidate row in 64 (a per-row
   * check cost up to a third of a common word's query; `random() & 63` rather than the rowid, which may be sparse), so a query whose
   * matches are many is interrupted mid-way (one that reads long posting lists and matches nothing is not: docs/search.md).
   * @throws SearchError `CCP_ERR_SEARCH_TIMEOUT` past the time limit, `CCP_ERR_SEARCH_QUERY` (`bad_option`) for a
   *   limit outside 1–100, a negative offset or a window beyond {@link MAX_WINDOW}, or an unparsable time filter.
   */
  search(query: ParsedQuery, opts: SearchOptions): SearchResult;
  /**
   * The first phase of {@link search}: the best `offset + limit` matches as (rowId, score), best first, and the count;
   * nothing is read for them yet. A search over several shards ranks in each and materializes only its final page.
   * @throws as {@link search}
   */
  rank(query: ParsedQuery, opts: SearchOptions): RankResult;
  /** The second phase: the hits of ranked rows (fields, snippet), in the given order. Synchronous; no time limit (bounded by the rows given). */
  hits(query: ParsedQuery, rows: readonly RankedRow[], opts?: { snippetTokens?: number }): SearchHit[];
  /** Closes the database; idempotent. */
  close(): void;
}

/** A ranked match: its rowId and score (−BM25, higher is better). */
export interface RankedRow {
  rowId: number;
  score: number;
}

/** The ranking phase's result: the best `offset + limit` rows (offset not applied) and the count. */
export interface RankResult {
  rows: RankedRow[];
  total: number;
  totalExact: boolean;
}

interface Ranked {
  r: number;
  s: number;
}

/** @internal Checks a search's options; shared with the global search. */
export function checkOptions(opts: SearchOptions): void {
  const bad = (m: string): never => {
    throw new SearchError('CCP_ERR_SEARCH_QUERY', m, { detail: { reason: 'bad_option' } });
  };
  if (!Number.isInteger(opts.limit) || opts.limit < 1 || opts.limit > MAX_SEARCH_LIMIT) bad(`limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
  const offset = opts.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0) bad('offset must be a non-negative integer');
  if (offset + opts.limit > MAX_WINDOW) bad(`offset + limit may not pass ${MAX_WINDOW}`);
  for (const k of ['from', 'to'] as const) if (opts[k] !== undefined && !Number.isFinite(opts[k])) bad(`${k} must be a time`);
}

/** @internal The deadline of a search on performance.now()'s clock. */
export function deadlineOf(opts: SearchOptions): number {
  return opts.deadline ?? performance.now() + (opts.timeLimitMs ?? DEFAULT_TIME_LIMIT_MS);
}

/**
 * Opens a shard written by `buildSearchShard`, read-only. The file must stay in place while open (a reader stages a
 * remote shard to a local file first). @throws SearchError `CCP_ERR_SEARCH_SHARD` when the file is missing, not a
 * SQLite database, or not a search shard of format {@link SHARD_FORMAT}.
 */
export function openSearchShard(path: string): SearchShard {
  if (!existsSync(path)) throw new SearchError('CCP_ERR_SEARCH_SHARD', 'search shard file not found', { detail: { path } });
  let db: Database.Database;
  let docs: number;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const format = db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get();
    if (format !== String(SHARD_FORMAT)) {
      db.close();
      throw new SearchError('CCP_ERR_SEARCH_SHARD', 'not a search shard of a known format', { detail: { path, format } });
    }
    docs = Number(db.prepare("SELECT value FROM meta WHERE key = 'docs'").pluck().get());
  } catch (err) {
    if (err instanceof SearchError) throw err;
    throw new SearchError('CCP_ERR_SEARCH_SHARD', 'not a search shard', { cause: err, detail: { path } });
  }
  return new SqliteSearchShard(path, db, docs);
}

const SHARD_WIDE: [number, number] = [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];

class SqliteSearchShard implements SearchShard {
  private deadline = 0;
  private readonly stmts = new Map<string, Database.Statement>();
  private readonly span: [number, number];

  constructor(
    readonly path: string,
    private readonly db: Database.Database,
    readonly docs: number,
  ) {
    registerInflate(db);
    db.function('ccp_deadline', { deterministic: false }, () => {
      if (performance.now() > this.deadline) throw new SearchError('CCP_ERR_SEARCH_TIMEOUT', 'the search ran past its time limit');
      return 1;
    });
    const span = db.prepare('SELECT min(rowid) AS lo, max(rowid) AS hi FROM docs').get() as { lo: number | null; hi: number | null };
    this.span = [span.lo ?? 0, span.hi ?? 0];
  }

  private stmt(key: string, sql: () => string): Database.Statement {
    let s = this.stmts.get(key);
    if (!s) {
      s = this.db.prepare(sql());
      this.stmts.set(key, s);
    }
    return s;
  }

  search(query: ParsedQuery, opts: SearchOptions): SearchResult {
    const r = this.rank(query, opts);
    const page = r.rows.slice(opts.offset ?? 0);
    return { hits: this.hits(query, page, opts), total: r.total, totalExact: r.totalExact };
  }

  rank(query: ParsedQuery, opts: SearchOptions): RankResult {
    checkOptions(opts);
    this.deadline = deadlineOf(opts);
    if (performance.now() > this.deadline) throw new SearchError('CCP_ERR_SEARCH_TIMEOUT', 'the search ran past its time limit');
    const want = (opts.offset ?? 0) + opts.limit;
    const cap = opts.countCap ?? DEFAULT_COUNT_CAP;
    const timed = opts.from !== undefined || opts.to !== undefined;
    const ranges: [number, number][] =
      opts.domain === undefined
        ? [SHARD_WIDE]
        : (this.stmt('runs', () => 'SELECT lo, hi FROM domain_runs WHERE domain = ? ORDER BY lo').raw().all(opts.domain) as [number, number][]);
    const join = timed ? 'JOIN docs d ON d.rowid = fts.rowid' : '';
    const where = `fts MATCH @q AND fts.rowid BETWEEN @lo AND @hi ${timed ? 'AND d.ts BETWEEN @from AND @to' : ''} AND ((random() & 63) != 0 OR ccp_deadline())`;
    const w = opts.titleWeight ?? TITLE_WEIGHT;
    if (!(w > 0 && w <= 100)) throw new SearchError('CCP_ERR_SEARCH_QUERY', 'titleWeight must be in (0, 100]', { detail: { reason: 'bad_option' } });
    const rank = this.stmt(`rank${timed}${w}`, () => `SELECT fts.rowid AS r, bm25(fts, ${Number(w)}, 1.0) AS s FROM fts ${join} WHERE ${where} ORDER BY s, r LIMIT @k`);
    const count = this.stmt(`count${timed}`, () => `SELECT count(*) AS n, max(r) AS last FROM (SELECT fts.rowid AS r FROM fts ${join} WHERE ${where} LIMIT @cap)`);
    const time = timed ? { from: Math.ceil(opts.from ?? -Number.MAX_SAFE_INTEGER), to: Math.floor(opts.to ?? Number.MAX_SAFE_INTEGER) } : {};
    let total = 0;
    let exact = true;
    const ranked: Ranked[] = [];
    for (const [lo, hi] of ranges) {
      // rowids bound as BigInt: better-sqlite3 binds a number as REAL, and FTS5 ignores `rowid = ?` given a REAL (every
      // match came back); ranges filtered right as REALs too, integers just do not rely on it
      const params = { q: query.fts5, lo: BigInt(lo), hi: BigInt(hi), ...time };
      const c = count.get({ ...params, cap }) as { n: number; last: number | null };
      if (c.n === 0) continue;
      if (c.n >= cap && c.last !== null) {
        // FTS5 yields matches in rowid order: extrapolate the count from how far into the range the cap reached
        const [a, b] = [Math.max(lo, this.span[0]), Math.min(hi, this.span[1])];
        total += Math.round((cap * (b - a + 1)) / Math.max(1, c.last - a + 1));
        exact = false;
      } else total += c.n;
      ranked.push(...(rank.all({ ...params, k: want }) as Ranked[]));
    }
    if (ranges.length > 1) ranked.sort((x, y) => x.s - y.s || x.r - y.r);
    return { rows: ranked.slice(0, want).map((h) => ({ rowId: h.r, score: -h.s })), total, totalExact: exact };
  }

  hits(query: ParsedQuery, rows: readonly RankedRow[], opts: { snippetTokens?: number } = {}): SearchHit[] {
    return rows.map((h) => this.hit(query, h, opts.snippetTokens ?? 24));
  }

  private hit(query: ParsedQuery, h: RankedRow, tokens: number): SearchHit {
    const d = this.stmt('doc', () => 'SELECT dataset_id, ts, CAST(url_id AS TEXT) AS url_id, url, title FROM docs WHERE rowid = ?').get(BigInt(h.rowId)) as {
      dataset_id: number;
      ts: number;
      url_id: string;
      url: string;
      title: string | null;
    };
    const sql = `SELECT snippet(fts, 1, '${MARK_OPEN}', '${MARK_CLOSE}', '${MARK_CUT}', @tokens) FROM fts WHERE fts MATCH @q AND rowid = @r`;
    const raw = this.stmt('snippet', () => sql).pluck().get({ q: query.fts5, r: BigInt(h.rowId), tokens: Math.min(64, Math.max(1, tokens)) }) as string | null;
    const parts = snippetParts(raw);
    return { rowId: h.rowId, urlId: d.url_id, url: d.url, datasetId: d.dataset_id, ts: d.ts, title: d.title, snippet: snippetHtml(parts), snippetParts: parts, score: h.score };
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
