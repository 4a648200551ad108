import { francAll } from 'franc-min';
import { visibleTextBlocks } from './visible-text';

/** Tuning of {@link detectLanguages}; the defaults are what `buildMirror` uses and docs/mirror.md reports. */
export interface LanguageDetectionOptions {
  /** Consecutive text blocks are joined into chunks of at least this many characters before detection. */
  chunkChars?: number;
  /** Below this many characters of classified text, no language is claimed. */
  minTotalChars?: number;
  /** The primary language must cover at least this share of the classified text. */
  minPrimaryShare?: number;
  /** Another language is listed when it covers at least this share. */
  minSecondaryShare?: number;
  /** How many languages to list at most (CC lists up to 3). */
  maxLanguages?: number;
  /** At most this many chunks, spread evenly over the page, are classified (bounds the cost per page). */
  maxChunks?: number;
}

const DEFAULTS: Required<LanguageDetectionOptions> = {
  chunkChars: 600,
  minTotalChars: 200,
  minPrimaryShare: 0.5,
  minSecondaryShare: 0.2,
  maxLanguages: 3,
  maxChunks: 6,
};

/** Chunks shorter than this are too short for trigram identification and are skipped. */
const MIN_CHUNK_CHARS = 60;

/**
 * Identifies the languages of an HTML page's visible text, like the CDX `languages` field: ISO-639-3
 * codes, primary first, at most 3 — or `undefined` when not confident (too little text, or no language
 * covering `minPrimaryShare`). CC uses CLD2, which scores languages by the share of text bytes in each;
 * here the visible text is cut into chunks of ~`chunkChars` along block boundaries, each chunk is
 * classified with franc-min (trigrams; the 82 languages with ≥ 8M speakers), and languages are ranked
 * by the share of characters they won. Pure and deterministic; never throws.
 */
export function detectLanguages(html: string, options: LanguageDetectionOptions = {}): string[] | undefined {
  return rankLanguages(textChunks(visibleTextBlocks(html), options.chunkChars ?? DEFAULTS.chunkChars), options);
}

/** Joins blocks into chunks of at least `chunkChars` characters (the last one may be shorter). */
export function textChunks(blocks: string[], chunkChars: number): string[] {
  const chunks: string[] = [];
  let cur = '';
  for (const b of blocks) {
    cur = cur === '' ? b : `${cur} ${b}`;
    if (cur.length >= chunkChars) {
      chunks.push(cur);
      cur = '';
    }
  }
  if (cur !== '') chunks.push(cur);
  return chunks;
}

/** Classifies each chunk and ranks languages by the characters they cover; see {@link detectLanguages}. */
export function rankLanguages(chunks: string[], options: LanguageDetectionOptions = {}): string[] | undefined {
  const o = { ...DEFAULTS, ...options };
  const chars = new Map<string, number>();
  let total = 0;
  for (const chunk of spread(chunks, o.maxChunks)) {
    if (chunk.length < MIN_CHUNK_CHARS) continue;
    const best = francAll(chunk, { minLength: MIN_CHUNK_CHARS })[0];
    if (best === undefined || best[0] === 'und') continue;
    chars.set(best[0], (chars.get(best[0]) ?? 0) + chunk.length);
    total += chunk.length;
  }
  if (total < o.minTotalChars) return undefined;
  const ranked = [...chars.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const primary = ranked[0];
  if (primary === undefined || primary[1] / total < o.minPrimaryShare) return undefined;
  return ranked
    .filter(([, n], i) => i === 0 || n / total >= o.minSecondaryShare)
    .slice(0, o.maxLanguages)
    .map(([code]) => code);
}

/** Up to `max` items taken at even strides, first and last included. */
function spread<T>(items: T[], max: number): T[] {
  if (items.length <= max) return items;
  if (max <= 1) return items.slice(0, 1);
  const out: T[] = [];
  for (let i = 0; i < max; i++) out.push(items[Math.round((i * (items.length - 1)) / (max - 1))] as T);
  return out;
}
