import { hasCode } from '../errors';
import { assessQuality } from './assess-quality';
import {
  applyQualityFilters,
  DEFAULT_QUALITY_CONFIG,
  qualityConfig,
  QUALITY_FILTER_NAMES,
  QUALITY_FILTERS,
  type QualityFilterName,
  type QualityInput,
} from './filters';

/** A document every filter keeps. */
const CLEAN: QualityInput = {
  char_count: 6000,
  line_count: 20,
  word_count: 1000,
  mean_word_length: 5,
  symbol_to_word_ratio: 0,
  alpha_word_fraction: 0.95,
  stop_word_count: 40,
  line_punct_fraction: 0.8,
  short_line_fraction: 0.1,
  bullet_line_fraction: 0,
  ellipsis_line_fraction: 0,
  dup_line_fraction: 0,
  dup_line_char_fraction: 0,
  newline_to_word_ratio: 0.02,
  top_2gram_char_fraction: 0.01,
  top_3gram_char_fraction: 0.01,
  top_4gram_char_fraction: 0.01,
  dup_5gram_char_fraction: 0,
  dup_6gram_char_fraction: 0,
  dup_7gram_char_fraction: 0,
  dup_8gram_char_fraction: 0,
  dup_9gram_char_fraction: 0,
  dup_10gram_char_fraction: 0,
  lorem_ipsum_lines: 0,
  javascript_lines: 0,
  policy_lines: 0,
  curly_bracket_lines: 0,
  c4_sentence_count: 40,
  text_language: 'eng',
  text_language_confidence: 0.99,
};

const only = (name: QualityFilterName) => ({ ...DEFAULT_QUALITY_CONFIG, enabled: new Set([name]) });
const verdict = (name: QualityFilterName, patch: Partial<QualityInput>) => applyQualityFilters({ ...CLEAN, ...patch }, only(name)).droppedBy;

describe('applyQualityFilters at and around each default threshold', () => {
  // [filter, kept at the threshold, dropped just past it]
  const cases: Array<[QualityFilterName, Partial<QualityInput>, Partial<QualityInput>]> = [
    ['min-words', { word_count: 50 }, { word_count: 49 }],
    ['max-words', { word_count: 100_000 }, { word_count: 100_001 }],
    ['mean-word-length', { mean_word_length: 3 }, { mean_word_length: 2.999 }],
    ['mean-word-length', { mean_word_length: 10 }, { mean_word_length: 10.001 }],
    ['symbol-ratio', { symbol_to_word_ratio: 0.1 }, { symbol_to_word_ratio: 0.1001 }],
    ['bullet-lines', { bullet_line_fraction: 0.9 }, { bullet_line_fraction: 0.9001 }],
    ['ellipsis-lines', { ellipsis_line_fraction: 0.3 }, { ellipsis_line_fraction: 0.3001 }],
    ['alpha-words', { alpha_word_fraction: 0.8 }, { alpha_word_fraction: 0.7999 }],
    ['stop-words', { stop_word_count: 2 }, { stop_word_count: 1 }],
    ['duplicate-lines', { dup_line_fraction: 0.3 }, { dup_line_fraction: 0.3001 }],
    ['duplicate-lines', { dup_line_char_fraction: 0.2 }, { dup_line_char_fraction: 0.2001 }],
    ['top-ngrams', { top_2gram_char_fraction: 0.2 }, { top_2gram_char_fraction: 0.2001 }],
    ['top-ngrams', { top_3gram_char_fraction: 0.18 }, { top_3gram_char_fraction: 0.1801 }],
    ['top-ngrams', { top_4gram_char_fraction: 0.16 }, { top_4gram_char_fraction: 0.1601 }],
    ['duplicate-ngrams', { dup_5gram_char_fraction: 0.15 }, { dup_5gram_char_fraction: 0.1501 }],
    ['duplicate-ngrams', { dup_6gram_char_fraction: 0.14 }, { dup_6gram_char_fraction: 0.1401 }],
    ['duplicate-ngrams', { dup_7gram_char_fraction: 0.13 }, { dup_7gram_char_fraction: 0.1301 }],
    ['duplicate-ngrams', { dup_8gram_char_fraction: 0.12 }, { dup_8gram_char_fraction: 0.1201 }],
    ['duplicate-ngrams', { dup_9gram_char_fraction: 0.11 }, { dup_9gram_char_fraction: 0.1101 }],
    ['duplicate-ngrams', { dup_10gram_char_fraction: 0.1 }, { dup_10gram_char_fraction: 0.1001 }],
    ['lorem-ipsum', { lorem_ipsum_lines: 0 }, { lorem_ipsum_lines: 1 }],
    ['curly-bracket', { curly_bracket_lines: 0 }, { curly_bracket_lines: 1 }],
    ['min-sentences', { c4_sentence_count: 5 }, { c4_sentence_count: 4 }],
    // FineWeb's own comparisons: ≤ and ≥ drop at the threshold itself
    ['line-punctuation', { line_punct_fraction: 0.1201 }, { line_punct_fraction: 0.12 }],
    ['short-lines', { short_line_fraction: 0.6699 }, { short_line_fraction: 0.67 }],
    ['duplicate-line-chars', { dup_line_char_fraction: 0.0099 }, { dup_line_char_fraction: 0.01 }],
    ['list-lines', { newline_to_word_ratio: 0.3 }, { newline_to_word_ratio: 0.3001 }],
    ['language', { text_language_confidence: 0.65 }, { text_language_confidence: 0.6499 }],
    ['language', { text_language: 'deu' }, { text_language: null, text_language_confidence: null }],
  ];
  it.each(cases)('%s keeps %j and drops %j', (name, kept, dropped) => {
    expect(verdict(name, kept)).toBeNull();
    expect(verdict(name, dropped)).toBe(name);
    // Off, the same document is kept.
    expect(applyQualityFilters({ ...CLEAN, ...dropped }, DEFAULT_QUALITY_CONFIG)).toEqual({ keep: true, droppedBy: null });
  });

  it('language: only the listed languages when some are', () => {
    const config = { ...only('language'), languages: ['deu', 'fra'] };
    expect(applyQualityFilters({ ...CLEAN, text_language: 'deu' }, config).droppedBy).toBeNull();
    expect(applyQualityFilters({ ...CLEAN, text_language: 'eng' }, config).droppedBy).toBe('language');
  });

  it('a clean document passes every filter', () => {
    expect(applyQualityFilters(CLEAN, { ...DEFAULT_QUALITY_CONFIG, enabled: new Set(QUALITY_FILTER_NAMES) })).toEqual({ keep: true, droppedBy: null });
  });

  it('names the first failing filter in the documented order', () => {
    const bad = { ...CLEAN, word_count: 10, dup_line_fraction: 0.5, lorem_ipsum_lines: 1 };
    const all = { ...DEFAULT_QUALITY_CONFIG, enabled: new Set(QUALITY_FILTER_NAMES) };
    expect(applyQualityFilters(bad, all)).toEqual({ keep: false, droppedBy: 'duplicate-lines' });
    expect(applyQualityFilters(bad, { ...all, enabled: new Set<QualityFilterName>(['lorem-ipsum', 'min-words']) }).droppedBy).toBe('min-words');
  });
});

describe('QUALITY_FILTERS', () => {
  it('lists every filter once, in the order applied, each with its flag, source and defaults', () => {
    expect(QUALITY_FILTERS.map((f) => f.name)).toEqual([...QUALITY_FILTER_NAMES]);
    const flags = QUALITY_FILTERS.flatMap((f) => [f.flag, ...f.params.map((p) => p.flag)]);
    expect(new Set(flags).size).toBe(flags.length);
    for (const f of QUALITY_FILTERS) {
      expect(f.flag).toBe(`--filter-${f.name}`);
      expect(f.source).not.toBe('');
      expect(f.description).not.toBe('');
      for (const p of f.params) {
        expect(p.flag).toMatch(/^--[a-z0-9-]+$/);
        expect(DEFAULT_QUALITY_CONFIG[p.key]).toBeDefined();
      }
    }
  });

  it('filters are off by default, with the published thresholds', () => {
    expect(DEFAULT_QUALITY_CONFIG.enabled.size).toBe(0);
    expect(DEFAULT_QUALITY_CONFIG).toMatchObject({
      minWords: 50,
      maxWords: 100_000,
      minMeanWordLength: 3,
      maxMeanWordLength: 10,
      maxSymbolWordRatio: 0.1,
      maxBulletLineFraction: 0.9,
      maxEllipsisLineFraction: 0.3,
      minAlphaWordFraction: 0.8,
      minStopWords: 2,
      maxDupLineFraction: 0.3,
      maxDupLineCharFraction: 0.2,
      maxTopNgramCharFractions: [0.2, 0.18, 0.16],
      maxDupNgramCharFractions: [0.15, 0.14, 0.13, 0.12, 0.11, 0.1],
      minSentences: 5,
      minLinePunctFraction: 0.12,
      maxShortLineFraction: 0.67,
      maxLineCharDuplicates: 0.01,
      maxNewlineWordRatio: 0.3,
      minLanguageConfidence: 0.65,
    });
  });
});

describe('qualityConfig', () => {
  it('enables the named filters and overrides thresholds', () => {
    const c = qualityConfig({ enable: ['min-words', 'lorem-ipsum'], thresholds: { minWords: 100, languages: ['deu'] } });
    expect([...c.enabled].sort()).toEqual(['lorem-ipsum', 'min-words']);
    expect(c.minWords).toBe(100);
    expect(c.maxWords).toBe(100_000);
    expect(c.languages).toEqual(['deu']);
    expect(qualityConfig()).toEqual(DEFAULT_QUALITY_CONFIG);
  });

  it('reports every problem at once', () => {
    let caught: unknown;
    try {
      qualityConfig({
        enable: ['min-words', 'no-such-filter'],
        thresholds: { minWords: -1, maxBulletLineFraction: 1.5, maxTopNgramCharFractions: [0.1, 0.2] as never, languages: ['en', 'deu'], minMeanWordLength: 12 },
      });
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'CCP_ERR_QUALITY_CONFIG')).toBe(true);
    const msg = (caught as Error).message;
    expect(msg).toContain('unknown quality filter "no-such-filter"');
    expect(msg).toContain('minWords must be a finite number ≥ 0');
    expect(msg).toContain('maxBulletLineFraction is a share and must be ≤ 1');
    expect(msg).toContain('maxTopNgramCharFractions must be a list of 3 numbers');
    expect(msg).toContain('language "en" is not an ISO 639-3 code');
    expect(msg).toContain('minMeanWordLength (12) is above maxMeanWordLength (10)');
  });
});

describe('assessQuality', () => {
  const text = [
    'The council approved the new budget for the city library on Tuesday evening after a long debate.',
    'Members agreed that the reading rooms will stay open later during the winter months.',
    'The plan also sets aside money for new books in the languages spoken in the city.',
  ].join('\n');

  it('stores the language, its confidence and the signals; keeps everything with no filter on', () => {
    const a = assessQuality(text);
    expect(a.text_language).toBe('eng');
    expect(a.text_language_confidence).toBeGreaterThan(0.98);
    expect(a.signals.word_count).toBe(47);
    expect(a.verdict).toEqual({ keep: true, droppedBy: null });
  });

  it('drops by the first failing enabled filter', () => {
    const a = assessQuality(text, qualityConfig({ enable: ['language', 'min-words'], thresholds: { minWords: 50 } }));
    expect(a.verdict).toEqual({ keep: false, droppedBy: 'min-words' });
    expect(assessQuality('ok', qualityConfig({ enable: ['language'] })).verdict.droppedBy).toBe('language');
  });
});
