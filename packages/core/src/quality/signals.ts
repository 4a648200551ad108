import { charClass, CharClass, isBullet, isTerminalPunctuation } from './text-chars';
import { repetitionFractions } from './ngram-repetition';

/**
 * Per-document quality signals of an extracted text: the figures the Gopher (Rae et al. 2021, appendix A), C4 (Raffel
 * et al. 2020) and FineWeb (datatrove) rules test, under their names. Fractions are in [0, 1] and 0 for an empty
 * text. Names are snake_case because they are stored as columns as they are.
 *
 * Definitions (the text is read as lines split on `\n`; blank lines are not counted):
 * - token: a run of non-whitespace characters; word: a token holding a letter or a digit. A word's length is in code
 *   points, punctuation and symbols at either end left out (`"Hello,"` → 5). Text without spaces between words (Chinese,
 *   Japanese, Thai) therefore has few, very long "words": the word rules are meant for space-separated languages.
 */
export interface QualitySignals {
  /** Characters of the text (UTF-16 code units, as `String.length`). */
  char_count: number;
  /** Non-blank lines. */
  line_count: number;
  word_count: number;
  /** Mean word length in code points (Gopher: 3–10). */
  mean_word_length: number;
  /** Gopher's symbol-to-word ratio: the larger of `#` per word and ellipses (`...` or `…`) per word. */
  symbol_to_word_ratio: number;
  /** Tokens holding a letter / tokens (Gopher: ≥ 0.8). */
  alpha_word_fraction: number;
  /** Words that are one of Gopher's English stop words (the, be, to, of, and, that, have, with), any case. */
  stop_word_count: number;
  /** Lines ending in terminal punctuation (FineWeb/C4 `. ! ? " '`, and `。！？” ’ » ؟ । ॥ ። ။ ։ ۔`). */
  line_punct_fraction: number;
  /** Lines of at most 30 characters (FineWeb). */
  short_line_fraction: number;
  /** Lines starting with a bullet: `• ● ▪ ◦ ‣ ⁃ · * -` (Gopher). */
  bullet_line_fraction: number;
  /** Lines ending in `...` or `…` (Gopher). */
  ellipsis_line_fraction: number;
  /** Lines equal to an earlier line / lines (Gopher `dup_line_frac`). */
  dup_line_fraction: number;
  /**
   * Characters of lines equal to an earlier line / characters of all lines (Gopher `dup_line_char_frac`; FineWeb's
   * `char_dup_ratio` is the same figure, with newlines left out of both counts).
   */
  dup_line_char_fraction: number;
  /** Line breaks per word (FineWeb's list ratio). */
  newline_to_word_ratio: number;
  /**
   * Gopher's top n-gram character fractions, n = 2, 3, 4: the word characters covered by the most frequent word n-gram
   * (case-sensitive) / all word characters; 0 when no n-gram occurs twice.
   */
  top_2gram_char_fraction: number;
  top_3gram_char_fraction: number;
  top_4gram_char_fraction: number;
  /**
   * Gopher's duplicate n-gram character fractions, n = 5..10: the word characters covered by word n-grams occurring
   * more than once (every occurrence, each character counted once) / all word characters.
   */
  dup_5gram_char_fraction: number;
  dup_6gram_char_fraction: number;
  dup_7gram_char_fraction: number;
  dup_8gram_char_fraction: number;
  dup_9gram_char_fraction: number;
  dup_10gram_char_fraction: number;
  /** C4: lines containing `lorem ipsum` (any case; C4 drops the document). */
  lorem_ipsum_lines: number;
  /** C4: lines containing `javascript` (any case; C4 removes the line). */
  javascript_lines: number;
  /** C4: lines containing terms of use / privacy policy / cookie phrases (C4 removes the line). */
  policy_lines: number;
  /** C4: lines containing `{` (C4 drops the document). */
  curly_bracket_lines: number;
  /**
   * C4: sentences in the lines C4 keeps (≥ 3 tokens, no token over 1,000 characters, no javascript or policy phrase):
   * runs of `. ! ? 。！？` followed by a space or the line's end, at least one per kept line — an approximation of
   * NLTK's Punkt, which C4 uses (it does not know abbreviations: `Dr. Who` counts two).
   */
  c4_sentence_count: number;
}

/** C4's policy phrases (tensorflow_datasets c4_utils, as datatrove's C4QualityFilter lists them). */
export const C4_POLICY_SUBSTRINGS: readonly string[] = [
  'terms of use',
  'privacy policy',
  'cookie policy',
  'uses cookies',
  'use of cookies',
  'use cookies',
];

/** Gopher's stop words (English). */
const STOP_WORDS = new Set(['the', 'be', 'to', 'of', 'and', 'that', 'have', 'with']);

/** C4 drops a line with a token longer than this. */
export const C4_MAX_WORD_CHARS = 1000;
/** C4 keeps only lines with at least this many tokens. */
export const C4_MIN_WORDS_PER_LINE = 3;
/** FineWeb's short line: at most this many characters. */
export const SHORT_LINE_CHARS = 30;

interface LineFlags {
  anyLorem: boolean;
  anyJavascript: boolean;
  anyPolicy: boolean;
}

/** The per-line C4 checks, on the line lower-cased only when the whole text holds the phrase at all. */
function boilerplateOf(line: string, flags: LineFlags): { lorem: boolean; javascript: boolean; policy: boolean } {
  if (!flags.anyLorem && !flags.anyJavascript && !flags.anyPolicy) return { lorem: false, javascript: false, policy: false };
  const l = line.toLowerCase();
  return {
    lorem: flags.anyLorem && l.includes('lorem ipsum'),
    javascript: flags.anyJavascript && l.includes('javascript'),
    policy: flags.anyPolicy && C4_POLICY_SUBSTRINGS.some((p) => l.includes(p)),
  };
}

/** Sentence ends in a kept line: runs of `.!?。！？` followed by whitespace or the end; at least 1. */
function sentencesIn(line: string): number {
  let n = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 0x2e || c === 0x21 || c === 0x3f || c === 0x3002 || c === 0xff01 || c === 0xff1f) {
      while (i + 1 < line.length && isSentenceEnd(line.charCodeAt(i + 1))) i++;
      const next = i + 1 < line.length ? line.charCodeAt(i + 1) : 0x20;
      if (next === 0x20 || next === 0x09 || c >= 0x3000) n++;
    }
  }
  return Math.max(1, n);
}

function isSentenceEnd(c: number): boolean {
  return c === 0x2e || c === 0x21 || c === 0x3f || c === 0x3002 || c === 0xff01 || c === 0xff1f;
}

const ratio = (a: number, b: number): number => (b > 0 ? a / b : 0);

/**
 * Computes {@link QualitySignals} of `text` in one pass over its characters (plus one over its words per n-gram size;
 * duplicate n-grams beyond 5 only when 5-grams repeat). Costs ~0.3 ms for a 10 KB page (bench/quality.bench.js).
 * Pure, deterministic, never throws.
 */
export function qualitySignals(text: string): QualitySignals {
  const lower = text.length > 0 ? text.toLowerCase() : '';
  const flags: LineFlags = {
    anyLorem: lower.includes('lorem ipsum'),
    anyJavascript: lower.includes('javascript'),
    anyPolicy: C4_POLICY_SUBSTRINGS.some((p) => lower.includes(p)),
  };

  // Word ids (for n-grams) and word lengths, in text order.
  const wordIds: number[] = [];
  const wordLens: number[] = [];
  const idOf = new Map<string, number>();

  let tokens = 0;
  let alphaTokens = 0;
  let wordChars = 0;
  let stopWords = 0;
  let hashes = 0;
  let ellipses = 0;
  let newlines = 0;

  let lines = 0;
  let punctLines = 0;
  let shortLines = 0;
  let bulletLines = 0;
  let ellipsisLines = 0;
  let dupLines = 0;
  let dupLineChars = 0;
  let lineChars = 0;
  let loremLines = 0;
  let javascriptLines = 0;
  let policyLines = 0;
  let curlyLines = 0;
  let sentences = 0;
  const seenLines = new Set<string>();

  // Per token.
  let tokStart = -1;
  let tokLetter = false;
  let tokAlnum = false;
  let alnumFirst = -1; // code-point index of the first/last letter or digit
  let alnumLast = -1;
  let alnumFirstAt = -1; // and their UTF-16 offsets
  let alnumEndAt = -1;
  // Per line.
  let lineStart = 0;
  let lineTokens = 0;
  let lineLongToken = false;
  let lineCurly = false;
  let dots = 0;
  let cp = 0; // code-point index

  const endToken = (end: number): void => {
    if (tokStart < 0) return;
    tokens++;
    lineTokens++;
    if (end - tokStart > C4_MAX_WORD_CHARS) lineLongToken = true;
    if (tokLetter) alphaTokens++;
    if (tokAlnum) {
      const len = alnumLast - alnumFirst + 1;
      const word = text.slice(alnumFirstAt, alnumEndAt);
      let id = idOf.get(word);
      if (id === undefined) {
        id = idOf.size;
        idOf.set(word, id);
      }
      wordIds.push(id);
      wordLens.push(len);
      wordChars += len;
      if (len >= 2 && len <= 4 && STOP_WORDS.has(len === word.length ? word.toLowerCase() : '')) stopWords++;
    }
    tokStart = -1;
    tokLetter = false;
    tokAlnum = false;
  };

  const endLine = (end: number): void => {
    const line = text.slice(lineStart, end).trim();
    if (line !== '') {
      lines++;
      lineChars += line.length;
      const last = line.charCodeAt(line.length - 1);
      if (isTerminalPunctuation(last)) punctLines++;
      if (line.length <= SHORT_LINE_CHARS) shortLines++;
      if (isBullet(line.charCodeAt(0))) bulletLines++;
      if (last === 0x2026 || line.endsWith('...')) ellipsisLines++;
      if (seenLines.has(line)) {
        dupLines++;
        dupLineChars += line.length;
      } else seenLines.add(line);
      const b = boilerplateOf(line, flags);
      if (b.lorem) loremLines++;
      if (b.javascript) javascriptLines++;
      if (b.policy) policyLines++;
      if (lineCurly) curlyLines++;
      if (lineTokens >= C4_MIN_WORDS_PER_LINE && !lineLongToken && !b.javascript && !b.policy) sentences += sentencesIn(line);
    }
    lineStart = end + 1;
    lineTokens = 0;
    lineLongToken = false;
    lineCurly = false;
  };

  for (let i = 0; i < text.length; i++, cp++) {
    let code = text.charCodeAt(i);
    let width = 1;
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      code = text.codePointAt(i) ?? code;
      width = 2;
    }
    if (code === 0x2e) dots++;
    else {
      if (dots >= 3) ellipses += Math.floor(dots / 3);
      dots = 0;
    }
    const cls = charClass(code);
    if (cls === CharClass.Space) {
      endToken(i);
      if (code === 0x0a) {
        newlines++;
        endLine(i);
      }
    } else {
      if (tokStart < 0) tokStart = i;
      if (cls === CharClass.Letter || cls === CharClass.Digit) {
        if (cls === CharClass.Letter) tokLetter = true;
        if (!tokAlnum) {
          tokAlnum = true;
          alnumFirst = cp;
          alnumFirstAt = i;
        }
        alnumLast = cp;
        alnumEndAt = i + width;
      } else if (code === 0x23) hashes++;
      else if (code === 0x2026) ellipses++;
      else if (code === 0x7b) lineCurly = true;
    }
    if (width === 2) i++;
  }
  if (dots >= 3) ellipses += Math.floor(dots / 3);
  endToken(text.length);
  endLine(text.length);

  const words = wordIds.length;
  const rep = repetitionFractions(wordIds, wordLens, wordChars);
  return {
    char_count: text.length,
    line_count: lines,
    word_count: words,
    mean_word_length: ratio(wordChars, words),
    symbol_to_word_ratio: ratio(Math.max(hashes, ellipses), words),
    alpha_word_fraction: ratio(alphaTokens, tokens),
    stop_word_count: stopWords,
    line_punct_fraction: ratio(punctLines, lines),
    short_line_fraction: ratio(shortLines, lines),
    bullet_line_fraction: ratio(bulletLines, lines),
    ellipsis_line_fraction: ratio(ellipsisLines, lines),
    dup_line_fraction: ratio(dupLines, lines),
    dup_line_char_fraction: ratio(dupLineChars, lineChars),
    newline_to_word_ratio: ratio(newlines, words),
    top_2gram_char_fraction: rep.top[0],
    top_3gram_char_fraction: rep.top[1],
    top_4gram_char_fraction: rep.top[2],
    dup_5gram_char_fraction: rep.dup[0],
    dup_6gram_char_fraction: rep.dup[1],
    dup_7gram_char_fraction: rep.dup[2],
    dup_8gram_char_fraction: rep.dup[3],
    dup_9gram_char_fraction: rep.dup[4],
    dup_10gram_char_fraction: rep.dup[5],
    lorem_ipsum_lines: loremLines,
    javascript_lines: javascriptLines,
    policy_lines: policyLines,
    curly_bracket_lines: curlyLines,
    c4_sentence_count: sentences,
  };
}
