import { C4_POLICY_SUBSTRINGS } from './signals';
import { isTerminalPunctuation } from './text-chars';

/** Which lines {@link cleanLines} removes. */
export interface LineCleaningRules {
  /** Remove lines not ending in terminal punctuation (or ending in `...`). C4: yes; FineWeb ran C4 without it. */
  requireTerminalPunctuation: boolean;
  /** Remove lines of fewer whitespace-separated tokens; 0: keep all. C4: 3. */
  minWordsPerLine: number;
  /** Remove lines with a token longer than this; 0: no limit. C4: 1,000. */
  maxWordChars: number;
  /** Remove lines mentioning `javascript` (any case). C4: yes. */
  removeJavascript: boolean;
  /** Remove lines with a terms-of-use / privacy / cookie phrase ({@link C4_POLICY_SUBSTRINGS}). C4: yes. */
  removePolicy: boolean;
  /** Delete Wikipedia-style citation marks (`[1]`, `[edit]`, `[citation needed]`) from lines. C4: yes. */
  removeCitations: boolean;
}

/** C4's line rules (Raffel et al. 2020; tensorflow_datasets c4_utils; datatrove C4QualityFilter defaults). */
export const C4_LINE_RULES: LineCleaningRules = Object.freeze({
  requireTerminalPunctuation: true,
  minWordsPerLine: 3,
  maxWordChars: 1000,
  removeJavascript: true,
  removePolicy: true,
  removeCitations: true,
});

/** C4's line rules as FineWeb applied them (`filter_no_terminal_punct=False`). */
export const FINEWEB_C4_LINE_RULES: LineCleaningRules = Object.freeze({ ...C4_LINE_RULES, requireTerminalPunctuation: false });

/** Why a line was removed; the counts of {@link cleanLines}. */
export type LineRemoval = 'no-terminal-punctuation' | 'too-few-words' | 'long-word' | 'javascript' | 'policy';

const CITATION = /\[\d*\]|\[edit\]|\[citation needed\]/g;

/**
 * C4's line cleaning, for a pipeline that wants it (it is not part of the document filters, and nothing runs it by
 * default): removes the lines `rules` rejects, checked in C4's order (long word, citation marks deleted, terminal
 * punctuation, too few words, javascript, policy), and returns the kept lines joined by `\n` with the removals counted
 * by reason. Lines are trimmed; blank lines are dropped without a count. Pure.
 */
export function cleanLines(text: string, rules: LineCleaningRules = C4_LINE_RULES): { text: string; removed: Record<LineRemoval, number> } {
  const removed: Record<LineRemoval, number> = { 'no-terminal-punctuation': 0, 'too-few-words': 0, 'long-word': 0, javascript: 0, policy: 0 };
  const kept: string[] = [];
  for (const raw of text.split('\n')) {
    let line = raw.trim();
    if (line === '') continue;
    const words = line.split(/\s+/);
    if (rules.maxWordChars > 0 && words.some((w) => w.length > rules.maxWordChars)) {
      removed['long-word']++;
      continue;
    }
    if (rules.removeCitations) line = line.replace(CITATION, '').trim();
    if (rules.requireTerminalPunctuation && (line === '' || !isTerminalPunctuation(line.charCodeAt(line.length - 1)) || line.endsWith('...'))) {
      removed['no-terminal-punctuation']++;
      continue;
    }
    if (words.length < rules.minWordsPerLine) {
      removed['too-few-words']++;
      continue;
    }
    const lower = line.toLowerCase();
    if (rules.removeJavascript && lower.includes('javascript')) {
      removed.javascript++;
      continue;
    }
    if (rules.removePolicy && C4_POLICY_SUBSTRINGS.some((p) => lower.includes(p))) {
      removed.policy++;
      continue;
    }
    if (line !== '') kept.push(line);
  }
  return { text: kept.join('\n'), removed };
}
