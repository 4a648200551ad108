import { canonicalizeUrl } from '../url';
import { linkTargets } from './link-targets';

describe('linkTargets', () => {
  const page = canonicalizeUrl('https://www.Example.com/a/b.html').url;

  it('canonicalizes as the URL index does, drops the page itself and duplicates after canonicalization', () => {
    const r = linkTargets(page, [
      'https://WWW.EXAMPLE.COM/a/b.html', // the page itself, other case
      'https://news.example.co.uk/x?b=2&a=1',
      'https://news.example.co.uk/x?a=1&b=2', // the same after query sorting, if canonicalization sorts
      'http://other.org:80/',
      'http://[bad',
    ]);
    const second = canonicalizeUrl('https://news.example.co.uk/x?b=2&a=1').url;
    const third = canonicalizeUrl('https://news.example.co.uk/x?a=1&b=2').url;
    const expected = [second, ...(third === second ? [] : [third]), canonicalizeUrl('http://other.org:80/').url];
    expect(r.urls).toEqual(expected);
    expect(r.domains).toEqual(expected.map((u) => (u.includes('other.org') ? 'other.org' : 'example.co.uk')));
    expect(r.urls).not.toContain(page);
    expect(r.invalid).toBe(1); // 'http://[bad' does not canonicalize
  });

  it('counts links that do not canonicalize and keeps the rest', () => {
    const r = linkTargets(page, ['not a url', 'https://ok.example.net/']);
    expect(r.urls).toEqual([canonicalizeUrl('https://ok.example.net/').url]);
    expect(r.invalid).toBe(1);
  });
});
