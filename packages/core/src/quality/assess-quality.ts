import { applyQualityFilters, DEFAULT_QUALITY_CONFIG, type QualityConfig, type QualityVerdict } from './filters';
import { identifyLanguage, type IdentifyLanguageOptions } from './language';
import { qualitySignals, type QualitySignals } from './signals';

/** What the quality step stores for one document, and whether the enabled filters keep it. */
export interface QualityAssessment {
  /** ISO 639-3 as Common Crawl's CDX `languages` writes it; null when too short or undetermined. */
  text_language: string | null;
  /** In [0, 1]; null with `text_language`. */
  text_language_confidence: number | null;
  signals: QualitySignals;
  verdict: QualityVerdict;
}

/**
 * The quality step for one extracted text: identifies its language, computes its signals and runs the enabled filters
 * (none by default). ~0.5 ms for a 10 KB page after the language model is loaded (bench/quality.bench.js). Pure and
 * deterministic. @throws Error when the language engine's package is not installed
 */
export function assessQuality(text: string, config: QualityConfig = DEFAULT_QUALITY_CONFIG, language: IdentifyLanguageOptions = {}): QualityAssessment {
  const lang = identifyLanguage(text, language);
  const signals = qualitySignals(text);
  const text_language = lang?.language ?? null;
  const text_language_confidence = lang?.confidence ?? null;
  return { text_language, text_language_confidence, signals, verdict: applyQualityFilters({ ...signals, text_language, text_language_confidence }, config) };
}

/** What the quality step computes of a text before any filter: its language and its signals. */
export interface TextQuality {
  text_language: string | null;
  text_language_confidence: number | null;
  signals: QualitySignals;
}

/**
 * The language and signals of one extracted text, the filters left to the caller ({@link applyQualityFilters} with its
 * own config): the extraction threads compute this beside the text, and the worker decides. Pure.
 */
export function textQuality(text: string, language: IdentifyLanguageOptions = {}): TextQuality {
  const lang = identifyLanguage(text, language);
  return { text_language: lang?.language ?? null, text_language_confidence: lang?.confidence ?? null, signals: qualitySignals(text) };
}
