import { inflateRawSync } from 'node:zlib';
import type Database from 'better-sqlite3';

/** Format version of a search shard, in its `meta` table; readers refuse any other. */
export const SHARD_FORMAT = 1;

/** SQLite's unicode61 with diacritics folded (café = cafe, Straße ≠ strasse), for every script it splits on spaces. */
export const TOKENIZER_PLAIN = 'unicode61 remove_diacritics 2';
/** The same, each token then reduced by the Porter stemmer (English only: it also stems German or French words). */
export const TOKENIZER_PORTER = 'porter unicode61 remove_diacritics 2';

/** Markers FTS5's snippet() puts around hits and where it cut the text; control characters the build strips from text. */
export const MARK_OPEN = '\u0002';
export const MARK_CLOSE = '\u0003';
export const MARK_CUT = '\u0004';
/** Control characters removed from titles and texts as they are indexed (so no text can forge a marker). */
export const STRIPPED = /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g;

/**
 * The shard's tables. `docs` holds what a hit shows (its small columns first, so a ts filter reads no overflow page)
 * and the text deflated; `fts` is an FTS5 index with `docs_text` as external content, so the index itself stores no
 * copy of the text and snippet() reads the deflated text through `ccp_inflate`. `domain_runs` lists each domain's
 * runs of consecutive rowids (one run when docs come in the lake's (domain, url) order): a domain-scoped search is
 * an FTS5 rowid range, which FTS5 answers by seeking in its doclists instead of filtering every match.
 */
export function schemaSql(tokenizer: string): string {
  return `
    CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE docs(rowid INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL, ts INTEGER NOT NULL, url_id INTEGER NOT NULL,
                      url TEXT NOT NULL, title TEXT, lang TEXT, text_z BLOB);
    CREATE TABLE domain_runs(domain TEXT NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL);
    CREATE VIEW docs_text AS SELECT rowid, title, ccp_inflate(text_z) AS text FROM docs;
    CREATE VIRTUAL TABLE fts USING fts5(title, text, content='docs_text', content_rowid='rowid', tokenize='${tokenizer}');`;
}

/** Registers the shard's SQL functions on a connection (every connection that reads snippets needs `ccp_inflate`). */
export function registerInflate(db: Database.Database): void {
  db.function('ccp_inflate', { deterministic: true }, (z: unknown) =>
    z instanceof Uint8Array ? inflateRawSync(z).toString('utf8') : null,
  );
}
