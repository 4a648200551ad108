import { surtOf } from '../url';
import { matchesPage, parseStatusMatch, primaryLanguage, selectPage, type PageQuery, type PageRow } from './page-query';

/** A deterministic pseudo-random domain: hosts, paths, http/https twins (one SURT, two URLs), three datasets. */
function rowsOf(n: number, seed = 7): PageRow[] {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const hosts = ['example.com', 'www.example.com', 'blog.example.com', 'a.b.example.com', 'example.com:8080'];
  const out: PageRow[] = [];
  const seen = new Set<string>();
  while (out.length < n) {
    const scheme = rnd() < 0.2 ? 'http' : 'https';
    const url = `${scheme}://${hosts[Math.floor(rnd() * hosts.length)]}/p${Math.floor(rnd() * 50)}${rnd() < 0.3 ? `?b=${Math.floor(rnd() * 3)}&a=1` : ''}`;
    const datasetId = 1 + Math.floor(rnd() * 3);
    if (seen.has(`${datasetId} ${url}`)) continue;
    seen.add(`${datasetId} ${url}`);
    const statuses = [200, 200, 200, 301, 404, 500];
    out.push({
      datasetId, url, surt: surtOf(url), ts: Date.UTC(2030, 0, 1) + Math.floor(rnd() * 20) * 86_400_000, status: statuses[Math.floor(rnd() * statuses.length)]!,
      title: null, contentLength: rnd() < 0.1 ? null : Math.floor(rnd() * 5) * 1000, language: rnd() < 0.5 ? 'eng' : null,
    });
  }
  return out;
}

const base: PageQuery = { datasetIds: null, from: null, to: null, status: null, minSize: null, maxSize: null, sort: 'surt', order: 'asc', after: null, limit: 7 };

/** Every page of a query, following `next` until null. */
function walk(rows: PageRow[], q: PageQuery): { seen: PageRow[]; totals: number[] } {
  const seen: PageRow[] = [];
  const totals: number[] = [];
  let after: PageQuery['after'] = null;
  for (let guard = 0; guard < 10_000; guard++) {
    const p: ReturnType<typeof selectPage<PageRow>> = selectPage(rows, { ...q, after });
    seen.push(...p.items);
    totals.push(p.total);
    if (p.next === null) return { seen, totals };
    after = p.next;
  }
  throw new Error('paging did not end');
}

describe('selectPage', () => {
  const rows = rowsOf(400);

  it.each([
    ['row key', { sort: 'surt' as const, order: 'asc' as const }],
    ['row key, descending', { sort: 'surt' as const, order: 'desc' as const }],
    ['time', { sort: 'ts' as const, order: 'asc' as const }],
    ['size, largest first', { sort: 'size' as const, order: 'desc' as const }],
  ])('paging by %s visits every matching row exactly once, in order, with an exact total', (_name, o) => {
    const q = { ...base, ...o, status: parseStatusMatch('2xx,404'), from: Date.UTC(2030, 0, 3), to: Date.UTC(2030, 0, 15) };
    const want = rows.filter((r) => matchesPage(r, q));
    expect(want.length).toBeGreaterThan(50);
    const { seen, totals } = walk(rows, q);
    expect(new Set(totals)).toEqual(new Set([want.length]));
    expect(seen).toHaveLength(want.length);
    expect(new Set(seen)).toEqual(new Set(want));
    const dir = o.order === 'desc' ? -1 : 1;
    for (let i = 1; i < seen.length; i++) {
      const [a, b] = [seen[i - 1]!, seen[i]!];
      const va = o.sort === 'ts' ? a.ts : o.sort === 'size' ? (a.contentLength ?? -1) : 0;
      const vb = o.sort === 'ts' ? b.ts : o.sort === 'size' ? (b.contentLength ?? -1) : 0;
      expect(dir * (vb - va)).toBeGreaterThanOrEqual(0);
      if (va === vb) expect(dir * (a.surt + '\u0000' + a.url < b.surt + '\u0000' + b.url ? 1 : a.surt === b.surt && a.url === b.url ? 0 : -1)).toBeGreaterThanOrEqual(0);
    }
  });

  it('row key order puts the registered domain first, then subdomains, and the http/https twins of one SURT side by side', () => {
    const { seen } = walk(rows, { ...base, limit: 1000 });
    const firstSub = seen.findIndex((r) => r.surt.startsWith('com,example,'));
    expect(firstSub).toBeGreaterThan(0);
    expect(seen.slice(0, firstSub).every((r) => r.surt.startsWith('com,example)') || r.surt.startsWith('com,example:'))).toBe(true);
    const twins = seen.findIndex((r, i) => i > 0 && r.surt === seen[i - 1]!.surt && r.url !== seen[i - 1]!.url);
    expect(twins).toBeGreaterThan(0);
  });

  it('filters: datasets, time bounds (to exclusive), status codes and classes, sizes (a row without a size never matches a bound)', () => {
    const t = Date.UTC(2030, 0, 5);
    expect(selectPage(rows, { ...base, datasetIds: [2], limit: 1000 }).items.every((r) => r.datasetId === 2)).toBe(true);
    const at = selectPage(rows, { ...base, from: t, to: t + 86_400_000, limit: 1000 });
    expect(at.items.length).toBeGreaterThan(0);
    expect(at.items.every((r) => r.ts === t)).toBe(true);
    expect(selectPage(rows, { ...base, from: t, to: t, limit: 1000 }).total).toBe(0);
    expect(selectPage(rows, { ...base, status: parseStatusMatch('404,5xx'), limit: 1000 }).items.every((r) => r.status === 404 || r.status === 500)).toBe(true);
    const sized = selectPage(rows, { ...base, minSize: 1000, maxSize: 2000, limit: 1000 });
    expect(sized.items.every((r) => r.contentLength !== null && r.contentLength >= 1000 && r.contentLength <= 2000)).toBe(true);
    expect(selectPage(rows, { ...base, minSize: 0, limit: 1000 }).total).toBe(rows.filter((r) => r.contentLength !== null).length);
  });

  it('a cursor past the last row gives an empty page, and the input is left as it was', () => {
    const copy = [...rows];
    const last = walk(rows, base).seen.at(-1)!;
    const p = selectPage(rows, { ...base, after: { value: null, surt: last.surt, url: last.url, datasetId: last.datasetId } });
    expect([p.items.length, p.next, p.total]).toEqual([0, null, rows.length]);
    expect(rows).toEqual(copy);
  });
});

describe('parseStatusMatch and primaryLanguage', () => {
  it('reads codes and classes, refuses anything else', () => {
    const m = parseStatusMatch('404, 5XX,200')!;
    expect([...m.codes].sort()).toEqual([200, 404]);
    expect([...m.classes]).toEqual([5]);
    for (const bad of ['', '4x', '600', 'abc', '404,', '40', '1000']) expect(parseStatusMatch(bad)).toBeNull();
  });

  it('takes the first code of a CDX language list', () => {
    expect(primaryLanguage('eng,deu')).toBe('eng');
    expect(primaryLanguage('fra')).toBe('fra');
    expect(primaryLanguage('')).toBeNull();
    expect(primaryLanguage(null)).toBeNull();
  });
});

describe('link counts (docs/links.md)', () => {
  const rows = rowsOf(300, 11).map((r, i) => (i % 10 === 9 ? r : { ...r, inlinks: (i * 7) % 5, outlinks: (i * 3) % 4 }));
  it('orders by inlinks or outlinks (ties by row key), every row once across pages, rows without counts last ascending', () => {
    for (const sort of ['inlinks', 'outlinks'] as const) {
      for (const order of ['asc', 'desc'] as const) {
        const { seen, totals } = walk(rows, { ...base, sort, order });
        expect(new Set(totals)).toEqual(new Set([rows.length]));
        expect(new Set(seen)).toEqual(new Set(rows));
        const v = (r: PageRow): number => r[sort] ?? -1;
        for (let k = 1; k < seen.length; k++) expect((order === 'asc' ? 1 : -1) * (v(seen[k]!) - v(seen[k - 1]!))).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('filters by min_inlinks and max_outlinks; a row without link counts matches neither', () => {
    expect(rows.filter((r) => matchesPage(r, { ...base, minInlinks: 3 }))).toEqual(rows.filter((r) => r.inlinks !== undefined && r.inlinks >= 3));
    const dead = rows.filter((r) => matchesPage(r, { ...base, maxOutlinks: 0 }));
    expect(dead.length).toBeGreaterThan(0);
    expect(dead).toEqual(rows.filter((r) => r.outlinks === 0));
  });
});
