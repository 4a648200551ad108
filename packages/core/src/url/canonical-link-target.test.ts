import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { domainToASCII } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { canonicalLinkTarget, canonicalizeUrl } from './canonicalize';
import { icannDomainOfHost, registeredDomainsOfHost } from './registered-domain';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');

/** What a link target is of `raw` by the full canonicalization, or null when it throws. */
function fullAnswer(raw: string): { url: string; domain: string } | null {
  try {
    const c = canonicalizeUrl(raw);
    return { url: c.url, domain: c.domain ?? c.host };
  } catch {
    return null;
  }
}

/** Every href of every WARC record of cc-mirror-dev, resolved against its record's target URI as a page's links are. */
function corpusLinks(): string[] {
  const out: string[] = [];
  const root = join(CORPUS, 'cc-mirror-dev/crawl-data');
  for (const crawl of readdirSync(root)) {
    for (const seg of readdirSync(join(root, crawl, 'segments'))) {
      const dir = join(root, crawl, 'segments', seg, 'warc');
      for (const f of readdirSync(dir)) {
        let target = 'http://invalid/';
        for (const m of gunzipSync(readFileSync(join(dir, f))).toString('utf8').matchAll(/^WARC-Target-URI: *(\S+)|\bhref\s*=\s*["']([^"']*)["']/gim)) {
          if (m[1] !== undefined) target = m[1];
          else if (URL.canParse(m[2] as string, target)) out.push(new URL(m[2] as string, target).href);
        }
      }
    }
  }
  return out;
}

describe('canonicalLinkTarget', () => {
  it("gives canonicalizeUrl's url and domain (host when none) for every link of the corpus pages", () => {
    const links = [...new Set(corpusLinks())];
    expect(links.length).toBeGreaterThan(30_000);
    let targets = 0;
    for (const l of links) {
      const want = fullAnswer(l);
      const got = canonicalLinkTarget(l);
      if (want !== null) targets++;
      if (JSON.stringify(got) !== JSON.stringify(want)) expect([l, got]).toEqual([l, want]);
    }
    expect(targets).toBeGreaterThan(20_000);
  });

  it('gives the same answer on the WHATWG test inputs, the quirks of hosts, ports, paths and queries', () => {
    const wpt = JSON.parse(readFileSync(join(CORPUS, 'whatwg-url-wpt-via-ada/urltestdata.json'), 'utf8')) as unknown[];
    const inputs = wpt.flatMap((c) => (typeof c === 'object' && c !== null && 'input' in c ? [String((c as { input: unknown }).input)] : []));
    expect(inputs.length).toBe(891);
    const quirks = [
      'HTTPS://user:pw@WWW.Example.COM.:443/a/./b/../c?#frag', 'http://example.com:8080', 'http://Bücher.example/', 'http://0x7f.1/',
      'http://a.com//x///y%7e%2fz%c3%a9?q=%41%2b', 'http://a.com/?b=2&a=9&b=1&&a=3&c', 'http://.p://.p://..///', 'http://ex.com/a//../b',
      'http://x.blogspot.com/p', 'http://co.uk/', 'http://exa..com/', 'http://[::1]:81/', 'http://./', 'http://a.b.github.io./?', 'mailto:x@a.com',
      '/relative', 'javascript:void(0)', 'http://', 'ftp://a.com/',
    ];
    for (const l of [...inputs, ...quirks]) {
      const want = fullAnswer(l);
      expect([l, canonicalLinkTarget(l)]).toEqual([l, want]);
    }
  });

  it('is idempotent on its URL', () => {
    for (const l of ['HTTP://A.com./b/../c?y=1&x=2#f', 'http://a.com//..', 'https://x.blogspot.com:443/%7e']) {
      const t = canonicalLinkTarget(l);
      expect(canonicalLinkTarget(t!.url)).toEqual(t);
    }
  });
});

describe('icannDomainOfHost', () => {
  it("is registeredDomainsOfHost's domain on a probe host of every rule of the PSL, and on IPs and empty labels", () => {
    const dat = readFileSync(join(CORPUS, 'publicsuffix-list/public_suffix_list.dat'), 'utf8');
    const hosts = ['127.0.0.1', '[::1]', 'exa..com', 'com', 'co.uk', 'x.blogspot.com', 'a.b.github.io', 'localhost'];
    for (const line of dat.split('\n')) {
      const rule = line.trim().split(/\s/)[0] ?? '';
      if (rule.length === 0 || rule.startsWith('//')) continue;
      const body = rule.replace(/^!/, '').split('.').map((l) => (l === '*' ? 'wild' : /^[\x00-\x7f]*$/.test(l) ? l : domainToASCII(l))).join('.');
      hosts.push(body, `probe.${body}`, `a.probe.${body}`);
    }
    expect(hosts.length).toBeGreaterThan(27_000);
    for (const h of hosts) {
      const want = registeredDomainsOfHost(h).domain;
      if (icannDomainOfHost(h) !== want) expect([h, icannDomainOfHost(h)]).toEqual([h, want]);
    }
  });
});
