import { C4_LINE_RULES, cleanLines, FINEWEB_C4_LINE_RULES } from './clean-lines';

const TEXT = [
  'Home',
  'Please enable JavaScript to use this site properly.',
  'We use cookies. Read our privacy policy for details.',
  'The river rose by two metres overnight.[1]',
  'Residents were moved to the school gym',
  `A token of ${'x'.repeat(1001)} characters.`,
  'Ends in an ellipsis, as teasers do...',
  '',
  'Officials expect the water to fall by Friday!',
].join('\n');

describe('cleanLines', () => {
  it("removes the lines C4's rules reject and counts them by reason", () => {
    const r = cleanLines(TEXT);
    expect(r.text).toBe(['The river rose by two metres overnight.', 'Officials expect the water to fall by Friday!'].join('\n'));
    expect(r.removed).toEqual({ 'no-terminal-punctuation': 3, 'too-few-words': 0, 'long-word': 1, javascript: 1, policy: 1 });
    expect(cleanLines(r.text)).toEqual({ text: r.text, removed: { 'no-terminal-punctuation': 0, 'too-few-words': 0, 'long-word': 0, javascript: 0, policy: 0 } });
  });

  it('as FineWeb ran it: lines without terminal punctuation stay, short ones go', () => {
    const r = cleanLines(TEXT, FINEWEB_C4_LINE_RULES);
    expect(r.text.split('\n')).toEqual([
      'The river rose by two metres overnight.',
      'Residents were moved to the school gym',
      'Ends in an ellipsis, as teasers do...',
      'Officials expect the water to fall by Friday!',
    ]);
    expect(r.removed).toEqual({ 'no-terminal-punctuation': 0, 'too-few-words': 1, 'long-word': 1, javascript: 1, policy: 1 });
  });

  it('each rule can be turned off', () => {
    const none = { requireTerminalPunctuation: false, minWordsPerLine: 0, maxWordChars: 0, removeJavascript: false, removePolicy: false, removeCitations: false };
    expect(cleanLines(TEXT, none).text).toBe(TEXT.split('\n').filter((l) => l !== '').join('\n'));
    expect(C4_LINE_RULES.minWordsPerLine).toBe(3);
  });
});
