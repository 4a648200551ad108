import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { getDomain } from 'tldts';
import { parseCdxLine, type CdxRecord } from '../cdx/cdx-line';
import { parseClusterIdx } from '../cdx/cluster-idx';
import { parseCdxBlock } from '../cdx/zipnum';
import { hasCode } from '../errors';
import { compileFilter, DROP_REASONS, type DropReason, type FilterDeps } from './compile-filter';
import { parseFilterSpec } from './filter-spec';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');
const MIRROR = join(CORPUS, 'cc-mirror-dev');
const lines = (t: string): string[] => t.split('\n').filter((l) => l.length > 0);
const readRecords = (p: string): CdxRecord[] => lines(readFileSync(join(CORPUS, p), 'utf8')).map((l) => parseCdxLine(l));
const rawJson = (p: string): Array<Record<string, string>> =>
  lines(readFileSync(join(CORPUS, p), 'utf8')).map((l) => JSON.parse(l.slice(l.indexOf(' {') + 1)) as Record<string, string>);
const deps: FilterDeps = { registeredDomainOf: (url) => getDomain(url) };

interface Oracle {
  crawls: Record<string, { cdx_lines: number; kept_captures: number; domains: Record<string, { count: number; urls: string[] }> }>;
}
const oracle = JSON.parse(readFileSync(join(MIRROR, 'oracle.json'), 'utf8')) as Oracle;

function crawlRecords(crawl: string): CdxRecord[] {
  const dir = join(MIRROR, 'cc-index/collections', crawl, 'indexes');
  const out: CdxRecord[] = [];
  for (const e of parseClusterIdx(readFileSync(join(dir, 'cluster.idx'), 'utf8'))) {
    const data = readFileSync(join(dir, e.shard));
    out.push(...parseCdxBlock(data.subarray(e.offset, e.offset + e.length)).records);
  }
  return out;
}

function run(filter: (r: CdxRecord) => { keep: boolean; reason?: DropReason }, recs: CdxRecord[]) {
  const drops: Partial<Record<DropReason, number>> = {};
  const kept: CdxRecord[] = [];
  for (const r of recs) {
    const d = filter(r);
    if (d.keep) kept.push(r);
    else drops[d.reason!] = (drops[d.reason!] ?? 0) + 1;
  }
  return { kept, drops };
}

describe('default filter on cc-mirror-dev', () => {
  test.each(Object.keys(oracle.crawls))('%s: keeps exactly the oracle captures, drops counted per reason add up', (crawl) => {
    const want = oracle.crawls[crawl]!;
    const recs = crawlRecords(crawl);
    expect(recs.length).toBe(want.cdx_lines);
    const { kept, drops } = run(compileFilter({}), recs);
    expect(kept.length).toBe(want.kept_captures);
    const dropped = Object.values(drops).reduce((a, b) => a + b, 0);
    expect(dropped).toBe(recs.length - kept.length);
    expect(Object.keys(drops).sort()).toEqual(['language', 'status']);
    // The kept captures fall in exactly the oracle's registered domains, at least one capture per oracle URL.
    const perDomain = new Map<string, number>();
    for (const r of kept) perDomain.set(getDomain(r.url)!, (perDomain.get(getDomain(r.url)!) ?? 0) + 1);
    expect([...perDomain.keys()].sort()).toEqual(Object.keys(want.domains).sort());
    for (const [d, n] of perDomain) expect(n).toBeGreaterThanOrEqual(want.domains[d]!.count);
  });
});

describe('rules on real Common Crawl lines', () => {
  const fr = 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187';
  const berlin = 'preciz-common_crawl/api_response';

  test('languages: contains vs primary (cdx-00187 has fra, fra,eng, fra,ltz and lines without languages)', () => {
    const recs = readRecords(fr);
    const raw = rawJson(fr);
    const langsOf = (j: Record<string, string>) => (j.languages ?? '').split(',').filter(Boolean);
    const contains = run(compileFilter({ status: ['200', '404'], languages: { mode: 'contains', codes: ['eng'] } }), recs);
    expect(contains.kept.length).toBe(raw.filter((j) => langsOf(j).includes('eng')).length);
    expect(contains.kept.length).toBeGreaterThan(0);
    const primary = run(compileFilter({ status: ['200', '404'], languages: { mode: 'primary', codes: ['eng'] } }), recs);
    expect(primary.kept.length).toBe(raw.filter((j) => langsOf(j)[0] === 'eng').length);
    expect(primary.kept.length).toBeLessThan(contains.kept.length);
    const fraLtz = run(compileFilter({ status: ['200', '404'], languages: { mode: 'contains', codes: ['ltz', 'xxx'] } }), recs);
    expect(fraLtz.kept.length).toBe(raw.filter((j) => langsOf(j).includes('ltz')).length);
    // Lines without languages are dropped for language when a language rule is set.
    const noLang = raw.filter((j) => j.languages === undefined).length;
    expect(noLang).toBeGreaterThan(0);
    const anyFra = run(compileFilter({ status: ['200', '404'], languages: { mode: 'primary', codes: ['fra'] } }), recs);
    expect(anyFra.drops.language).toBe(raw.filter((j) => langsOf(j)[0] !== 'fra').length);
    expect(anyFra.drops.language).toBeGreaterThanOrEqual(noLang);
  });

  test('status: missing languages drop everything under the default; languages: null keeps by status only', () => {
    const recs = readRecords(berlin);
    const raw = rawJson(berlin);
    const def = run(compileFilter({}), recs);
    expect(def.kept).toEqual([]);
    expect(def.drops).toEqual({ status: raw.filter((j) => j.status !== '200').length, language: raw.filter((j) => j.status === '200').length });
    const byStatus = run(compileFilter({ status: ['301', '303'], languages: null }), recs);
    expect(byStatus.kept.map((r) => r.url)).toEqual(raw.filter((j) => ['301', '303'].includes(j.status!)).map((j) => j.url));
    expect(byStatus.kept.every((r) => r.redirect !== undefined)).toBe(true);
    // status: null (`--status any`) and languages: null keep every record; an empty status list still drops all
    expect(run(compileFilter({ status: null, languages: null }), recs).kept).toHaveLength(raw.length);
    expect(run(compileFilter({ status: [], languages: null }), recs).kept).toEqual([]);
  });

  test('mime, mime-detected and URL patterns', () => {
    const recs = readRecords(fr);
    const raw = rawJson(fr);
    const spec = { status: ['200'], languages: null, mimes: ['text/html'], mimeDetected: ['application/xhtml+xml'] };
    const r1 = run(compileFilter(spec), recs);
    expect(r1.kept.length).toBe(raw.filter((j) => j.status === '200' && j.mime === 'text/html' && j['mime-detected'] === 'application/xhtml+xml').length);
    expect(r1.kept.length).toBeGreaterThan(0);
    expect((r1.drops.mime ?? 0) + (r1.drops.mime_detected ?? 0)).toBeGreaterThan(0);
    const r2 = run(compileFilter({ languages: null, urlRegex: 'lvl=author_see', urlRegexExclude: '^http:' }), recs);
    const want = raw.filter((j) => j.status === '200' && j.url!.includes('lvl=author_see') && !j.url!.startsWith('http:'));
    expect(r2.kept.map((r) => r.url)).toEqual(want.map((j) => j.url));
    expect(r2.drops.url_pattern).toBe(raw.filter((j) => j.status === '200').length - want.length);
  });

  test('domain allow and deny use the injected registered-domain function', () => {
    const recs = readRecords(fr);
    const hosts = new Set(recs.map((r) => new URL(r.url).hostname));
    expect(hosts.size).toBeGreaterThan(1);
    const mnhn = recs.filter((r) => r.status === '200' && getDomain(r.url) === 'mnhn.fr').length;
    expect(mnhn).toBeGreaterThan(0);
    const allow = run(compileFilter({ languages: null, domainsAllow: ['MNHN.fr.'] }, deps), recs);
    expect(allow.kept.length).toBe(mnhn);
    expect(allow.drops.domain_allow).toBe(recs.filter((r) => r.status === '200').length - mnhn);
    const deny = run(compileFilter({ languages: null, domainsDeny: ['mnhn.fr'], domainsAllow: ['mnhn.fr', 'missiondefrance.fr'] }, deps), recs);
    expect(deny.drops.domain_deny).toBe(mnhn);
    expect(deny.kept.every((r) => getDomain(r.url) === 'missiondefrance.fr')).toBe(true);
    // A URL without a registered domain (an IP) passes deny lists and fails allow lists.
    const ip = { ...recs[0]!, url: 'http://192.0.2.1/x', status: '200' };
    expect(compileFilter({ languages: null, domainsDeny: ['mnhn.fr'] }, deps)(ip)).toEqual({ keep: true });
    expect(compileFilter({ languages: null, domainsAllow: ['mnhn.fr'] }, deps)(ip)).toEqual({ keep: false, reason: 'domain_allow' });
  });

  test('every drop reason is in the closed set', () => {
    const recs = [...readRecords(fr), ...readRecords(berlin)];
    const f = compileFilter({ mimes: ['text/html'], urlRegex: 'a', domainsDeny: ['berlin.de'], domainsAllow: ['mnhn.fr'] }, deps);
    const seen = new Map<string, number>();
    for (const r of recs) {
      const d = f(r);
      if (!d.keep) seen.set(d.reason, (seen.get(d.reason) ?? 0) + 1);
    }
    expect([...seen.keys()].length).toBeGreaterThanOrEqual(2); // the two corpora hit several rules, not one
    for (const reason of seen.keys()) expect(DROP_REASONS).toContain(reason);
  });
});

describe('filter spec', () => {
  test('defaults are status 200 and contains eng', () => {
    expect(parseFilterSpec({})).toEqual({ status: ['200'], languages: { mode: 'contains', codes: ['eng'] } });
    expect(parseFilterSpec(undefined)).toEqual(parseFilterSpec({}));
  });

  test('every problem is reported at once with a typed error', () => {
    let caught: unknown;
    try {
      parseFilterSpec({ status: '200', languages: { mode: 'any', codes: [] }, urlRegex: '(', colour: 'red' });
    } catch (err) {
      caught = err;
    }
    expect(hasCode(caught, 'CCP_ERR_FILTER_SPEC')).toBe(true);
    const issues = (caught as { detail: { issues: string[] } }).detail.issues;
    for (const field of ['status', 'languages.mode', 'languages.codes', 'urlRegex']) {
      expect(issues.some((i) => i.startsWith(`${field}:`))).toBe(true);
    }
    expect(issues.some((i) => i.includes('colour'))).toBe(true);
  });

  test('domain rules without a registeredDomainOf dependency are refused', () => {
    expect(() => compileFilter({ domainsDeny: ['example.com'] })).toThrow(expect.objectContaining({ code: 'CCP_ERR_FILTER_SPEC' }));
  });
});

describe('compileFilter: the line gate it carries', () => {
  test('set when the spec has a status, language or mime rule (with those reasons, in the filter\'s order); absent otherwise', () => {
    expect(compileFilter({}).lineGate?.reasons).toEqual(['status', 'language']);
    expect(compileFilter({ status: null, mimes: ['text/html'], mimeDetected: [] }).lineGate?.reasons).toEqual(['language', 'mime', 'mime_detected']);
    expect(compileFilter({ status: null, languages: null }).lineGate).toBeUndefined();
    expect(compileFilter({ status: null, languages: null, urlRegex: 'x' }).lineGate).toBeUndefined();
  });
});
