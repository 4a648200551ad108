import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { domainToUnicode } from 'node:url';
import { alphaReorderQuery, surtHost, surtInRanges, surtOf, surtPrefixForDomain, surtRangesForDomain, splitRawPathQuery } from './surt';
import { UrlError } from './url-error';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');

interface Pair {
  source: string;
  url: string;
  surt: string;
}

/** `surt timestamp {json}`: split on the first two spaces (the CDX parser is someone else's). */
function cdxLinePair(line: string, source: string): Pair | null {
  const a = line.indexOf(' ');
  const b = line.indexOf(' ', a + 1);
  if (a < 0 || b < 0 || line[b + 1] !== '{') return null;
  const j = JSON.parse(line.slice(b + 1)) as { url: string };
  return { source, url: j.url, surt: line.slice(0, a) };
}

function linesOf(text: string, source: string): Pair[] {
  return text.split('\n').filter((l) => l.trim()).map((l) => cdxLinePair(l, source)).filter((p): p is Pair => p !== null);
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

/** Recorded index.commoncrawl.org answers (JSON lines with urlkey) and web.archive.org CDX arrays. */
function mockResponsePairs(): Pair[] {
  const out: Pair[] = [];
  for (const file of walk(join(CORPUS, 'cocrawler-cdx_toolkit/mock_responses'))) {
    for (const rec of readFileSync(file, 'utf8').split('\n').filter((l) => l.trim())) {
      const r = JSON.parse(rec) as { url: string; response_status_code: number; response_text?: string };
      if (r.response_status_code !== 200 || typeof r.response_text !== 'string') continue;
      const text = r.response_text.trim();
      if (r.url.includes('/cdx/search/cdx') && text.startsWith('[[')) {
        const rows = JSON.parse(text) as string[][];
        const head = rows[0] as string[];
        for (const row of rows.slice(1)) out.push({ source: 'ia-cdx', url: row[head.indexOf('original')] as string, surt: row[head.indexOf('urlkey')] as string });
        continue;
      }
      if (!r.url.startsWith('https://index.commoncrawl.org/CC-MAIN')) continue;
      for (const l of text.split('\n')) {
        if (!l.startsWith('{')) continue;
        const j = JSON.parse(l) as { urlkey?: string; url?: string };
        if (j.urlkey !== undefined && j.url !== undefined) out.push({ source: 'cc-index-api', url: j.url, surt: j.urlkey });
      }
    }
  }
  return out;
}

function realCcPairs(): Pair[] {
  return [
    ...linesOf(readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'), 'utf8'), 'cdx-00187'),
    ...linesOf(readFileSync(join(CORPUS, 'preciz-common_crawl/index_snippet'), 'utf8'), 'index_snippet'),
    ...linesOf(readFileSync(join(CORPUS, 'preciz-common_crawl/api_response'), 'utf8'), 'api_response'),
    ...mockResponsePairs(),
  ];
}

function mirrorPairs(): Pair[] {
  const root = join(CORPUS, 'cc-mirror-dev/cc-index/collections');
  return readdirSync(root).flatMap((crawl) =>
    readdirSync(join(root, crawl, 'indexes'))
      .filter((f) => f.endsWith('.gz'))
      .flatMap((f) => linesOf(gunzipSync(readFileSync(join(root, crawl, 'indexes', f))).toString('utf8'), `${crawl}/${f}`)),
  );
}

/**
 * How cc-mirror-dev's independent tool writes keys (reverse-engineered, see docs/urls.md): host in
 * Unicode, path and query as captured (no unescaping, no dot/`//` normalisation, trailing `/` kept,
 * no session-id stripping), query args sorted case-sensitively BEFORE lower-casing.
 */
function mirrorFlavourSurt(url: string): string {
  const u = new URL(url);
  const split = splitRawPathQuery(url);
  if (split === null) throw new Error('unexpected');
  const host = surtHost(domainToUnicode(u.hostname));
  const path = split.path.length === 0 ? '/' : split.path;
  const query = split.query === null || split.query === '' ? '' : `?${split.query.split('&').sort().join('&')}`;
  return `${host}${u.port ? `:${u.port}` : ''})${path}${query}`.toLowerCase();
}

describe('surtOf against real Common Crawl CDX keys', () => {
  const real = realCcPairs();

  it('reads every line of the real CC sources', () => {
    const bySource = new Map<string, number>();
    for (const p of real) bySource.set(p.source, (bySource.get(p.source) ?? 0) + 1);
    expect(bySource.get('cdx-00187')).toBe(1140);
    expect(bySource.get('index_snippet')).toBe(100);
    expect(bySource.get('api_response')).toBe(1285);
    expect(bySource.get('cc-index-api')).toBeGreaterThan(100);
    expect(bySource.get('ia-cdx')).toBeGreaterThan(0);
  });

  it('reproduces the SURT of every real CC and IA CDX line exactly', () => {
    const wrong = real.filter((p) => surtOf(p.url) !== p.surt).map((p) => `${p.source} ${p.url} -> ${surtOf(p.url)} (want ${p.surt})`);
    expect(wrong).toEqual([]);
  });

  it('covers the rules the real lines exercise', () => {
    // each of these is a distinct rule; the real data must contain at least one line for it
    const has = (f: (p: Pair) => boolean) => real.some(f);
    expect(has((p) => /^https?:\/\/www\./.test(p.url))).toBe(true); // www stripped
    expect(has((p) => /\/[^/?]+\/(\?|$)/.test(p.url) && !p.surt.includes('/?'))).toBe(true); // trailing slash
    expect(has((p) => /[?&][^=]+=[^&]*&/.test(p.url) && p.surt.includes('?'))).toBe(true); // query sort
    expect(has((p) => p.url.includes('%3F') && p.surt.includes('?start'))).toBe(true); // path unescaped
    expect(has((p) => /[^:]\/\/[^/]/.test(p.url.slice(8)))).toBe(true); // '//' collapsed
    expect(has((p) => p.url.includes(':80/'))).toBe(true); // default port dropped
  });
});

describe('surtOf against cc-mirror-dev', () => {
  const mirror = mirrorPairs();

  it('reads all 2,151 mirror CDX lines', () => {
    expect(mirror.length).toBe(1161 + 990);
  });

  it('agrees with the mirror on the host part of every line (IDN hosts: ours is punycode)', () => {
    const hostOf = (s: string) => s.slice(0, s.indexOf(')'));
    const wrong = mirror.filter((p) => {
      const ours = hostOf(surtOf(p.url));
      return ours !== hostOf(p.surt) && domainToUnicode(ours.split(',').reverse().join('.')) !== hostOf(p.surt).split(',').reverse().join('.');
    });
    expect(wrong).toEqual([]);
  });

  it('matches exactly wherever the mirror tool follows CC rules, and its deviations are exactly the documented ones', () => {
    // the documented mirror flavour reproduces every mirror line…
    expect(mirror.filter((p) => mirrorFlavourSurt(p.url) !== p.surt)).toEqual([]);
    // …and where both flavours agree, so do we
    const comparable = mirror.filter((p) => mirrorFlavourSurt(p.url) === surtOf(p.url));
    expect(comparable.length).toBeGreaterThan(1700);
    expect(comparable.filter((p) => surtOf(p.url) !== p.surt)).toEqual([]);
  });
});

describe('surtOf: rules', () => {
  it('strips www and wwwN, keeps other labels and a non-default port', () => {
    expect(surtOf('http://www.Archive.org/')).toBe('org,archive)/');
    expect(surtOf('http://www34.archive.org/index.html?b=a&b=b&a=b')).toBe('org,archive)/index.html?a=b&b=a&b=b');
    expect(surtOf('http://www2foo.com/')).toBe('com,www2foo)/');
    expect(surtOf('https://www.archive.org:80/')).toBe('org,archive:80)/');
    expect(surtOf('https://www.archive.org:443/')).toBe('org,archive)/');
  });

  it('sorts query args as python sorts (key,)/(key, value) tuples, not as plain strings', () => {
    expect(alphaReorderQuery('p1=2&p=1&a-b=3&a=4')).toBe('a=4&a-b=3&p=1&p1=2');
    expect(alphaReorderQuery('k=&k&j=1')).toBe('j=1&k&k=');
    expect(surtOf('http://a.com/x?p1=2&p=1')).toBe('com,a)/x?p=1&p1=2');
  });

  it('reverses IPv4 hosts like python surt does by default', () => {
    expect(surtOf('http://192.168.1.254/info/')).toBe('254,1,168,192)/info');
  });

  it('rejects non-http(s) and unparsable input with typed errors', () => {
    expect(() => surtOf('ftp://example.com/')).toThrow(UrlError);
    expect(() => surtOf('not a url')).toThrow(expect.objectContaining({ code: 'CCP_ERR_URL_INVALID' }));
  });
});

describe('surt prefixes and ranges', () => {
  it('gives the key prefix of a registered domain or host', () => {
    expect(surtPrefixForDomain('example.com')).toBe('com,example)');
    expect(surtPrefixForDomain('www.Example.COM')).toBe('com,example)');
    expect(surtPrefixForDomain('blog.example.co.uk')).toBe('uk,co,example,blog)');
  });

  it('ranges hold the host, its ports and subdomains but not look-alike domains', () => {
    const r = surtRangesForDomain('berlin.de');
    for (const u of ['https://www.berlin.de/x', 'http://berlin.de:8080/', 'https://service.berlin.de/a?b=1']) expect(surtInRanges(surtOf(u), r)).toBe(true);
    for (const u of ['https://berlin-de.com/', 'https://berlinde.de/', 'https://berlin.de.example.org/', 'https://xberlin.de/']) expect(surtInRanges(surtOf(u), r)).toBe(false);
    expect(surtInRanges(surtOf('https://service.berlin.de/'), surtRangesForDomain('berlin.de', false))).toBe(false);
  });

  it('every real CDX key of a host lies in that host domain ranges', () => {
    const lines = linesOf(readFileSync(join(CORPUS, 'preciz-common_crawl/api_response'), 'utf8'), 'api_response');
    const r = surtRangesForDomain('berlin.de');
    expect(lines.filter((p) => !surtInRanges(p.surt, r))).toEqual([]);
  });
});
