import {
  CcpError,
  ExtractError,
  DEFAULT_QUALITY_CONFIG,
  applyQualityFilters,
  parseQualityThresholds,
  qualityConfigOf,
  canonicalizeUrl,
  textQuality,
  errorCode,
  linkTargets,
  newLinkCache,
  urlId,
  type BatchRecord,
  type LinkCache,
  type Config,
  type Extracted,
  type LinkTargets,
  type QualityConfig,
  type RangeReader,
  type TextQuality,
} from '@ccpipe/core';
import { checkRow, type PartQuality, type PartRow } from '@ccpipe/adapters';
import { readPage, type PageFacts } from './read-page';
import type { PageReader, PageResult } from './page-pool';

/** The quality step's settings: which filters run, and whether a dropped document is kept as a row (`dropped_by`). */
export interface QualityOptions {
  config: QualityConfig;
  keepDropped: boolean;
}

/**
 * The quality options a configuration asks for (--quality-filters, --quality-thresholds, --keep-dropped).
 * @throws QualityConfigError (CCP_ERR_QUALITY_CONFIG) naming every unknown filter or threshold and bad value
 */
export function qualityOptionsOf(config: Pick<Config, 'qualityFilters' | 'qualityThresholds' | 'keepDropped'>): QualityOptions {
  return { config: qualityConfigOf(config.qualityFilters, parseQualityThresholds(config.qualityThresholds)), keepDropped: config.keepDropped };
}

/** Every filter off: documents are only measured (language, signals). */
export const NO_QUALITY_FILTERS: QualityOptions = { config: DEFAULT_QUALITY_CONFIG, keepDropped: false };

/** The signals a part keeps, of a text's full set. */
export function partQualityOf(q: TextQuality): PartQuality {
  const s = q.signals;
  return {
    wordCount: s.word_count, meanWordLength: s.mean_word_length, symbolWordRatio: s.symbol_to_word_ratio, linePunctFraction: s.line_punct_fraction,
    dupLineFraction: s.dup_line_fraction, dupLineCharFraction: s.dup_line_char_fraction, top2gramCharFraction: s.top_2gram_char_fraction,
    dup5gramCharFraction: s.dup_5gram_char_fraction,
  };
}

const NO_LINKS: LinkTargets = { urls: [], domains: [], invalid: 0 };

/** Extracts main text from one HTML page; the pool enforces the time limit. */
export type Extractor = (html: string, url: string, signal?: AbortSignal) => Promise<Extracted>;

/** A record that could not be indexed (fully or partly), for the batch's failures file. */
export interface RecordFailure {
  /** Index of the record in the batch. */
  i: number;
  /** Stable error code (closed set; safe as a metric label). */
  reason: string;
  /** Where it failed: `row` is a value the part's schema cannot hold (an impossible timestamp, …). */
  stage: 'fetch' | 'warc' | 'url' | 'extract' | 'row';
  /** True when a row was still written (without text). */
  indexed: boolean;
  /**
   * True when the failure says nothing about the record, only about now (the server overloaded or unreachable after
   * every retry): the batch is retried instead of being completed without the record. Never written to the failures file.
   */
  transient?: boolean;
}

function failure(i: number, stage: RecordFailure['stage'], err: unknown, indexed = false): RecordFailure {
  return { i, stage, reason: errorCode(err), indexed };
}

/** A fetch that failed for now, not for good: a retryable read error (5xx/429 or network after every retry), or an unknown one. */
const transientFetch = (err: unknown): boolean => !(err instanceof CcpError) || err.retryable;

/**
 * Fetches, parses and extracts one capture (an error page, status ≥ 400, is not extracted: its row carries status and
 * size). Returns its row, and a failure when something went wrong: no row when
 * the record could not be read at all (fetch, WARC, URL) or holds a value the part cannot (row), a row without
 * title/text when only extraction failed. A fetch that failed for now is marked `transient`. An extracted text gets its
 * language and quality signals (from the extractor, else computed here) and goes through the enabled quality filters:
 * a document one drops has no row (`dropped` names the filter), or a row with `dropped_by` under `keepDropped`. Never
 * throws for bad input; rethrows an abort, and an extractor that cannot run at all (`CCP_ERR_EXTRACT_UNAVAILABLE`, `…_CLOSED`).
 */
export async function processRecord(
  rec: BatchRecord,
  i: number,
  ctx: {
    datasetId: number; reader: RangeReader; extract: Extractor; includeText: boolean; extractPages?: boolean; quality?: QualityOptions; signal?: AbortSignal;
    /** When set, a record's bytes go to an extraction thread whole (page-pool.ts) instead of being parsed and decoded here. */
    readPage?: PageReader;
    /** Outlinks canonicalized by earlier records of the batch (core LinkCache); default none shared. */
    links?: LinkCache;
  },
): Promise<{ row: PartRow | null; failure: RecordFailure | null; bytes: number; dropped?: string }> {
  let bytes: Uint8Array;
  try {
    bytes = await ctx.reader.read(rec.filename, rec.offset, rec.length, ctx.signal);
  } catch (err) {
    if (ctx.signal?.aborted) throw err;
    return { row: null, failure: { ...failure(i, 'fetch', err), ...(transientFetch(err) && { transient: true }) }, bytes: 0 };
  }
  let canon;
  try {
    canon = canonicalizeUrl(rec.url);
  } catch (err) {
    return { row: null, failure: failure(i, 'url', err), bytes: bytes.length };
  }
  const extractPages = ctx.extractPages !== false;
  let facts: PageFacts;
  let extracted: Extracted | null = null;
  let extractErr: unknown = null;
  let text: string | null = null;
  let charset: string | null = rec.charset ?? null;
  // extraction cannot run at all (its workers do not start, or the pool is closed): not this document's fault, and
  // completing the batch would leave every row without text for good; and an abort
  const stopsTheBatch = (err: unknown): boolean =>
    ctx.signal?.aborted === true || (err instanceof CcpError && (err.code === 'CCP_ERR_EXTRACT_UNAVAILABLE' || err.code === 'CCP_ERR_EXTRACT_CLOSED'));
  if (extractPages && ctx.readPage) {
    // on an extraction thread: gzip, WARC/HTTP, charset, extraction (page-thread.ts); only its yield comes back
    let r: PageResult | null = null;
    try {
      r = await ctx.readPage(bytes, rec, canon.url, ctx.signal);
    } catch (err) {
      if (stopsTheBatch(err)) throw err;
      extractErr = err; // the thread ran past the time limit or died: the row is made here, without text
    }
    if (r !== null && 'warc' in r) return { row: null, failure: { i, stage: 'warc', reason: r.warc, indexed: false }, bytes: bytes.length };
    if (r !== null) {
      facts = { ...r.facts, decoded: null };
      if (r.facts.charset !== null) charset = r.facts.charset;
      text = r.facts.text;
      extracted = r.extracted;
      if (r.extractError !== null) extractErr = new ExtractError(r.extractError.code, r.extractError.message, r.extractError.detail ? { detail: r.extractError.detail } : {});
    } else {
      try {
        facts = readPage(bytes, rec, true);
      } catch (err) {
        return { row: null, failure: failure(i, 'warc', err), bytes: bytes.length };
      }
      if (facts.decoded !== null) charset = facts.decoded.charset;
      if (facts.decoded === null || !facts.html) {
        // not a page the thread would have extracted: what failed was not extraction, and the record is whole here
        extractErr = null;
        text = facts.decoded?.text ?? null;
      }
    }
  } else {
    try {
      // with extraction off (--extract false) no payload is decoded: the row keeps keys, status, size and WARC location
      facts = readPage(bytes, rec, extractPages);
    } catch (err) {
      return { row: null, failure: failure(i, 'warc', err), bytes: bytes.length };
    }
    if (facts.decoded !== null) {
      charset = facts.decoded.charset;
      if (facts.html) {
        try {
          extracted = await ctx.extract(facts.decoded.text, canon.url, ctx.signal);
        } catch (err) {
          if (stopsTheBatch(err)) throw err;
          extractErr = err;
        }
      } else text = facts.decoded.text;
    }
  }
  const { status, mime } = facts;
  let title: string | null = null;
  let links: LinkTargets = NO_LINKS;
  let fail: RecordFailure | null = extractErr === null ? null : failure(i, 'extract', extractErr, true);
  let quality: TextQuality | null = null;
  let droppedBy: string | null = null;
  if (extracted !== null) {
    try {
      title = extracted.title;
      text = extracted.text;
      links = linkTargets(canon.url, extracted.outlinks, ctx.links ?? newLinkCache());
      quality = extracted.quality ?? textQuality(extracted.text);
      const q = ctx.quality ?? NO_QUALITY_FILTERS;
      const verdict = applyQualityFilters({ ...quality.signals, text_language: quality.text_language, text_language_confidence: quality.text_language_confidence }, q.config);
      if (!verdict.keep) {
        if (!q.keepDropped) return { row: null, failure: null, bytes: bytes.length, dropped: verdict.droppedBy };
        droppedBy = verdict.droppedBy;
      }
    } catch (err) {
      fail = failure(i, 'extract', err, true);
    }
  }
  const row: PartRow = {
    datasetId: ctx.datasetId,
    urlId: urlId(canon.url),
    url: canon.url,
    rawUrl: rec.url,
    host: canon.host,
    domain: canon.domain ?? canon.host,
    privateDomain: canon.privateDomain,
    surt: canon.surt,
    timestamp: rec.ts,
    status,
    mime,
    charset,
    languages: rec.languages.length > 0 ? rec.languages.join(',') : null,
    title,
    text: ctx.includeText ? text : null,
    contentLength: facts.payloadLength,
    outlinks: links.urls,
    outlinkDomains: links.domains,
    warcFilename: rec.filename,
    warcOffset: rec.offset,
    warcLength: rec.length,
    digest: rec.digest ?? '',
    textLanguage: quality?.text_language ?? null,
    textLanguageConfidence: quality?.text_language_confidence ?? null,
    quality: quality === null ? null : partQualityOf(quality),
    droppedBy,
  };
  try {
    checkRow(row, i); // here, so one impossible value (a 14-digit timestamp that is no date) fails its record, not the part
  } catch (err) {
    return { row: null, failure: failure(i, 'row', err), bytes: bytes.length };
  }
  return { row, failure: fail, bytes: bytes.length, ...(droppedBy !== null && { dropped: droppedBy }) };
}
