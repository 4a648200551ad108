export { MACROLANGUAGE_OF, toCcLanguageCode } from './language-codes';
export {
  identifyLanguage,
  guessLanguage,
  languageSample,
  evidenceConfidence,
  countLetters,
  LANGUAGE_ENGINES,
  DEFAULT_MIN_LETTERS,
  DEFAULT_SAMPLE_CHARS,
  type IdentifiedLanguage,
  type IdentifyLanguageOptions,
  type LanguageEngine,
} from './language';
export {
  qualitySignals,
  C4_POLICY_SUBSTRINGS,
  C4_MAX_WORD_CHARS,
  C4_MIN_WORDS_PER_LINE,
  SHORT_LINE_CHARS,
  type QualitySignals,
} from './signals';
export {
  applyQualityFilters,
  qualityConfig,
  QualityConfigError,
  QUALITY_FILTERS,
  QUALITY_FILTER_NAMES,
  DEFAULT_QUALITY_CONFIG,
  type QualityConfig,
  type QualityFilterName,
  type QualityFilterSpec,
  type QualityInput,
  type QualityParamSpec,
  type QualityThresholds,
  type QualityVerdict,
} from './filters';
export { cleanLines, C4_LINE_RULES, FINEWEB_C4_LINE_RULES, type LineCleaningRules, type LineRemoval } from './clean-lines';
export { assessQuality, textQuality, type QualityAssessment, type TextQuality } from './assess-quality';
export { QUALITY_PRESETS, parseQualityThresholds, qualityConfigOf } from './quality-flags';
