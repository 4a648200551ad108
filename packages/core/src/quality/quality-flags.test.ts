import { QUALITY_FILTER_NAMES } from './filters';
import { QUALITY_PRESETS, parseQualityThresholds, qualityConfigOf } from './quality-flags';

describe('quality flags', () => {
  it('turns on the named filters and presets; none by default', () => {
    expect([...qualityConfigOf([], {}).enabled]).toEqual([]);
    expect([...qualityConfigOf(['none'], {}).enabled]).toEqual([]);
    expect([...qualityConfigOf(['c4', 'min-words'], {}).enabled].sort()).toEqual(['curly-bracket', 'lorem-ipsum', 'min-sentences', 'min-words']);
    expect(qualityConfigOf(['all'], {}).enabled.size).toBe(QUALITY_FILTER_NAMES.length);
    // every preset names real filters, and together they cover all but the language filter
    const covered = new Set(['gopher', 'c4', 'fineweb'].flatMap((p) => QUALITY_PRESETS[p]!));
    expect(QUALITY_FILTER_NAMES.filter((n) => !covered.has(n))).toEqual(['language']);
  });

  it('reads thresholds by flag name; a threshold turns its filter on', () => {
    const c = qualityConfigOf([], parseQualityThresholds('min-words=100; text-languages=eng,deu ;max-top-ngram-fractions=0.3,0.2,0.1'));
    expect([...c.enabled].sort()).toEqual(['language', 'min-words', 'top-ngrams']);
    expect([c.minWords, c.languages, c.maxTopNgramCharFractions, c.maxWords]).toEqual([100, ['eng', 'deu'], [0.3, 0.2, 0.1], 100_000]);
    expect(parseQualityThresholds('--min-words=5')).toEqual({ 'min-words': '5' });
  });

  it('reports every problem at once', () => {
    expect(() => parseQualityThresholds('min-words')).toThrow(/"min-words" is not name=value/);
    let message = '';
    try {
      qualityConfigOf(['no-such'], { 'min-wordz': '1', 'max-words': 'x', 'text-languages': 'xx', 'min-line-punctuation': '2' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('unknown quality threshold "min-wordz"');
    expect(message).toContain('unknown quality filter "no-such"');
    expect(message).toContain('maxWords must be a finite number');
    expect(message).toContain('"xx" is not an ISO 639-3 code');
    expect(message).toContain('minLinePunctFraction is a share and must be ≤ 1');
  });
});
