import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { canonicalizeUrl } from '../url';
import { urlId, urlIdFromHex, urlIdHex, urlIdOfBytes } from './url-id';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');

describe('urlId', () => {
  it('is XXH3-64 with seed 0 (published reference values), as a signed int64', () => {
    expect(urlIdHex(urlId(''))).toBe('2d06800538d394c2');
    expect(urlIdHex(urlId('abc'))).toBe('78af5f94892f3950');
    for (const s of ['', 'abc', 'http://example.com/']) {
      const id = urlId(s);
      expect(id).toBeGreaterThanOrEqual(-(2n ** 63n));
      expect(id).toBeLessThan(2n ** 63n);
    }
  });

  it('string and UTF-8 byte inputs hash alike; hex round-trips, negative ids included', () => {
    const lines = readFileSync(join(CORPUS, 'preciz-common_crawl/api_response'), 'utf8').split('\n').filter((l) => l.includes('{'));
    const urls = lines.map((l) => canonicalizeUrl((JSON.parse(l.slice(l.indexOf('{'))) as { url: string }).url).url);
    urls.push('http://example.com/bücher?q=é');
    let negatives = 0;
    const seen = new Map<bigint, string>();
    for (const u of urls) {
      const id = urlId(u);
      expect(urlIdOfBytes(Buffer.from(u, 'utf8'))).toBe(id);
      const hex = urlIdHex(id);
      expect(hex).toMatch(/^[0-9a-f]{16}$/);
      expect(urlIdFromHex(hex)).toBe(id);
      if (id < 0n) negatives++;
      const other = seen.get(id);
      if (other !== undefined) expect(other).toBe(u); // same id only for the same canonical URL
      seen.set(id, u);
    }
    expect(negatives).toBeGreaterThan(urls.length / 4);
    expect(urlIdHex(-1n)).toBe('ffffffffffffffff');
    expect(() => urlIdFromHex('xyz')).toThrow(RangeError);
  });
});
