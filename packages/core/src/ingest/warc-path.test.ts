import { UnsafeWarcPathError, validateWarcFilename, warcFileUrl } from './warc-path';

const REAL = 'crawl-data/CC-MAIN-2024-30/segments/1720763514759.37/warc/CC-MAIN-20240715182014-20240715212014-00187.warc.gz';

describe('WARC filename validation (SSRF guard)', () => {
  it('accepts Common Crawl filenames and builds the URL under the base', () => {
    expect(validateWarcFilename(REAL)).toBe(REAL);
    expect(warcFileUrl('https://data.commoncrawl.org', REAL)).toBe(`https://data.commoncrawl.org/${REAL}`);
    expect(warcFileUrl('http://127.0.0.1:8081/mirror/', REAL)).toBe(`http://127.0.0.1:8081/mirror/${REAL}`);
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data'],
    ['https://evil.example/x.warc.gz'],
    ['//evil.example/x.warc.gz'],
    ['/etc/passwd'],
    ['crawl-data/../../etc/passwd'],
    ['crawl-data/./x.warc.gz'],
    ['crawl-data/%2e%2e/x.warc.gz'],
    ['crawl-data/%2F%2Fevil/x'],
    ['crawl-data\\..\\x'],
    ['crawl-data//x.warc.gz'],
    ['crawl-data/x.warc.gz?y=1'],
    ['crawl-data/x.warc.gz#frag'],
    ['crawl-data/x y.warc.gz'],
    ['javascript:alert(1)'],
    [''],
  ])('rejects %j', (name) => {
    expect(() => validateWarcFilename(name)).toThrow(UnsafeWarcPathError);
    try {
      warcFileUrl('https://data.commoncrawl.org', name);
    } catch (err) {
      expect((err as UnsafeWarcPathError).code).toBe('CCP_ERR_SSRF');
      return;
    }
    throw new Error('expected a throw');
  });
});
