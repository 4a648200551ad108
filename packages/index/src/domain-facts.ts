import type { DuckDBConnection } from '@duckdb/node-api';
import type { DomainFacts } from '@ccpipe/core';
import { appendTo, sqlList } from './duck';
import { IndexFormatError } from './version-format';

/**
 * Per-(domain, dataset) facts (`DomainFacts`, the port's contract): computed by the merge with DuckDB over the rows a
 * version holds in the lake partitions it writes, carried over unchanged for the others, and stored beside each
 * domain-index shard as `facts-<k>.bin` (docs/index-format.md, "Domain facts").
 *
 * `facts-<k>.bin`, little-endian: the 12-byte shard header (magic `CCDF`, format 1, n = the shard's domains), then
 * `u32 recordOffset[n+1]` (byte offsets into the records), then the records: entry i's datasets in dataset order,
 * zero or more (a dataset without a record has no facts, e.g. one carried over from a version written before facts).
 * A record is unsigned LEB128 varints, self-delimiting so a merge copies a carried-over one verbatim:
 * `datasetId · hosts · 2xx · 3xx · 4xx · 5xx · zigzag(firstTs) · lastTs − firstTs · median + 1 (0: null) ·
 * p90 − median (only when median is not null) · languages · (code byte length · code UTF-8 · count) per language`;
 * times are epoch seconds.
 */
export const FACTS_MAGIC = 0x46444343; // 'CCDF' LE

/** File name of shard k's facts (beside `domains-<k>.bin`). */
export function factsFileName(k: number): string {
  return `facts-${String(k).padStart(4, '0')}.bin`;
}

/** Matches a facts file's name in a version's table of contents. */
export const FACTS_FILE = /^facts-\d{4}\.bin$/;

/** One (domain, dataset)'s facts as stored: times in epoch seconds. */
export interface FactsRecord {
  datasetId: number;
  hosts: number;
  status: [number, number, number, number];
  firstTs: number;
  lastTs: number;
  median: number | null;
  p90: number | null;
  /** [code, count], count descending then code, at most {@link MAX_LANGUAGES}. */
  languages: [string, number][];
}

/** Languages kept per (domain, dataset). */
export const MAX_LANGUAGES = 10;

/** Which fact columns a lake has: `host` (else derived from `url`), `languages`, `content_length`. */
export interface FactsColumns {
  host: boolean;
  languages: boolean;
  contentLength: boolean;
}

/** The fact columns of a lake with columns `columns`. */
export function factsColumnsOf(columns: readonly string[]): FactsColumns {
  return { host: columns.includes('host'), languages: columns.includes('languages'), contentLength: columns.includes('content_length') };
}

class VarintSink {
  private buf = Buffer.allocUnsafe(64);
  length = 0;

  u(v: number): void {
    if (!(Number.isSafeInteger(v) && v >= 0)) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'a domain fact is not a non-negative integer', { value: v });
    this.room(8);
    // 7 bits a byte; division, not shifts: values may pass 2³¹
    while (v >= 0x80) {
      this.buf[this.length++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.length++] = v;
  }

  bytes(b: Buffer): void {
    this.room(b.length);
    this.length += b.copy(this.buf, this.length);
  }

  private room(n: number): void {
    if (this.length + n + 10 <= this.buf.length) return;
    const next = Buffer.allocUnsafe(2 * (this.buf.length + n + 10));
    this.buf.copy(next, 0, 0, this.length);
    this.buf = next;
  }

  done(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.length));
  }
}

const zigzag = (v: number): number => (v < 0 ? -2 * v - 1 : 2 * v);
const unzigzag = (v: number): number => (v % 2 === 1 ? -(v + 1) / 2 : v / 2);

/** One record's bytes ({@link FACTS_MAGIC} describes them). @throws IndexFormatError on a value that is not a non-negative integer */
export function encodeFactsRecord(r: FactsRecord): Buffer {
  const s = new VarintSink();
  s.u(r.datasetId);
  s.u(r.hosts);
  for (const c of r.status) s.u(c);
  s.u(zigzag(r.firstTs));
  s.u(r.lastTs - r.firstTs);
  s.u(r.median === null ? 0 : r.median + 1);
  if (r.median !== null) s.u((r.p90 ?? r.median) - r.median);
  s.u(r.languages.length);
  for (const [code, count] of r.languages) {
    const b = Buffer.from(code, 'utf8');
    s.u(b.length);
    s.bytes(b);
    s.u(count);
  }
  return s.done();
}

/** A record read back, with where it sits in the bytes it came from (so it can be copied verbatim). */
export interface FactsSpan {
  record: FactsRecord;
  start: number;
  end: number;
}

/** The records of one entry's bytes, in order. @throws IndexFormatError when the bytes do not parse as records */
export function decodeFactsRecords(b: Buffer): FactsSpan[] {
  const out: FactsSpan[] = [];
  let at = 0;
  const u = (): number => {
    let v = 0;
    let scale = 1;
    for (;;) {
      if (at >= b.length || scale > 2 ** 49) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'a domain facts record is cut short or malformed');
      const byte = b[at++]!;
      v += (byte & 0x7f) * scale;
      if (byte < 0x80) return v;
      scale *= 0x80;
    }
  };
  while (at < b.length) {
    const start = at;
    const datasetId = u();
    const hosts = u();
    const status: [number, number, number, number] = [u(), u(), u(), u()];
    const firstTs = unzigzag(u());
    const lastTs = firstTs + u();
    const m = u();
    const median = m === 0 ? null : m - 1;
    const p90 = median === null ? null : median + u();
    const languages: [string, number][] = [];
    for (let k = u(); k > 0; k--) {
      const len = u();
      if (at + len > b.length) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'a domain facts record is cut short or malformed');
      const code = b.toString('utf8', at, at + len);
      at += len;
      languages.push([code, u()]);
    }
    out.push({ record: { datasetId, hosts, status, firstTs, lastTs, median, p90, languages }, start, end: at });
  }
  return out;
}

/** A record as the API answers it. */
export function toDomainFacts(r: FactsRecord): DomainFacts {
  // -1: no row had a time (an import without one)
  const iso = (s: number): string | null => (s === -1 ? null : new Date(s * 1000).toISOString().replace(/\.000Z$/, 'Z'));
  return {
    hosts: r.hosts,
    statusClasses: { '2xx': r.status[0], '3xx': r.status[1], '4xx': r.status[2], '5xx': r.status[3] },
    languages: r.languages.map(([code, count]) => ({ code, count })),
    firstTs: iso(r.firstTs),
    lastTs: iso(r.lastTs),
    contentLengthMedian: r.median,
    contentLengthP90: r.p90,
  };
}

/** @internal Where entry i's records sit in a facts file of `n` entries: after the header and `u32 recordOffset[n+1]`. */
export const factsDataAt = (n: number): number => 12 + 4 * (n + 1);

/**
 * The table {@link addFacts} fills: one row per (dataset, domain) of the partitions it is given. Create it once per
 * merge, before the first writeLake.
 */
export const NEW_FACTS =
  'CREATE TEMP TABLE new_facts (dataset_id INTEGER, domain VARCHAR, hosts INTEGER, s2 INTEGER, s3 INTEGER, s4 INTEGER, s5 INTEGER, first_ts DOUBLE, last_ts DOUBLE, cl_median INTEGER, cl_p90 INTEGER, langs VARCHAR)';

/**
 * The separators of `new_facts.langs` ("code␞count␟code␞count", every primary language of the pair with its count, in
 * no order): a primary language holding one counts in none. Numbers are INTEGER and DOUBLE, not BIGINT, so they reach
 * JS without a BigInt each.
 */
const LANG_FIELD = 30;
const LANG_ITEM = 31;

/** Where {@link addFacts} reads rows: staged new rows and lake files (runs), which together hold each row once. */
export interface FactsSources {
  /** A predicate on temp table `staged` (the merge's new rows) choosing the rows concerned; absent: none. */
  staged?: string;
  /** Lake files concerned, with their dataset and their id in temp table lose_old (rows listed there are skipped: superseded). */
  files: readonly { path: string; datasetId: number; fileId: number }[];
}

/**
 * Adds the facts of the (dataset, domain) pairs listed in table `only` (dataset_id, domain64) to table new_facts
 * ({@link NEW_FACTS}), over every row the version holds of them: give it the staged rows and the lake files of their
 * partitions (a partition's new file is its staged rows plus the surviving rows of the runs it folds in, so those are
 * read instead of the file just written: no Parquet decoding of it). Reads only the fact columns; `columns` says
 * which the lake has — without `host` the hostname comes from the canonical `url`, without `languages` or
 * `content_length` those facts are empty / null.
 */
export async function addFacts(conn: DuckDBConnection, src: FactsSources, columns: FactsColumns, only: string): Promise<void> {
  if (src.staged === undefined && src.files.length === 0) return;
  const raw = ['domain', 'domain64', columns.host ? 'host' : 'url', 'ts', 'status', ...(columns.languages ? ['languages'] : []), ...(columns.contentLength ? ['content_length'] : [])];
  const inputs: string[] = [];
  // rows of other domains are cut by their domain64 first, before any column of theirs is decoded or transformed
  // (≈ 10 % less CPU than the semi join alone on the bench's incremental merge); the semi join below stays exact
  const ofDomains = `domain64 IN (SELECT domain64 FROM ${only})`;
  if (src.staged !== undefined) inputs.push(`SELECT dataset_id::INTEGER AS dataset_id, ${raw.join(', ')} FROM staged WHERE (${src.staged}) AND ${ofDomains}`);
  if (src.files.length > 0) {
    await conn.run('CREATE OR REPLACE TEMP TABLE facts_files (f VARCHAR, dataset_id INTEGER, _f INTEGER)');
    await appendTo(conn, 'facts_files', (app) => {
      for (const f of src.files) {
        app.appendVarchar(f.path);
        app.appendInteger(f.datasetId);
        app.appendInteger(f.fileId);
        app.endRow();
      }
    });
    inputs.push(
      `SELECT p.dataset_id, ${raw.map((c) => `o.${c}`).join(', ')}
       FROM read_parquet(${sqlList(src.files.map((f) => f.path))}, hive_partitioning = false, filename = true, file_row_number = true) o JOIN facts_files p ON p.f = o.filename
       WHERE o.${ofDomains} AND NOT EXISTS (SELECT 1 FROM lose_old l WHERE l._f = p._f AND l._r = o.file_row_number)`,
    );
  }
  // a canonical URL is scheme://host[:port]/… (no userinfo), the host possibly an [IPv6] literal; split_part is
  // cheaper than a regexp here (≈ 0.35 s CPU per 1M rows)
  const hostOf = `CASE WHEN starts_with(split_part(o.url, '/', 3), '[') THEN split_part(split_part(o.url, '/', 3), ']', 1) || ']' ELSE split_part(split_part(o.url, '/', 3), ':', 1) END`;
  const host = columns.host ? 'o.host' : hostOf;
  const lang = columns.languages ? `NULLIF(split_part(o.languages, ',', 1), '')` : 'NULL::VARCHAR';
  // a negative length (none is written) counts as none rather than failing the merge
  const cl = columns.contentLength ? 'CASE WHEN o.content_length >= 0 THEN o.content_length END' : 'NULL::INTEGER';
  // One pass: every fact is an aggregate of the pair's rows (the languages as a histogram, ranked in JS), so the rows
  // are neither materialized nor read twice.
  const noSep = `NOT contains(lang, chr(${LANG_FIELD})) AND NOT contains(lang, chr(${LANG_ITEM}))`;
  await conn.run(
    `INSERT INTO new_facts
     SELECT dataset_id, domain, hosts, s2, s3, s4, s5, first_ts, last_ts, q[1], q[2], langs FROM (
       SELECT dataset_id, domain, count(DISTINCT host)::INTEGER AS hosts,
         count(*) FILTER (WHERE status BETWEEN 200 AND 299)::INTEGER AS s2, count(*) FILTER (WHERE status BETWEEN 300 AND 399)::INTEGER AS s3,
         count(*) FILTER (WHERE status BETWEEN 400 AND 499)::INTEGER AS s4, count(*) FILTER (WHERE status BETWEEN 500 AND 599)::INTEGER AS s5,
         -- -1: no row of the run has a time (imported without one); no capture or import is dated before 1970
         coalesce(min(ts), -1)::DOUBLE AS first_ts, coalesce(max(ts), -1)::DOUBLE AS last_ts,
         -- quantile_disc is the nearest rank: the value at rank ⌈q·n⌉ of the sorted non-null values (tested against a plain count)
         quantile_disc(cl, [0.5, 0.9]) AS q,
         array_to_string(list_transform(map_entries(histogram(lang) FILTER (WHERE lang IS NOT NULL AND ${noSep})), e -> e.key || chr(${LANG_FIELD}) || e.value), chr(${LANG_ITEM})) AS langs
       FROM (
         SELECT o.dataset_id, o.domain, ${host} AS host, floor(epoch(o.ts))::BIGINT AS ts, o.status, ${lang} AS lang, ${cl}::INTEGER AS cl
         FROM (${inputs.join(' UNION ALL ')}) o SEMI JOIN ${only} x ON x.dataset_id = o.dataset_id AND x.domain64 = o.domain64)
       GROUP BY dataset_id, domain)`,
  );
  await conn.run('DROP TABLE IF EXISTS facts_files');
}

/** The columns {@link factsRecordOf} reads, in order, after `domain`: select them from new_facts. */
export const FACTS_SELECT = 'hosts, s2, s3, s4, s5, first_ts, last_ts, cl_median, cl_p90, langs';

/** A record from one streamed row of new_facts ({@link FACTS_SELECT}'s values, in order). */
export function factsRecordOf(datasetId: number, v: readonly unknown[]): FactsRecord {
  const num = (x: unknown): number => Number(x as bigint | number);
  const orNull = (x: unknown): number | null => (x === null || x === undefined ? null : num(x));
  const langs = v[9] as string | null;
  return {
    datasetId, hosts: num(v[0]), status: [num(v[1]), num(v[2]), num(v[3]), num(v[4])], firstTs: num(v[5]), lastTs: num(v[6]),
    median: orNull(v[7]), p90: orNull(v[8]),
    languages: topLanguages(langs),
  };
}

/** The {@link MAX_LANGUAGES} most frequent of a `langs` histogram ({@link NEW_FACTS}), count descending then code. */
function topLanguages(langs: string | null): [string, number][] {
  if (langs === null || langs === '') return [];
  const all = langs.split(String.fromCharCode(LANG_ITEM)).map((item) => {
    const cut = item.lastIndexOf(String.fromCharCode(LANG_FIELD));
    return [item.slice(0, cut), Number(item.slice(cut + 1))] as [string, number];
  });
  return all.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, MAX_LANGUAGES);
}

/**
 * Checks a facts file's header (magic, format 1, `n` entries: its shard's domains) and that its offsets end where it
 * does; `lastOffset` is its final record offset. @throws IndexFormatError CCP_ERR_INDEX_FORMAT
 */
export function checkFactsFile(head: Buffer, size: number, lastOffset: number, n: number, k: number): void {
  if (head.length < 12 || head.readUInt32LE(0) !== FACTS_MAGIC || head.readUInt32LE(4) !== 1) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'bad index file header', { file: factsFileName(k) });
  if (head.readUInt32LE(8) !== n) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'a facts file does not hold its shard\'s domains', { shard: k, domains: head.readUInt32LE(8), expected: n });
  if (size < factsDataAt(n) || factsDataAt(n) + lastOffset !== size) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'facts file size mismatch', { shard: k });
}

/** Checks a resident facts file of a shard of `n` domains ({@link checkFactsFile}). */
export function checkFactsBuffer(b: Buffer, n: number, k: number): void {
  checkFactsFile(b, b.length, b.length >= factsDataAt(n) ? b.readUInt32LE(factsDataAt(n) - 4) : -1, n, k);
}

/** Entry j's records in a resident facts file (a view into it). @throws IndexFormatError when its offsets run backwards or past the file */
export function factsIn(b: Buffer, n: number, j: number): Buffer {
  const at = factsDataAt(n);
  const s = b.readUInt32LE(12 + 4 * j);
  const e = b.readUInt32LE(16 + 4 * j);
  if (e < s || at + e > b.length) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'facts offsets out of order');
  return b.subarray(at + s, at + e);
}
