import { qualitySignals } from './signals';

describe('qualitySignals', () => {
  it('is all zeros for an empty or blank text', () => {
    for (const text of ['', '\n \n\t\n']) {
      const s = qualitySignals(text);
      expect(s.char_count).toBe(text.length);
      for (const [k, v] of Object.entries(s)) if (k !== 'char_count') expect(v).toBe(0);
    }
  });

  it('words: tokens with a letter or digit, measured without the punctuation at their ends', () => {
    const s = qualitySignals('Hello, world! 42 -- #tag café');
    expect(s.word_count).toBe(5); // Hello world 42 tag café; "--" is no word
    expect(s.mean_word_length).toBeCloseTo(19 / 5, 12); // 5 + 5 + 2 + 3 + 4
    expect(s.alpha_word_fraction).toBeCloseTo(4 / 6, 12); // "42" and "--" hold no letter
    expect(s.symbol_to_word_ratio).toBeCloseTo(1 / 5, 12); // one #
    expect(s.line_count).toBe(1);
    expect(s.line_punct_fraction).toBe(0);
    expect(s.short_line_fraction).toBe(1); // 29 characters
    expect(s.newline_to_word_ratio).toBe(0);
  });

  it('counts letters outside the BMP as letters and emoji as symbols, lengths in code points', () => {
    const s = qualitySignals('𝒳𝒴 😀 ab');
    expect(s.char_count).toBe(10);
    expect(s.word_count).toBe(2);
    expect(s.mean_word_length).toBe(2);
    expect(s.alpha_word_fraction).toBeCloseTo(2 / 3, 12);
  });

  it("counts Gopher's stop words in any case", () => {
    expect(qualitySignals('The THE the To of And that have with be bee').stop_word_count).toBe(10);
  });

  it('line signals: terminal punctuation, short, bullet, ellipsis and repeated lines, blank lines left out', () => {
    const lines = [
      '• First item',
      '- second item',
      '* third…',
      'So it ends...',
      '中文句子。',
      '“Quoted.”',
      'No punctuation here at all in this line',
      '',
      '   ',
      'So it ends...',
    ];
    const s = qualitySignals(lines.join('\n'));
    const kept = lines.filter((l) => l.trim() !== '');
    const chars = kept.reduce((a, l) => a + l.length, 0);
    expect(s.line_count).toBe(8);
    expect(s.bullet_line_fraction).toBe(3 / 8);
    expect(s.ellipsis_line_fraction).toBe(3 / 8); // "…" and "..." (twice)
    expect(s.line_punct_fraction).toBe(4 / 8); // "...", "。", "”", "..."; not "…"
    expect(s.short_line_fraction).toBe(7 / 8);
    expect(s.dup_line_fraction).toBe(1 / 8);
    expect(s.dup_line_char_fraction).toBeCloseTo('So it ends...'.length / chars, 12);
    expect(s.word_count).toBe(21);
    expect(s.symbol_to_word_ratio).toBeCloseTo(3 / 21, 12); // three ellipses
    expect(s.newline_to_word_ratio).toBeCloseTo(9 / 21, 12);
  });

  it('counts `...` runs as datatrove does (non-overlapping), and `#` against ellipses by the larger', () => {
    expect(qualitySignals('one two three four five six..... ###').symbol_to_word_ratio).toBeCloseTo(3 / 6, 12);
    expect(qualitySignals('one two three four five six...... #').symbol_to_word_ratio).toBeCloseTo(2 / 6, 12);
  });

  it('top n-grams: characters covered by the most frequent n-gram, occurrences overlapping counted once', () => {
    const s = qualitySignals('a b c d e a b c d e x y');
    expect(s.top_2gram_char_fraction).toBeCloseTo(4 / 12, 12);
    expect(s.top_3gram_char_fraction).toBeCloseTo(6 / 12, 12);
    expect(s.top_4gram_char_fraction).toBeCloseTo(8 / 12, 12);
    expect(qualitySignals('a a a a').top_2gram_char_fraction).toBe(1);
    // No n-gram occurs twice: 0, not the share of an arbitrary one.
    const once = qualitySignals('one two three four');
    expect([once.top_2gram_char_fraction, once.top_3gram_char_fraction, once.top_4gram_char_fraction]).toEqual([0, 0, 0]);
  });

  it('duplicate n-grams: characters covered by every occurrence of repeated 5..10-grams', () => {
    const s = qualitySignals('a b c d e a b c d e x y');
    expect(s.dup_5gram_char_fraction).toBeCloseTo(10 / 12, 12);
    expect([s.dup_6gram_char_fraction, s.dup_7gram_char_fraction, s.dup_8gram_char_fraction, s.dup_9gram_char_fraction, s.dup_10gram_char_fraction]).toEqual([0, 0, 0, 0, 0]);
    // Word lengths weigh: the repeated 5-gram is 5 × 4 characters of 5 × 4 × 2 + 10.
    const t = qualitySignals('aaaa bbbb cccc dddd eeee aaaa bbbb cccc dddd eeee longwordxx');
    expect(t.dup_5gram_char_fraction).toBeCloseTo(40 / 50, 12);
    // A text repeated whole: every size repeats.
    const u = qualitySignals('one two three four five six seven eight nine ten eleven twelve '.repeat(2));
    expect(u.dup_10gram_char_fraction).toBe(1);
    expect(u.top_2gram_char_fraction).toBeCloseTo(6 / 51, 12); // "one two", twice
  });

  it('is case-sensitive on n-grams, as Gopher', () => {
    expect(qualitySignals('a b c d e A B C D E').dup_5gram_char_fraction).toBe(0);
  });

  it("C4's boilerplate lines and sentences in the lines C4 keeps", () => {
    const text = [
      'Please enable JavaScript to view this page.',
      'This site uses cookies to improve your experience.',
      'Read our Privacy Policy.',
      'Lorem ipsum dolor sit amet.',
      'function f() { return 1; }',
      'Dr. Who met Mr. Smith. They talked!',
      'Too short.',
      'Ends without a mark',
    ].join('\n');
    const s = qualitySignals(text);
    expect(s.javascript_lines).toBe(1);
    expect(s.policy_lines).toBe(2);
    expect(s.lorem_ipsum_lines).toBe(1);
    expect(s.curly_bracket_lines).toBe(1);
    // lorem 1 + code line 1 (none found, at least 1) + "Dr. / Mr. / Smith. / talked!" 4 + last line 1
    expect(s.c4_sentence_count).toBe(7);
  });

  it('is deterministic and does not depend on earlier calls', () => {
    const big = Array.from({ length: 3000 }, (_, i) => `w${i % 700}`).join(' ');
    const small = 'a b c d e a b c d e x y';
    const first = qualitySignals(small);
    qualitySignals(big);
    expect(qualitySignals(small)).toEqual(first);
  });
});
