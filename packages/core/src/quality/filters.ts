import { CcpError } from '../errors';
import { isLanguageCode } from '../filter/language-codes';
import type { QualitySignals } from './signals';

/**
 * The document filters, in the order {@link applyQualityFilters} tries them — FineWeb's order (datatrove
 * examples/fineweb.py): language, Gopher repetition, Gopher quality, C4, FineWeb.
 */
export const QUALITY_FILTER_NAMES = [
  'language',
  'duplicate-lines',
  'top-ngrams',
  'duplicate-ngrams',
  'min-words',
  'max-words',
  'mean-word-length',
  'symbol-ratio',
  'bullet-lines',
  'ellipsis-lines',
  'alpha-words',
  'stop-words',
  'lorem-ipsum',
  'curly-bracket',
  'min-sentences',
  'line-punctuation',
  'short-lines',
  'duplicate-line-chars',
  'list-lines',
] as const;

export type QualityFilterName = (typeof QUALITY_FILTER_NAMES)[number];

/** The thresholds of the filters; defaults in {@link DEFAULT_QUALITY_CONFIG}, sources in {@link QUALITY_FILTERS}. */
export interface QualityThresholds {
  /** Languages kept by `language` (ISO 639-3, as `text_language`); empty: any language. */
  languages: readonly string[];
  minLanguageConfidence: number;
  maxDupLineFraction: number;
  maxDupLineCharFraction: number;
  /** For n = 2, 3, 4. */
  maxTopNgramCharFractions: readonly [number, number, number];
  /** For n = 5..10. */
  maxDupNgramCharFractions: readonly [number, number, number, number, number, number];
  minWords: number;
  maxWords: number;
  minMeanWordLength: number;
  maxMeanWordLength: number;
  maxSymbolWordRatio: number;
  maxBulletLineFraction: number;
  maxEllipsisLineFraction: number;
  minAlphaWordFraction: number;
  minStopWords: number;
  minSentences: number;
  minLinePunctFraction: number;
  maxShortLineFraction: number;
  maxLineCharDuplicates: number;
  maxNewlineWordRatio: number;
}

/** Which filters run, and their thresholds. */
export interface QualityConfig extends QualityThresholds {
  enabled: ReadonlySet<QualityFilterName>;
}

/** What the filters read: the signals, and the text's language when it was identified. */
export type QualityInput = QualitySignals & { text_language?: string | null; text_language_confidence?: number | null };

/** One threshold's command-line face. */
export interface QualityParamSpec {
  key: keyof QualityThresholds;
  /** e.g. `--min-words`; takes a value. */
  flag: string;
  kind: 'number' | 'numbers' | 'languages';
  description: string;
}

/** One filter: what a CLI needs for its flags and `--help`, and the rule itself. */
export interface QualityFilterSpec {
  name: QualityFilterName;
  /** The flag that turns the filter on, e.g. `--filter-min-words`. */
  flag: string;
  params: readonly QualityParamSpec[];
  /** Where the rule and its default come from. */
  source: string;
  /** What it drops, with the defaults, in one line. */
  description: string;
  /** True when the document is dropped. */
  drops(s: QualityInput, c: QualityThresholds): boolean;
}

const GOPHER = 'Gopher: Rae et al. 2021, "Scaling Language Models", appendix A.1.1 / table A1; datatrove';
const C4 = 'C4: Raffel et al. 2020, section 2.2; datatrove C4QualityFilter (as FineWeb runs it)';
const FINEWEB = 'FineWeb: datatrove FineWebQualityFilter defaults (Penedo et al. 2024)';

const param = (key: keyof QualityThresholds, flag: string, description: string, kind: QualityParamSpec['kind'] = 'number'): QualityParamSpec => ({
  key,
  flag,
  kind,
  description,
});

/** Every filter, in {@link QUALITY_FILTER_NAMES} order. */
export const QUALITY_FILTERS: readonly QualityFilterSpec[] = [
  {
    name: 'language',
    flag: '--filter-language',
    params: [
      param('languages', '--text-languages', 'languages kept, ISO 639-3, comma-separated (empty: any)', 'languages'),
      param('minLanguageConfidence', '--min-language-confidence', 'lowest text_language_confidence kept'),
    ],
    source: 'datatrove LanguageFilter (threshold 0.65 on fastText\'s score; here on text_language_confidence, a share of right answers)',
    description: 'drops a text whose language is unknown, not in --text-languages, or identified with confidence below 0.65',
    drops: (s, c) =>
      s.text_language == null ||
      (c.languages.length > 0 && !c.languages.includes(s.text_language)) ||
      (s.text_language_confidence ?? 0) < c.minLanguageConfidence,
  },
  {
    name: 'duplicate-lines',
    flag: '--filter-duplicate-lines',
    params: [
      param('maxDupLineFraction', '--max-dup-line-fraction', 'largest share of lines repeating an earlier line'),
      param('maxDupLineCharFraction', '--max-dup-line-char-fraction', 'largest share of characters in repeated lines'),
    ],
    source: GOPHER,
    description: 'drops a text whose repeated lines are > 30% of its lines or > 20% of its characters',
    drops: (s, c) => s.dup_line_fraction > c.maxDupLineFraction || s.dup_line_char_fraction > c.maxDupLineCharFraction,
  },
  {
    name: 'top-ngrams',
    flag: '--filter-top-ngrams',
    params: [param('maxTopNgramCharFractions', '--max-top-ngram-fractions', 'for n = 2,3,4: largest share of word characters in the most frequent n-gram', 'numbers')],
    source: GOPHER,
    description: 'drops a text whose most frequent 2/3/4-gram covers > 20/18/16% of its word characters',
    drops: (s, c) =>
      s.top_2gram_char_fraction > c.maxTopNgramCharFractions[0] ||
      s.top_3gram_char_fraction > c.maxTopNgramCharFractions[1] ||
      s.top_4gram_char_fraction > c.maxTopNgramCharFractions[2],
  },
  {
    name: 'duplicate-ngrams',
    flag: '--filter-duplicate-ngrams',
    params: [param('maxDupNgramCharFractions', '--max-dup-ngram-fractions', 'for n = 5..10: largest share of word characters in repeated n-grams', 'numbers')],
    source: GOPHER,
    description: 'drops a text whose repeated 5..10-grams cover > 15, 14, 13, 12, 11, 10% of its word characters',
    drops: (s, c) => {
      const f = [s.dup_5gram_char_fraction, s.dup_6gram_char_fraction, s.dup_7gram_char_fraction, s.dup_8gram_char_fraction, s.dup_9gram_char_fraction, s.dup_10gram_char_fraction];
      return f.some((x, i) => x > c.maxDupNgramCharFractions[i]!);
    },
  },
  {
    name: 'min-words',
    flag: '--filter-min-words',
    params: [param('minWords', '--min-words', 'fewest words kept')],
    source: GOPHER,
    description: 'drops a text of fewer than 50 words',
    drops: (s, c) => s.word_count < c.minWords,
  },
  {
    name: 'max-words',
    flag: '--filter-max-words',
    params: [param('maxWords', '--max-words', 'most words kept')],
    source: GOPHER,
    description: 'drops a text of more than 100,000 words',
    drops: (s, c) => s.word_count > c.maxWords,
  },
  {
    name: 'mean-word-length',
    flag: '--filter-mean-word-length',
    params: [
      param('minMeanWordLength', '--min-mean-word-length', 'shortest mean word length kept'),
      param('maxMeanWordLength', '--max-mean-word-length', 'longest mean word length kept'),
    ],
    source: GOPHER,
    description: 'drops a text whose mean word length is outside 3–10 characters (Chinese, Japanese, Thai: always outside)',
    drops: (s, c) => s.mean_word_length < c.minMeanWordLength || s.mean_word_length > c.maxMeanWordLength,
  },
  {
    name: 'symbol-ratio',
    flag: '--filter-symbol-ratio',
    params: [param('maxSymbolWordRatio', '--max-symbol-word-ratio', 'most `#` or ellipses per word')],
    source: GOPHER,
    description: 'drops a text with more than 0.1 `#` or ellipses per word',
    drops: (s, c) => s.symbol_to_word_ratio > c.maxSymbolWordRatio,
  },
  {
    name: 'bullet-lines',
    flag: '--filter-bullet-lines',
    params: [param('maxBulletLineFraction', '--max-bullet-lines', 'largest share of lines starting with a bullet')],
    source: GOPHER,
    description: 'drops a text of which more than 90% of lines start with a bullet',
    drops: (s, c) => s.bullet_line_fraction > c.maxBulletLineFraction,
  },
  {
    name: 'ellipsis-lines',
    flag: '--filter-ellipsis-lines',
    params: [param('maxEllipsisLineFraction', '--max-ellipsis-lines', 'largest share of lines ending in an ellipsis')],
    source: GOPHER,
    description: 'drops a text of which more than 30% of lines end in an ellipsis',
    drops: (s, c) => s.ellipsis_line_fraction > c.maxEllipsisLineFraction,
  },
  {
    name: 'alpha-words',
    flag: '--filter-alpha-words',
    params: [param('minAlphaWordFraction', '--min-alpha-words', 'smallest share of tokens holding a letter')],
    source: GOPHER,
    description: 'drops a text of which fewer than 80% of tokens hold a letter',
    drops: (s, c) => s.alpha_word_fraction < c.minAlphaWordFraction,
  },
  {
    name: 'stop-words',
    flag: '--filter-stop-words',
    params: [param('minStopWords', '--min-stop-words', 'fewest English stop words kept')],
    source: GOPHER,
    description: 'drops a text with fewer than 2 of the, be, to, of, and, that, have, with (English only: drops other languages)',
    drops: (s, c) => s.stop_word_count < c.minStopWords,
  },
  {
    name: 'lorem-ipsum',
    flag: '--filter-lorem-ipsum',
    params: [],
    source: C4,
    description: 'drops a text with a line containing "lorem ipsum"',
    drops: (s) => s.lorem_ipsum_lines > 0,
  },
  {
    name: 'curly-bracket',
    flag: '--filter-curly-bracket',
    params: [],
    source: C4,
    description: 'drops a text containing `{` (code, templates)',
    drops: (s) => s.curly_bracket_lines > 0,
  },
  {
    name: 'min-sentences',
    flag: '--filter-min-sentences',
    params: [param('minSentences', '--min-sentences', 'fewest sentences kept, counted in the lines C4 keeps')],
    source: C4,
    description: 'drops a text with fewer than 5 sentences in lines of ≥ 3 words without javascript or policy phrases',
    drops: (s, c) => s.c4_sentence_count < c.minSentences,
  },
  {
    name: 'line-punctuation',
    flag: '--filter-line-punctuation',
    params: [param('minLinePunctFraction', '--min-line-punctuation', 'a text at or below this share of lines ending in terminal punctuation is dropped')],
    source: FINEWEB,
    description: 'drops a text of which at most 12% of lines end in terminal punctuation',
    drops: (s, c) => s.line_punct_fraction <= c.minLinePunctFraction,
  },
  {
    name: 'short-lines',
    flag: '--filter-short-lines',
    params: [param('maxShortLineFraction', '--max-short-lines', 'a text at or above this share of lines of ≤ 30 characters is dropped')],
    source: FINEWEB,
    description: 'drops a text of which at least 67% of lines have ≤ 30 characters',
    drops: (s, c) => s.short_line_fraction >= c.maxShortLineFraction,
  },
  {
    name: 'duplicate-line-chars',
    flag: '--filter-duplicate-line-chars',
    params: [param('maxLineCharDuplicates', '--max-line-char-duplicates', 'a text at or above this share of characters in repeated lines is dropped')],
    source: FINEWEB,
    description: 'drops a text of which at least 1% of characters are in lines repeating an earlier line',
    drops: (s, c) => s.dup_line_char_fraction >= c.maxLineCharDuplicates,
  },
  {
    name: 'list-lines',
    flag: '--filter-list-lines',
    params: [param('maxNewlineWordRatio', '--max-newline-word-ratio', 'most line breaks per word')],
    source: FINEWEB,
    description: 'drops a text with more than 0.3 line breaks per word (a list)',
    drops: (s, c) => s.newline_to_word_ratio > c.maxNewlineWordRatio,
  },
];

/** Every filter off; thresholds at the published defaults (see {@link QUALITY_FILTERS} for each source). */
export const DEFAULT_QUALITY_CONFIG: QualityConfig = Object.freeze({
  enabled: new Set<QualityFilterName>(),
  languages: [],
  minLanguageConfidence: 0.65,
  maxDupLineFraction: 0.3,
  maxDupLineCharFraction: 0.2,
  maxTopNgramCharFractions: [0.2, 0.18, 0.16],
  maxDupNgramCharFractions: [0.15, 0.14, 0.13, 0.12, 0.11, 0.1],
  minWords: 50,
  maxWords: 100_000,
  minMeanWordLength: 3,
  maxMeanWordLength: 10,
  maxSymbolWordRatio: 0.1,
  maxBulletLineFraction: 0.9,
  maxEllipsisLineFraction: 0.3,
  minAlphaWordFraction: 0.8,
  minStopWords: 2,
  minSentences: 5,
  minLinePunctFraction: 0.12,
  maxShortLineFraction: 0.67,
  maxLineCharDuplicates: 0.01,
  maxNewlineWordRatio: 0.3,
} as const satisfies QualityConfig);

/** The verdict of {@link applyQualityFilters}. */
export type QualityVerdict = { keep: true; droppedBy: null } | { keep: false; droppedBy: QualityFilterName };

/**
 * Runs the enabled filters on one document in {@link QUALITY_FILTER_NAMES} order and stops at the first that drops it;
 * the caller counts drops by `droppedBy`. With no filter enabled every document is kept. Pure.
 */
export function applyQualityFilters(input: QualityInput, config: QualityConfig): QualityVerdict {
  if (config.enabled.size === 0) return { keep: true, droppedBy: null };
  for (const f of QUALITY_FILTERS) {
    if (config.enabled.has(f.name) && f.drops(input, config)) return { keep: false, droppedBy: f.name };
  }
  return { keep: true, droppedBy: null };
}

/** A quality filter configuration that cannot work: an unknown filter name, a threshold out of range. */
export class QualityConfigError extends CcpError {
  constructor(message: string, detail: Record<string, unknown>) {
    super('CCP_ERR_QUALITY_CONFIG', message, { retryable: false, detail });
  }
}

/** Thresholds that are shares of something, so must lie in [0, 1]. */
const FRACTIONS = new Set<keyof QualityThresholds>([
  'minLanguageConfidence', 'maxDupLineFraction', 'maxDupLineCharFraction', 'maxTopNgramCharFractions', 'maxDupNgramCharFractions',
  'maxBulletLineFraction', 'maxEllipsisLineFraction', 'minAlphaWordFraction', 'minLinePunctFraction', 'maxShortLineFraction',
  'maxLineCharDuplicates',
]);

/**
 * A {@link QualityConfig}: `enable` names the filters to run (any order), `thresholds` overrides defaults. Checks
 * everything and reports every problem at once.
 * @throws QualityConfigError (`CCP_ERR_QUALITY_CONFIG`) on an unknown filter name, a negative or non-finite threshold,
 *   a share outside [0, 1], a list of the wrong length, min above max, or a language that is no ISO 639-3 code.
 */
export function qualityConfig(opts: { enable?: Iterable<string>; thresholds?: Partial<QualityThresholds> } = {}): QualityConfig {
  const problems: string[] = [];
  const enabled = new Set<QualityFilterName>();
  for (const name of opts.enable ?? []) {
    if ((QUALITY_FILTER_NAMES as readonly string[]).includes(name)) enabled.add(name as QualityFilterName);
    else problems.push(`unknown quality filter "${name}" (known: ${QUALITY_FILTER_NAMES.join(', ')})`);
  }
  const config: QualityConfig = { ...DEFAULT_QUALITY_CONFIG, ...opts.thresholds, enabled };
  for (const [key, value] of Object.entries(opts.thresholds ?? {}) as Array<[keyof QualityThresholds, unknown]>) {
    if (key === 'languages') {
      if (!Array.isArray(value)) problems.push('languages must be a list of ISO 639-3 codes');
      else for (const l of value) if (typeof l !== 'string' || !isLanguageCode(l)) problems.push(`language "${String(l)}" is not an ISO 639-3 code (eng, deu, zho, ...)`);
      continue;
    }
    const defaults = DEFAULT_QUALITY_CONFIG[key];
    const values = Array.isArray(value) ? value : [value];
    if (Array.isArray(defaults) !== Array.isArray(value) || (Array.isArray(defaults) && values.length !== defaults.length)) {
      problems.push(`${key} must be ${Array.isArray(defaults) ? `a list of ${defaults.length} numbers` : 'a number'}`);
      continue;
    }
    for (const v of values) {
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) problems.push(`${key} must be a finite number ≥ 0 (got ${String(v)})`);
      else if (FRACTIONS.has(key) && v > 1) problems.push(`${key} is a share and must be ≤ 1 (got ${v})`);
    }
  }
  if (config.minWords > config.maxWords) problems.push(`minWords (${config.minWords}) is above maxWords (${config.maxWords})`);
  if (config.minMeanWordLength > config.maxMeanWordLength) {
    problems.push(`minMeanWordLength (${config.minMeanWordLength}) is above maxMeanWordLength (${config.maxMeanWordLength})`);
  }
  if (problems.length > 0) throw new QualityConfigError(problems.join('; '), { problems });
  return config;
}
