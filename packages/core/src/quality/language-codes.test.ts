import { MACROLANGUAGE_OF, toCcLanguageCode } from './language-codes';

describe('toCcLanguageCode', () => {
  it('maps ISO 639-1, 639-2/B and 639-3 codes and BCP 47 tags to the 639-3 code CC writes', () => {
    expect(toCcLanguageCode('en')).toBe('eng');
    expect(toCcLanguageCode('en-US')).toBe('eng');
    expect(toCcLanguageCode('DE_at')).toBe('deu');
    expect(toCcLanguageCode('ger')).toBe('deu');
    expect(toCcLanguageCode('fra')).toBe('fra');
    expect(toCcLanguageCode(' pt-BR ')).toBe('por');
  });

  it('folds individual languages into the macrolanguage CLD2 reports', () => {
    expect(toCcLanguageCode('zh')).toBe('zho');
    expect(toCcLanguageCode('zh-Hant')).toBe('zho');
    expect(toCcLanguageCode('cmn')).toBe('zho');
    expect(toCcLanguageCode('arb')).toBe('ara');
    expect(toCcLanguageCode('nob')).toBe('nor');
    expect(toCcLanguageCode('no')).toBe('nor');
    expect(toCcLanguageCode('zlm')).toBe('msa');
    expect(toCcLanguageCode('ms')).toBe('msa');
    // CLD2 reports Indonesian and Nynorsk apart from their macrolanguages
    expect(toCcLanguageCode('id')).toBe('ind');
    expect(toCcLanguageCode('nno')).toBe('nno');
  });

  it('returns null for what is no language code', () => {
    expect(toCcLanguageCode('')).toBeNull();
    expect(toCcLanguageCode(null)).toBeNull();
    expect(toCcLanguageCode(undefined)).toBeNull();
    expect(toCcLanguageCode('xx')).toBeNull();
    expect(toCcLanguageCode('english')).toBeNull();
  });

  it('folds only into macrolanguages that exist', () => {
    for (const macro of new Set(Object.values(MACROLANGUAGE_OF))) expect(toCcLanguageCode(macro)).toBe(macro);
  });
});
