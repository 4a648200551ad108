import { isLanguageCode, languageCodeProblem } from './language-codes';

describe('ISO 639-3 language codes', () => {
  it('knows the codes Common Crawl writes, and only those', () => {
    for (const c of ['eng', 'deu', 'fra', 'zho', 'jpn', 'any', 'zul']) expect(isLanguageCode(c)).toBe(true);
    for (const c of ['xx', 'en', 'ENG', 'english', '', 'e n']) expect(isLanguageCode(c)).toBe(false);
  });

  it('says why a code keeps nothing, pointing from 639-1 and 639-2/B forms to the 639-3 one', () => {
    expect(languageCodeProblem('eng')).toBeNull();
    expect(languageCodeProblem('de')).toBe('"de" is not an ISO 639-3 code: Common Crawl writes "deu"');
    expect(languageCodeProblem('fre')).toBe('"fre" is not an ISO 639-3 code: Common Crawl writes "fra"');
    expect(languageCodeProblem('Fra')).toBe('"Fra" must be written in lower case ("fra")');
    expect(languageCodeProblem('xx')).toMatch(/^"xx" is not an ISO 639-3 language code/);
  });
});
