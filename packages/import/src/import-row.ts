import { canonicalizeUrl, cdxTimestampOfMs, extrasJson, parseImportTimestamp, parseStatus, textQuality, urlId } from '@ccpipe/core';
import { partQualityOf } from '@ccpipe/worker';
import type { PartRow } from '@ccpipe/adapters';
import type { RowValues } from './import-source';

/** Why a row was rejected: a closed set (counted by reason in the summary, the batch marker and `ccpipe status`). */
export const REJECT_REASONS = ['bad-record', 'not-utf8', 'no-url', 'bad-url', 'bad-ts', 'bad-status', 'extras-too-large'] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/** What one input row became: a part row, or a rejection with its reason and a message that says what was wrong. */
export type ImportedRow = { row: PartRow } | { reason: RejectReason; message: string };

/** A scheme at the start of a URL (`http:`, `mailto:`); without one an import takes the text as `http://` + it. */
const HAS_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

const asText = (v: unknown): string | null => {
  if (v === undefined || v === null) return null;
  const s = typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
  return s.length === 0 ? null : s;
};

/**
 * The part row of one imported input row, keyed as a worker keys a capture (canonical URL, registered domain, SURT,
 * url_id): `ts` (ISO 8601, 14-digit CDX, epoch s/ms; missing allowed), `status` (100–599; missing allowed), title and
 * text as given, every other column as `extras` JSON. A URL without a scheme (`example.com/a`) is read as `http://`
 * + it. A text gets its language and quality signals (as the worker's extracted texts do). Columns an import has no value for are null (`content_length`, `ts`, `status`) or empty (mime, WARC
 * location, digest, outlinks); `warc_offset` holds `order`, the row's place in the import's input (all files in turn),
 * so among rows of one URL without a time the merge keeps the later one in the input. Pure.
 */
export function importRow(v: RowValues, ctx: { datasetId: number; order: number; includeText: boolean }): ImportedRow {
  const raw = asText(v.url)?.trim() ?? null;
  if (raw === null) return { reason: 'no-url', message: 'the url column is empty or missing' };
  let canon;
  try {
    canon = canonicalizeUrl(HAS_SCHEME.test(raw) ? raw : `http://${raw}`);
  } catch (err) {
    return { reason: 'bad-url', message: (err as Error).message };
  }
  const ts = parseImportTimestamp(typeof v.ts === 'string' ? v.ts.trim() : v.ts);
  if ('error' in ts) return { reason: 'bad-ts', message: ts.error };
  const status = parseStatus(v.status);
  if ('error' in status) return { reason: 'bad-status', message: status.error };
  const extras = extrasJson(v.extras);
  if ('error' in extras) return { reason: 'extras-too-large', message: extras.error };
  const text = asText(v.text);
  // a row that carries text gets its language and signals as an extracted page does (no filter runs on an import)
  const quality = text === null ? null : textQuality(text);
  return {
    row: {
      datasetId: ctx.datasetId,
      urlId: urlId(canon.url),
      url: canon.url,
      rawUrl: raw,
      host: canon.host,
      domain: canon.domain ?? canon.host,
      privateDomain: canon.privateDomain,
      surt: canon.surt,
      timestamp: 'ms' in ts ? cdxTimestampOfMs(ts.ms) : null,
      ...('ms' in ts && { timestampMs: Math.floor(ts.ms / 1000) * 1000 }),
      status: 'status' in status ? status.status : null,
      mime: '',
      charset: null,
      languages: null,
      title: asText(v.title),
      text: ctx.includeText ? text : null,
      contentLength: null,
      outlinks: [],
      outlinkDomains: [],
      warcFilename: '',
      warcOffset: ctx.order,
      warcLength: 0,
      digest: '',
      extras: extras.json,
      textLanguage: quality?.text_language ?? null,
      textLanguageConfidence: quality?.text_language_confidence ?? null,
      quality: quality === null ? null : partQualityOf(quality),
    },
  };
}
