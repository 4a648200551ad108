import { openSync, readSync, closeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { decodeHTMLAttribute } from 'entities';
import { canonicalizeUrl, registeredDomainOf, layout } from '@ccpipe/core';
import { closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { processBatch } from '@ccpipe/worker';
import { openIndexSource, runMerge, type LakeIndexSource } from '@ccpipe/index';
import { Acl, startApi, type ApiServer } from '@ccpipe/api';
import { CC_MIRROR_DEV, DEV_CRAWLS } from './support/corpus';
import { devBatches, devStore } from './support/dev-batches';
import { readParquetRows } from './support/parquet';

// The link graph over the whole pipeline: cc-mirror-dev, every record kept → worker (real extraction) → merger → HTTP
// API, against an independent reading of the mirror: each indexed HTML page's WARC record gunzipped and its links
// found by the regular expressions below (not ccpipe's DOM extraction), resolved as WHATWG resolves them.

/** One indexed page, as the part the worker wrote has it. */
interface Page {
  datasetId: number;
  url: string;
  domain: string;
  filename: string;
  offset: number;
  length: number;
  /** Extraction ran and succeeded (text not null): the worker recorded its links. */
  extracted: boolean;
  mime: string;
  status: number;
}

/** Elements whose content is text to the HTML tokenizer (noscript too: browsers run with scripting on). */
const RAW_TEXT = new Set(['script', 'style', 'noscript', 'xmp', 'iframe', 'noembed', 'noframes', 'textarea', 'title']);

/** One start tag: lower-cased name and attributes (first of a name wins; values entity-decoded). */
interface Tag {
  name: string;
  attrs: Map<string, string>;
}

/**
 * The start tags of a document, found the way the HTML tokenizer finds them: comments and `<!…>`/`<?…>` skipped,
 * attribute values quoted with either quote or unquoted (so a `<a href>` inside an attribute value is no tag), and the
 * text of raw-text elements (script, style, noscript, textarea, title, …) skipped to their end tag, except inside SVG
 * and MathML; a `<template>`'s content left out (it is not part of the document tree).
 */
function startTags(html: string): Tag[] {
  const out: Tag[] = [];
  const n = html.length;
  let i = 0;
  let template = 0;
  let foreign = 0;
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    i = lt + 1;
    if (html.startsWith('!--', i)) {
      const e = html.indexOf('-->', i + 3);
      i = e < 0 ? n : e + 3;
      continue;
    }
    if (html[i] === '!' || html[i] === '?') {
      const e = html.indexOf('>', i);
      i = e < 0 ? n : e + 1;
      continue;
    }
    const end = html[i] === '/';
    let j = end ? i + 1 : i;
    if (!/[A-Za-z]/.test(html[j] ?? '')) continue;
    const nameStart = j;
    while (j < n && !/[\s/>]/.test(html[j]!)) j++;
    const name = html.slice(nameStart, j).toLowerCase();
    const attrs = new Map<string, string>();
    // attributes, up to the tag's '>'
    for (;;) {
      while (j < n && /[\s/]/.test(html[j]!)) j++;
      if (j >= n || html[j] === '>') break;
      const a = j;
      j++; // a name may start with '=' or a quote (a parse error the tokenizer keeps as part of the name)
      while (j < n && !/[\s/>=]/.test(html[j]!)) j++;
      const attr = html.slice(a, j).toLowerCase();
      while (j < n && /\s/.test(html[j]!)) j++;
      let value = '';
      if (html[j] === '=') {
        j++;
        while (j < n && /\s/.test(html[j]!)) j++;
        const q = html[j];
        if (q === '"' || q === "'") {
          const e = html.indexOf(q, j + 1);
          value = html.slice(j + 1, e < 0 ? n : e);
          j = e < 0 ? n : e + 1;
        } else {
          const v = j;
          while (j < n && !/[\s>]/.test(html[j]!)) j++;
          value = html.slice(v, j);
        }
      }
      if (!attrs.has(attr)) attrs.set(attr, decodeHTMLAttribute(value));
    }
    i = j + 1;
    const selfClosing = html[j - 1] === '/';
    if (end) {
      if (name === 'template' && template > 0) template--;
      else if ((name === 'svg' || name === 'math') && foreign > 0) foreign--;
      continue;
    }
    // a template's content is a fragment of its own, not part of the document's tree
    if (name === 'template') {
      template++;
      continue;
    }
    if (template > 0) continue;
    out.push({ name, attrs });
    // inside SVG or MathML a tag may close itself, and <title>, <style> hold markup
    if ((name === 'svg' || name === 'math') && !selfClosing) foreign++;
    if (RAW_TEXT.has(name) && foreign === 0) {
      const close = new RegExp(`</${name}[\\s/>]`, 'gi');
      close.lastIndex = i;
      const m = close.exec(html);
      i = m === null ? n : m.index;
    }
  }
  return out;
}

/**
 * A page's outlinks as the issue defines them, from the raw HTML: `<a href>` and `<area href>` in any letter case,
 * resolved against the first `<base href>`, http(s) only, fragment dropped, canonicalized, the page itself and
 * duplicates left out.
 */
function linksOfHtml(html: string, pageUrl: string): string[] {
  const tags = startTags(html);
  let base: URL;
  try {
    base = new URL(pageUrl);
  } catch {
    return [];
  }
  const baseHref = tags.find((t) => t.name === 'base' && t.attrs.has('href'))?.attrs.get('href')?.trim();
  if (baseHref) {
    try {
      base = new URL(baseHref, base);
    } catch {
      // an unparsable base leaves the page URL
    }
  }
  // the worker keeps a page's first 1,000 distinct links (WHATWG-serialized, before canonicalization; docs/links.md)
  const first = new Set<string>();
  const out = new Set<string>();
  for (const t of tags) {
    if (t.name !== 'a' && t.name !== 'area') continue;
    const raw = t.attrs.get('href');
    if (raw === undefined) continue;
    const href = raw.trim();
    if (href.startsWith('#')) continue;
    let u: URL;
    try {
      u = new URL(href, base);
    } catch {
      continue;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
    u.hash = '';
    if (first.has(u.href)) continue;
    if (first.size === 1000) break;
    first.add(u.href);
    try {
      const c = canonicalizeUrl(u.href);
      if (c.url !== pageUrl) out.add(c.url);
    } catch {
      // not canonicalizable: no link
    }
  }
  return [...out];
}

/** The HTML body of a WARC response record at (offset, length) of a mirror file, decoded by its declared charset. */
function htmlOf(p: Page): string {
  const fd = openSync(join(CC_MIRROR_DEV, p.filename), 'r');
  const buf = Buffer.alloc(p.length);
  try {
    readSync(fd, buf, 0, p.length, p.offset);
  } finally {
    closeSync(fd);
  }
  const rec = gunzipSync(buf);
  const warcEnd = rec.indexOf('\r\n\r\n');
  const httpEnd = rec.indexOf('\r\n\r\n', warcEnd + 4);
  const head = rec.subarray(warcEnd + 4, httpEnd).toString('latin1');
  const body = rec.subarray(httpEnd + 4);
  // the declared charset: the HTTP header's, else a <meta> in the first 1,024 bytes, else UTF-8
  const sniff = body.subarray(0, 1024).toString('latin1');
  const charset = /charset=["']?([\w-]+)/i.exec(head)?.[1] ?? /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(sniff)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset.toLowerCase()).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

let dir: string;
let server: ApiServer | undefined;
let source: LakeIndexSource | undefined;
const ids: Record<string, number> = {};
/** Per dataset: page URL → the page (latest capture, as the merge keeps it). */
const pages = new Map<number, Map<string, Page>>();

async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(server!.url + path, { headers });
  return { status: res.status, body: await res.json() };
}

/** Every item of a paged link listing, following next_cursor; the total must hold on every page. */
async function walk(path: string, headers: Record<string, string> = {}): Promise<{ items: any[]; total: number; first: any }> {
  const items: any[] = [];
  let cursor: string | null = null;
  let total = -1;
  let first: any = null;
  for (let guard = 0; guard < 1000; guard++) {
    const r = await get(path + (cursor === null ? '' : `&cursor=${cursor}`), headers);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.body)}`);
    first ??= r.body;
    if (total >= 0) expect(r.body.total).toBe(total);
    total = r.body.total;
    items.push(...r.body.items);
    cursor = r.body.next_cursor;
    if (cursor === null) return { items, total, first };
  }
  throw new Error('paging did not end');
}

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => a.size === b.size && [...a].every((x) => b.has(x));

/** Runs `f` over `items`, 8 at a time. */
async function each<T>(items: readonly T[], f: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < items.length) await f(items[next++]!);
  }));
}

const graphs = new Map<number, ReturnType<typeof buildGraph>>();
/** The independent graph of a dataset (built once). */
function graphOf(datasetId: number): ReturnType<typeof buildGraph> {
  let g = graphs.get(datasetId);
  if (g === undefined) graphs.set(datasetId, (g = buildGraph(datasetId)));
  return g;
}

/** The independent graph of a dataset: target → linking pages, page → targets, domain → linking pages outside it. */
function buildGraph(datasetId: number) {
  const inlinks = new Map<string, Set<string>>();
  const out = new Map<string, Set<string>>();
  const byDomain = new Map<string, Set<string>>();
  const linkingDomains = new Map<string, Set<string>>();
  for (const p of pages.get(datasetId)!.values()) {
    if (!p.extracted) continue;
    for (const t of linksOfHtml(htmlOf(p), p.url)) {
      const c = canonicalizeUrl(t);
      const d = c.domain ?? c.host;
      inlinks.set(t, (inlinks.get(t) ?? new Set()).add(p.url));
      out.set(p.url, (out.get(p.url) ?? new Set()).add(t));
      if (d !== p.domain) {
        byDomain.set(d, (byDomain.get(d) ?? new Set()).add(p.url));
        linkingDomains.set(d, (linkingDomains.get(d) ?? new Set()).add(p.domain));
      }
    }
  }
  return { inlinks, out, byDomain, linkingDomains };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-links-'));
  const { store, ids: named, deps } = await devStore(dir);
  Object.assign(ids, named);
  for (const crawl of DEV_CRAWLS) {
    const id = ids[crawl]!;
    const latest = new Map<string, Page & { ts: number }>();
    for (const b of await devBatches(crawl, { datasetId: id, batchSize: 200, filter: { status: null, languages: null } })) {
      await processBatch(b, deps, { concurrency: 8, includeText: true });
      for (const r of await readParquetRows((await store.get(layout.batchPart(id, b.id)))!)) {
        const p = {
          datasetId: id, url: r['url'] as string, domain: r['domain'] as string, filename: r['warc_filename'] as string,
          offset: Number(r['warc_offset']), length: Number(r['warc_length']), extracted: r['text'] !== null && r['text'] !== undefined,
          mime: r['mime'] as string, status: Number(r['status']), ts: Number(r['ts'] instanceof Date ? (r['ts'] as Date).getTime() : r['ts']),
        };
        // the merge's rule: the latest capture wins, then the later WARC position
        const had = latest.get(p.url);
        if (had === undefined || had.ts < p.ts || (had.ts === p.ts && (had.filename < p.filename || (had.filename === p.filename && had.offset < p.offset)))) latest.set(p.url, p);
      }
    }
    pages.set(id, new Map([...latest].map(([u, p]) => [u, p])));
  }
  await runMerge({ store, dataDir: dir, rowGroupSize: 64, keepVersions: 3, graceMs: 60_000 });
  source = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
  const acl = Acl.parse(JSON.stringify({ v: 1, tokens: [{ name: 'all', token: 'token-for-all-datasets', datasets: '*' }, { name: 'first', token: 'token-for-the-first-crawl', datasets: [DEV_CRAWLS[0]] }] }));
  server = await startApi({ source, port: 0, acl });
}, 600_000);

afterAll(async () => {
  await server?.close();
  await source?.close();
  await closeDuckDbParquetEngine();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const ALL = { authorization: 'Bearer token-for-all-datasets' };
const FIRST = { authorization: 'Bearer token-for-the-first-crawl' };

describe('the link graph over HTTP on cc-mirror-dev, against links read from the raw HTML', () => {
  it('inlinks of linked URLs: exact total and the same linking pages, per dataset (every URL linked twice or more, every 8th of the others)', async () => {
    for (const crawl of DEV_CRAWLS) {
      const id = ids[crawl]!;
      const g = graphOf(id);
      const targets = [...g.inlinks].filter(([, s], k) => s.size > 1 || k % 8 === 0);
      expect(targets.filter(([, s]) => s.size > 1).length).toBeGreaterThan(50);
      const wrong: unknown[] = [];
      await each(targets, async ([target, sources]) => {
        const r = await walk(`/v1/url/links?url=${encodeURIComponent(target)}&direction=in&dataset_id=${id}&limit=1000`, ALL);
        const got = new Set(r.items.map((i) => i.url as string));
        if (r.total !== sources.size || !sameSet(got, sources)) wrong.push({ target, total: r.total, want: [...sources], got: [...got] });
        for (const i of r.items) expect(i.ts).toMatch(/^\d{4}-\d\d-\d\dT/);
      });
      expect(wrong).toEqual([]);
      // paging: the most linked URLs walked 3 at a time give the same pages, each once
      for (const [target, sources] of [...g.inlinks].sort((a, b) => b[1].size - a[1].size).slice(0, 3)) {
        const r = await walk(`/v1/url/links?url=${encodeURIComponent(target)}&direction=in&dataset_id=${id}&limit=3`, ALL);
        expect(r.items.map((i) => i.url)).toHaveLength(sources.size);
        expect(new Set(r.items.map((i) => i.url))).toEqual(sources);
      }
    }
  }, 600_000);

  it('outlinks of every page: exact total and the same targets; counts on /v1/url', async () => {
    const id = ids[DEV_CRAWLS[0]]!;
    const g = graphOf(id);
    const sample = [...pages.get(id)!.values()].filter((p) => p.extracted);
    const wrong: unknown[] = [];
    await each(sample, async (p) => {
      const want = g.out.get(p.url) ?? new Set<string>();
      const r = await walk(`/v1/url/links?url=${encodeURIComponent(p.url)}&direction=out&dataset_id=${id}&limit=1000`, ALL);
      const got = new Set(r.items.map((i) => i.url as string));
      if (r.total !== want.size || !sameSet(got, want)) wrong.push({ page: p.url, total: r.total, missing: [...want].filter((u) => !got.has(u)), extra: [...got].filter((u) => !want.has(u)) });
    });
    expect(wrong).toEqual([]);
    // the counts each capture carries
    for (const p of sample.slice(0, 40)) {
      const r = await get(`/v1/url?url=${encodeURIComponent(p.url)}`, ALL);
      const c = r.body.captures.find((x: any) => x.dataset_id === id);
      expect([c.inlinks, c.outlinks]).toEqual([g.inlinks.get(p.url)?.size ?? 0, g.out.get(p.url)?.size ?? 0]);
    }
  }, 600_000);

  it('linking pages of every linked domain: distinct pages outside it, their domains counted', async () => {
    for (const crawl of DEV_CRAWLS) {
      const id = ids[crawl]!;
      const g = graphOf(id);
      const wrong: unknown[] = [];
      // hosts without a registered domain (a link to `http://http//…`) are keyed by host, which /v1/domain does not take
      await each([...g.byDomain].filter(([d]) => registeredDomainOf(d) === d), async ([domain, sources]) => {
        const r = await walk(`/v1/domain/${encodeURIComponent(domain)}/inlinks?dataset_id=${id}&limit=${sources.size > 20 ? 9 : 1000}`, ALL);
        const got = new Set(r.items.map((i) => i.url as string));
        if (r.total !== sources.size || r.first.linking_domains !== g.linkingDomains.get(domain)!.size || !sameSet(got, sources)) {
          wrong.push({ domain, total: r.total, want: sources.size, missing: [...sources].filter((u) => !got.has(u)), extra: [...got].filter((u) => !sources.has(u)) });
        }
      });
      expect(wrong).toEqual([]);
    }
  }, 600_000);

  it('pages of a domain by inlinks, with link counts on each row; dead ends by max_outlinks=0; min_inlinks', async () => {
    const id = ids[DEV_CRAWLS[0]]!;
    const g = graphOf(id);
    const rowsOf = (domain: string): Page[] => [...pages.get(id)!.values()].filter((p) => p.domain === domain);
    // the crawled domains whose pages are linked to most
    const byDomain = new Map<string, number>();
    for (const p of pages.get(id)!.values()) byDomain.set(p.domain, (byDomain.get(p.domain) ?? 0) + (g.inlinks.get(p.url)?.size ?? 0));
    const domains = [...byDomain].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([d]) => d);
    expect(byDomain.get(domains[0]!)).toBeGreaterThan(5);
    for (const domain of domains) {
      const want = new Map(rowsOf(domain).map((p) => [p.url, { inlinks: g.inlinks.get(p.url)?.size ?? 0, outlinks: g.out.get(p.url)?.size ?? 0 }]));
      const r = await walk(`/v1/domain/${domain}/pages?dataset_id=${id}&sort=inlinks&order=desc&limit=7`, ALL);
      expect(r.total).toBe(want.size);
      expect(new Map(r.items.map((i) => [i.url, { inlinks: i.inlinks, outlinks: i.outlinks }]))).toEqual(want);
      for (let k = 1; k < r.items.length; k++) expect(r.items[k - 1].inlinks).toBeGreaterThanOrEqual(r.items[k].inlinks);
      const dead = await walk(`/v1/domain/${domain}/pages?dataset_id=${id}&max_outlinks=0&limit=1000`, ALL);
      expect(new Set(dead.items.map((i) => i.url))).toEqual(new Set([...want].filter(([, c]) => c.outlinks === 0).map(([u]) => u)));
      const linked = await walk(`/v1/domain/${domain}/pages?dataset_id=${id}&min_inlinks=2&sort=outlinks&limit=1000`, ALL);
      expect(new Set(linked.items.map((i) => i.url))).toEqual(new Set([...want].filter(([, c]) => c.inlinks >= 2).map(([u]) => u)));
    }
    // link order and filters are per domain: /v1/pages refuses them
    expect((await get('/v1/pages?sort=inlinks', ALL)).body.error.detail.param).toBe('sort');
    expect((await get('/v1/pages?min_inlinks=1', ALL)).body.error.detail.param).toBe('min_inlinks');
  });

  it('answers only from the datasets the caller may see; a domain nothing links to is total 0, not 404', async () => {
    const [d40, d44] = [ids[DEV_CRAWLS[0]]!, ids[DEV_CRAWLS[1]]!];
    const both = [graphOf(d40), graphOf(d44)];
    const target = [...both[1]!.inlinks.keys()].find((t) => both[1]!.inlinks.get(t)!.size > 0 && both[0]!.inlinks.has(t))!;
    const all = await walk(`/v1/url/links?url=${encodeURIComponent(target)}&direction=in`, ALL);
    expect(all.total).toBe(both[0]!.inlinks.get(target)!.size + both[1]!.inlinks.get(target)!.size);
    expect(all.first.by_dataset.map((d: any) => d.dataset_id)).toEqual([d40, d44]);
    const first = await walk(`/v1/url/links?url=${encodeURIComponent(target)}&direction=in`, FIRST);
    expect(first.total).toBe(both[0]!.inlinks.get(target)!.size);
    expect(first.items.every((i) => i.dataset_id === d40)).toBe(true);
    expect((await get(`/v1/url/links?url=${encodeURIComponent(target)}&direction=in&dataset_id=${d44}`, FIRST)).status).toBe(404);
    const none = await get('/v1/domain/nobody-links-here.example/inlinks', ALL);
    expect([none.status, none.body.total, none.body.linking_domains, none.body.items]).toEqual([200, 0, 0, []]);
  });

  it('refuses bad parameters with 400 naming them', async () => {
    for (const [path, param] of [
      ['/v1/url/links', 'url'],
      ['/v1/url/links?url=https://a.example/&direction=sideways', 'direction'],
      ['/v1/url/links?url=notaurl', 'url'],
      ['/v1/url/links?url=https://a.example/&limit=0', 'limit'],
      ['/v1/url/links?url=https://a.example/&cursor=xyz', 'cursor'],
      ['/v1/domain/example.com/inlinks?bogus=1', 'bogus'],
    ] as const) {
      const r = await get(path, ALL);
      expect([path, r.status, r.body.error.detail?.param]).toEqual([path, 400, param]);
    }
  });
});
