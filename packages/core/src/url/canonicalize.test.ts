import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { canonicalizeUrl, canonicalQuery } from './canonicalize';
import { normalizePercent } from './percent';
import { surtOf } from './surt';
import { UrlError } from './url-error';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');

interface WptCase {
  input: string;
  base: string | null;
  failure?: boolean;
  href?: string;
  protocol?: string;
  hostname?: string;
  port?: string;
  pathname?: string;
  search?: string;
}

const wpt = (JSON.parse(readFileSync(join(CORPUS, 'whatwg-url-wpt-via-ada/urltestdata.json'), 'utf8')) as unknown[]).filter(
  (c): c is WptCase => typeof c === 'object' && c !== null,
);

// Node 20.20's URL (ada) predates a 2025 WPT change: labels that are invalid punycode ("xn--",
// "xn--pokxncvks") now parse; Node still rejects them. Listed so a Node upgrade shows up here.
const NODE20_REJECTS = new Set([
  'http://a.b.c.xn--pokxncvks', 'http://10.0.0.xn--pokxncvks', 'http://a.b.c.XN--pokxncvks', 'http://a.b.c.Xn--pokxncvks',
  'http://10.0.0.XN--pokxncvks', 'http://10.0.0.xN--pokxncvks', 'https://xn--/',
]);

function tryCanon(c: WptCase): ReturnType<typeof canonicalizeUrl> | UrlError {
  try {
    return c.base === null ? canonicalizeUrl(c.input) : canonicalizeUrl(c.input, c.base);
  } catch (err) {
    if (err instanceof UrlError) return err;
    throw err;
  }
}

describe('canonicalizeUrl against WHATWG urltestdata', () => {
  const http = wpt.filter((c) => !c.failure && (c.protocol === 'http:' || c.protocol === 'https:'));

  it('has the expected shape', () => {
    expect(wpt.length).toBe(891);
    expect(http.length).toBe(247);
  });

  it('agrees on scheme, host and port for every valid http(s) case; path and query are WHATWG + our normalisation', () => {
    const deviations: string[] = [];
    for (const c of http) {
      const r = tryCanon(c);
      if (r instanceof UrlError) {
        deviations.push(c.input);
        continue;
      }
      const host = (c.hostname as string).replace(/([^.])\.$/, '$1');
      expect([c.input, r.scheme, r.host, r.port]).toEqual([c.input, (c.protocol as string).slice(0, -1), host, c.port === '' ? null : Number(c.port)]);
      expect(r.path).toBe(normalizePercent((c.pathname as string).replace(/\/{2,}/g, '/')));
      expect(r.query).toBe(canonicalQuery(c.search as string));
      expect(r.url).toBe(`${r.scheme}://${r.host}${r.port === null ? '' : `:${r.port}`}${r.path}${r.query ? `?${r.query}` : ''}`);
      expect(canonicalizeUrl(r.url).url).toBe(r.url); // idempotent
    }
    expect(new Set(deviations)).toEqual(NODE20_REJECTS);
  });

  it('stays idempotent when collapsing // leaves a dot segment (found by the fuzz suite)', () => {
    for (const [raw, url] of [
      ['http://.p://.p://..///', 'http://.p/'],
      ['http://ex.com/a//../b', 'http://ex.com/a/b'],
      ['http://ex.com/a/b//./c/', 'http://ex.com/a/b/c/'],
      ['http://ex.com//..', 'http://ex.com/'],
      ['http://ex.com/a//..x/', 'http://ex.com/a/..x/'],
    ]) {
      expect(canonicalizeUrl(raw!).url).toBe(url);
      expect(canonicalizeUrl(url!).url).toBe(url);
    }
  });

  it('every expected failure fails for us too, with CCP_ERR_URL_INVALID', () => {
    const failures = wpt.filter((c) => c.failure);
    expect(failures.length).toBe(267);
    for (const c of failures) {
      const r = tryCanon(c);
      expect([c.input, r instanceof UrlError ? r.code : 'accepted']).toEqual([c.input, 'CCP_ERR_URL_INVALID']);
    }
  });

  it('valid non-http(s) results are refused with CCP_ERR_URL_SCHEME', () => {
    const others = wpt.filter((c) => !c.failure && c.protocol !== 'http:' && c.protocol !== 'https:' && !['file://xn--/p'].includes(c.input));
    expect(others.length).toBeGreaterThan(300);
    for (const c of others) {
      const r = tryCanon(c);
      expect([c.input, r instanceof UrlError ? r.code : 'accepted']).toEqual([c.input, 'CCP_ERR_URL_SCHEME']);
    }
  });
});

describe('canonicalizeUrl: our normalisations', () => {
  it('lower-cases scheme/host, drops default port, fragment, userinfo, trailing host dot', () => {
    const c = canonicalizeUrl('HTTPS://user:pw@WWW.Example.COM.:443/a/./b/../c?#frag');
    expect(c.url).toBe('https://www.example.com/a/c');
    expect([c.scheme, c.host, c.port, c.path, c.query]).toEqual(['https', 'www.example.com', null, '/a/c', '']);
    expect(canonicalizeUrl('http://example.com:8080').url).toBe('http://example.com:8080/');
  });

  it('IDNA to punycode, IPv4 forms normalised', () => {
    expect(canonicalizeUrl('http://Bücher.example/').host).toBe('xn--bcher-kva.example');
    expect(canonicalizeUrl('http://0x7f.1/').host).toBe('127.0.0.1');
  });

  it('collapses // runs, normalises escapes (upper hex, unreserved decoded)', () => {
    expect(canonicalizeUrl('http://a.com//x///y%7e%2fz%c3%a9?q=%41%2b').url).toBe('http://a.com/x/y~%2Fz%C3%A9?q=A%2B');
  });

  it('sorts query parameters by key only, stably; keeps duplicates; drops empty ones', () => {
    expect(canonicalizeUrl('http://a.com/?b=2&a=9&b=1&&a=3&c').query).toBe('a=9&a=3&b=2&b=1&c');
    expect(canonicalizeUrl('http://a.com/?utm_source=x&b=2&a=1').query).toBe('a=1&b=2&utm_source=x');
  });

  it('keeps raw, refuses other schemes and relative input', () => {
    expect(canonicalizeUrl(' http://a.com/ ').raw).toBe(' http://a.com/ ');
    expect(() => canonicalizeUrl('mailto:x@a.com')).toThrow(expect.objectContaining({ code: 'CCP_ERR_URL_SCHEME' }));
    expect(() => canonicalizeUrl('/relative')).toThrow(expect.objectContaining({ code: 'CCP_ERR_URL_INVALID', retryable: false }));
    expect(canonicalizeUrl('../x?b&a', 'http://a.com/p/q/').url).toBe('http://a.com/p/x?a&b');
  });

  it('is idempotent and agrees with the CDX key host on every real captured URL', () => {
    const root = join(CORPUS, 'cc-mirror-dev/cc-index/collections');
    const urls: string[] = [];
    for (const crawl of readdirSync(root))
      for (const f of readdirSync(join(root, crawl, 'indexes')).filter((x) => x.endsWith('.gz')))
        for (const l of gunzipSync(readFileSync(join(root, crawl, 'indexes', f))).toString('utf8').split('\n'))
          if (l.includes('{"url": ')) urls.push((JSON.parse(l.slice(l.indexOf('{'))) as { url: string }).url);
    for (const l of readFileSync(join(CORPUS, 'preciz-common_crawl/api_response'), 'utf8').split('\n'))
      if (l.includes('{')) urls.push((JSON.parse(l.slice(l.indexOf('{'))) as { url: string }).url);
    expect(urls.length).toBeGreaterThan(3400);
    for (const u of urls) {
      const c = canonicalizeUrl(u);
      if (c.surt !== surtOf(u)) expect([u, c.surt]).toEqual([u, surtOf(u)]); // one parse, same key as surtOf
      const again = canonicalizeUrl(c.url);
      expect([u, again.url, again.surt.slice(0, again.surt.indexOf(')'))]).toEqual([u, c.url, c.surt.slice(0, c.surt.indexOf(')'))]);
    }
  });
});
