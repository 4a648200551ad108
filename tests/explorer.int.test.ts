/**
 * The explorer page end to end in real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core).
 *
 * Over the lake: cc-mirror-dev (both crawls) → batcher → worker (real extraction, so real titles and text) → merger →
 * openIndexSource → the API on a real port → the page: the start view, search, the domain view and its chart, crawl
 * rows that open, cursor paging forward and back, reload, the filters against /pages, the page view against
 * /v1/url?include=text, full-text search against /v1/search (global and domain-scoped, paged, a refused query), errors,
 * an ACL token. Over a lake of the same mirror with every record kept: the link graph (the domain's linking pages,
 * link counts on rows and captures, "most linked to", dead ends, min inlinks, the page view's link lists). Over a
 * MemoryIndexSource of the same mirror with every record kept (the views the lake does not answer yet: per-crawl facts
 * and the largest domains): the chart's status mix, the largest-domains list, an IDN domain, a cursor whose version
 * is collected, the status corner mid-ingest, a version without search and a search past its time limit, a version
 * without a link graph, and every view at 400 px. Every non-loopback request is blocked and must never be attempted. Screenshots of each view are
 * saved under tests/output/ (gitignored).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import {
  SearchError, canonicalizeUrl, compileFilter, emptyDatasetRegistry, ensureDatasetIn, extractDocument, layout, parseCdxBlock, parseClusterIdx, serializeDatasetRegistry,
  type IndexSource, type IndexView,
} from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine, writeParquetPart } from '@ccpipe/adapters';
import { processBatch } from '@ccpipe/worker';
import { openIndexSource, runMerge } from '@ccpipe/index';
import { Acl, MemoryIndexSource, buildMemoryView, startApi, type ApiServer, type MemoryCapture, type MemoryDataset } from '@ccpipe/api';
import { CC_MIRROR_DEV, DEV_CRAWLS, REPO_ROOT, loadOracle } from './support/corpus';
import { inCi } from './support/ci';
import { devBatches, devReader, devStore } from './support/dev-batches';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const OUTPUT = join(REPO_ROOT, 'tests', 'output');
const TOKEN = 'explorer-test-token-0123456789';
const PAGE_SIZE = 50;

const runs = existsSync(CHROMIUM) || inCi();
if (!runs) {
  console.warn(`explorer.int.test: skipped — ${CHROMIUM} is missing (install Debian's chromium; under CI this test always runs)`);
}

const oracle = loadOracle();
const canon = (u: string): string => canonicalizeUrl(u).url;

/** A browser tab whose every request is watched: only loopback may be asked, anything else is blocked and recorded. */
interface Tab {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  blocked: string[];
  requested: string[];
  pageErrors: string[];
  cspMessages: string[];
  /** Request headers of every API request, with its URL. */
  sent: { url: string; headers: Record<string, string> }[];
}

const isLoopback = (u: string): boolean => {
  if (!/^https?:/.test(u)) return true; // data:, about:, blob: never leave the browser
  const h = new URL(u).hostname;
  return h === '127.0.0.1' || h === 'localhost' || h === '[::1]';
};

async function openTab(viewport: { width: number; height: number }, colorScheme: 'light' | 'dark' = 'light'): Promise<Tab> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  const context = await browser.newContext({ viewport, colorScheme });
  const tab: Tab = { browser, context, page: null as unknown as Page, blocked: [], requested: [], pageErrors: [], cspMessages: [], sent: [] };
  await context.route('**/*', async (route) => {
    const u = route.request().url();
    if (!isLoopback(u)) {
      tab.blocked.push(u);
      await route.abort('blockedbyclient');
      return;
    }
    if (new URL(u).pathname.startsWith('/v1/')) tab.sent.push({ url: u, headers: route.request().headers() });
    await route.continue();
  });
  context.on('request', (r) => void tab.requested.push(r.url()));
  tab.page = await context.newPage();
  tab.page.on('pageerror', (e) => void tab.pageErrors.push(String(e)));
  tab.page.on('console', (m) => {
    if (/Content.Security.Policy|Trusted ?Type/i.test(m.text())) tab.cspMessages.push(m.text());
  });
  return tab;
}

async function closeTab(tab: Tab | null): Promise<void> {
  await tab?.context.close().catch(() => undefined);
  await tab?.browser.close().catch(() => undefined);
}

async function apiJson(server: ApiServer, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(server.url + path, { headers });
  return { status: res.status, body: await res.json() };
}

/** The hash's parameters as the page must hold them (order aside); {} is the start view. */
type HashWant = Record<string, string>;
const domainHash = (domain: string, extra: HashWant = {}): HashWant => ({ view: 'domain', domain, ...extra });
const pageHash = (url: string, capture?: number): HashWant => ({ view: 'page', url, ...(capture === undefined ? {} : { capture: String(capture) }) });

/** Waits until the page has finished rendering a hash holding exactly `want` (its marker: main[data-rendered], data-state). */
async function rendered(page: Page, want: HashWant, state: 'ready' | 'error' = 'ready'): Promise<void> {
  const wanted = JSON.stringify(Object.entries(want).sort());
  await page.waitForFunction(
    ([w, s]) => {
      const g = globalThis as any;
      const m = g.document.getElementById('main');
      const got = JSON.stringify([...new URLSearchParams(g.location.hash.slice(1))].sort());
      return m.dataset.rendered === g.location.hash && m.dataset.state === s && got === w;
    },
    [wanted, state] as const,
    { timeout: 20_000 },
  );
}

interface Row {
  urlId: string;
  datasetId: string;
  url: string;
  href: string | null;
  rel: string | null;
  title: string;
  ts: string | null;
  tsText: string;
  status: string;
  bytes: string | null;
  lang: string;
}
interface ApiPageItem {
  url_id: string;
  url: string;
  dataset_id: number;
  dataset: string | null;
  ts: string;
  status: number | null;
  title: string | null;
  content_length: number | null;
  language: string | null;
  /** With a link graph. */
  inlinks?: number;
  outlinks?: number;
}

function rows(page: Page): Promise<Row[]> {
  return page.evaluate(() =>
    Array.from((globalThis as any).document.querySelectorAll('#rows tr')).map((tr: any) => {
      const a = tr.querySelector('a.link');
      const time = tr.querySelector('time');
      return {
        urlId: tr.dataset.urlId, datasetId: tr.dataset.datasetId, url: (a ?? tr.querySelector('.link')).textContent, href: a ? a.getAttribute('href') : null,
        rel: a ? a.getAttribute('rel') : null, title: tr.querySelector('.open').textContent, ts: time ? time.getAttribute('datetime') : null,
        tsText: time ? time.textContent : '', status: tr.querySelector('.status').textContent, bytes: tr.querySelector('.size').getAttribute('data-bytes'),
        lang: tr.querySelector('.lang').textContent,
      };
    }),
  );
}

/** The page's rows must be exactly the API's rows of the same page. */
function expectRowsAre(shown: Row[], items: ApiPageItem[]): void {
  expect(shown.map((r) => [r.urlId, r.datasetId])).toEqual(items.map((i) => [i.url_id, String(i.dataset_id)]));
  shown.forEach((r, k) => {
    const it = items[k]!;
    expect({ url: r.url, href: r.href, rel: r.rel, ts: r.ts, status: r.status, title: r.title, bytes: r.bytes, lang: r.lang }).toEqual({
      url: it.url, href: new URL(it.url).href, rel: 'noopener noreferrer', ts: it.ts, status: it.status === null ? '—' : String(it.status),
      title: it.title ?? '(no title)', bytes: it.content_length === null ? null : String(it.content_length), lang: it.language ?? '—',
    });
    // human-readable UTC: "10 Nov 2030, 01:23:04 UTC" for 2030-11-10T01:23:04Z
    const [, y, , d, hms] = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}:\d{2}:\d{2})/.exec(it.ts)!;
    expect(r.tsText).toMatch(new RegExp(`^${d} [A-Z][a-z]{2} ${y}, ${hms} UTC$`));
  });
}

/** Every page of /pages for `params`, following next_cursor: the rows and the cursor that led to each page. */
async function apiPages(server: ApiServer, domain: string, params: HashWant): Promise<{ items: ApiPageItem[]; at: string[]; total: number | undefined }[]> {
  const out: { items: ApiPageItem[]; at: string[]; total: number | undefined }[] = [];
  let at: string[] = [];
  for (;;) {
    const q = new URLSearchParams({ ...params, limit: String(PAGE_SIZE), ...(at.length > 0 && { cursor: at[at.length - 1]! }) });
    const { status, body } = await apiJson(server, `/v1/domain/${domain}/pages?${q}`);
    expect(status).toBe(200);
    out.push({ items: body.items, at, total: body.total });
    if (body.next_cursor === null) return out;
    at = [...at, body.next_cursor];
  }
}

/** Presses Tab (at most 25 times) until the focused element matches `selector`; false when it never does. */
async function tabTo(page: Page, selector: string): Promise<boolean> {
  for (let i = 0; i < 25; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((sel) => Boolean((globalThis as any).document.activeElement?.matches(sel)), selector)) return true;
  }
  return false;
}

const activeId = (page: Page): Promise<string> => page.evaluate(() => String((globalThis as any).document.activeElement?.id ?? ''));

async function search(page: Page, text: string): Promise<void> {
  await page.locator('#q').fill(text);
  await page.locator('#q').focus();
  await page.keyboard.press('Enter');
}

/** Types a full-text query into the "Full text" box and presses Enter. */
async function textSearch(page: Page, text: string): Promise<void> {
  await page.locator('#fq').fill(text);
  await page.locator('#fq').press('Enter');
}

const SEARCH_PAGE_SIZE = 20;
const searchHash = (q: string, extra: HashWant = {}): HashWant => ({ view: 'search', q, ...extra });

interface ApiHit {
  url: string;
  dataset_id: number;
  dataset: string | null;
  ts: string;
  title: string | null;
  snippet_parts: { text: string; hit: boolean }[];
}
interface Hit {
  url: string;
  datasetId: string;
  title: string;
  titleHref: string;
  link: string;
  crawl: string;
  ts: string;
  snippet: string;
  marks: string[];
}

/** The hits the results view lists, as the page shows them. */
function hits(page: Page): Promise<Hit[]> {
  return page.evaluate(() =>
    Array.from((globalThis as any).document.querySelectorAll('#hits li.hit')).map((li: any) => ({
      url: li.dataset.url, datasetId: li.dataset.datasetId, title: li.querySelector('a.open').textContent, titleHref: li.querySelector('a.open').getAttribute('href'),
      link: li.querySelector('.hit-url .link').textContent, crawl: li.querySelector('.crawl').textContent, ts: li.querySelector('time').getAttribute('datetime'),
      snippet: li.querySelector('.snippet').textContent, marks: Array.from(li.querySelectorAll('.snippet mark')).map((m: any) => m.textContent),
    })),
  );
}

/** The page's hits must be exactly the API's hits of the same page: title (the URL when none), crawl, time, snippet parts. */
function expectHitsAre(shown: Hit[], items: ApiHit[]): void {
  expect(shown.map((h) => [h.url, h.datasetId])).toEqual(items.map((i) => [i.url, String(i.dataset_id)]));
  shown.forEach((h, k) => {
    const it = items[k]!;
    expect(h).toEqual({
      url: it.url, datasetId: String(it.dataset_id), title: it.title ?? it.url, titleHref: `#${new URLSearchParams(pageHash(it.url))}`, link: it.url,
      crawl: it.dataset, ts: it.ts, snippet: it.snippet_parts.map((p) => p.text).join(''), marks: it.snippet_parts.filter((p) => p.hit).map((p) => p.text),
    });
  });
}

/** The first `pages` pages of /v1/search for `params`, following next_cursor: the hits and the cursors that led to each. */
async function apiSearch(server: ApiServer, params: HashWant, pages: number): Promise<{ body: any; at: string[] }[]> {
  const out: { body: any; at: string[] }[] = [];
  let at: string[] = [];
  while (out.length < pages) {
    const q = new URLSearchParams({ ...params, limit: String(SEARCH_PAGE_SIZE), ...(at.length > 0 && { cursor: at[at.length - 1]! }) });
    const { status, body } = await apiJson(server, `/v1/search?${q}`);
    expect(status).toBe(200);
    out.push({ body, at });
    if (body.next_cursor === null) break;
    at = [...at, body.next_cursor];
  }
  return out;
}

const totalText = (body: any): string => (body.total === 0 ? 'No results' : `${body.total_exact ? '' : 'About '}${body.total.toLocaleString('en-US')} result${body.total === 1 ? '' : 's'}`);

/** Saves a PNG of the page (all of it, or with `fullPage: false` what the viewport shows) under tests/output/. */
async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  await mkdir(OUTPUT, { recursive: true });
  const shot = join(OUTPUT, name);
  await page.screenshot({ path: shot, fullPage });
  expect(statSync(shot).size).toBeGreaterThan(10_000);
}

/** The page scrolls sideways when its content is wider than the viewport (tables must scroll inside their box). */
const pageWidth = (page: Page): Promise<number> => page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);

/** The captures the page view lists: time, crawl, status, language of each, and which is chosen. */
function timeline(page: Page): Promise<{ ts: string; crawl: string; status: string; chosen: boolean }[]> {
  return page.evaluate(() =>
    Array.from((globalThis as any).document.querySelectorAll('#captures a')).map((a: any) => ({
      ts: a.querySelector('time').getAttribute('datetime'), crawl: a.querySelector('.crawl').textContent, status: a.querySelector('.status').textContent,
      chosen: a.getAttribute('aria-current') === 'true',
    })),
  );
}

/** The capture facts (dt → dd text) the page view shows. */
function captureFacts(page: Page): Promise<Record<string, string>> {
  return page.evaluate(() => {
    const dl = (globalThis as any).document.getElementById('capture-facts');
    const out: Record<string, string> = {};
    for (const dt of Array.from(dl.querySelectorAll('dt')) as any[]) out[dt.textContent] = dt.nextElementSibling.textContent;
    return out;
  });
}

/** The link counts of each row shown: [url_id, inlinks, outlinks] from the cells' data-count (null without the cell), and whether each cell's text is the count. */
function linkCounts(page: Page): Promise<{ counts: [string, number | null, number | null][]; textOk: boolean }> {
  return page.evaluate(() => {
    let textOk = true;
    const counts = Array.from((globalThis as any).document.querySelectorAll('#rows tr')).map((tr: any) => {
      const n = (cls: string): number | null => {
        const td = tr.querySelector(`td.${cls}`);
        if (!td || td.dataset.count === undefined) return null;
        if (td.textContent !== Number(td.dataset.count).toLocaleString('en-US')) textOk = false;
        return Number(td.dataset.count);
      };
      return [tr.dataset.urlId, n('inlinks'), n('outlinks')] as [string, number | null, number | null];
    });
    return { counts, textOk };
  });
}

/** The linking pages or outlinks a list shows: [url, dataset id] of each, and whether each opens that URL's page view. */
function linkList(page: Page, id: string): Promise<{ items: [string, string][]; opensPage: boolean }> {
  return page.evaluate((listId) => {
    const lis = Array.from((globalThis as any).document.querySelectorAll(`#${listId} li`)) as any[];
    const opensPage = lis.every((li) => li.querySelector('a.open').getAttribute('href') === `#${new URLSearchParams({ view: 'page', url: li.dataset.url })}`);
    return { items: lis.map((li) => [li.dataset.url, li.dataset.datasetId] as [string, string]), opensPage };
  }, id);
}

const many = (n: number, one: string, more: string): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : more}`;

(runs ? describe : describe.skip)('explorer over the merged lake, in headless Chromium', () => {
  let dir = '';
  let source: IndexSource | null = null;
  let api: ApiServer | null = null;
  let guarded: ApiServer | null = null;
  let tab: Tab | null = null;
  let page: Page;
  let ids: Record<string, number> = {};
  let servedVersion = '';
  // the domain both crawls hold with the most URLs: several pages in each dataset
  const [c40, c44] = DEV_CRAWLS.map((c) => oracle.crawls[c]!.domains);
  const domain = Object.keys(c40!).filter((d) => c44![d]).sort((a, b) => Math.min(c40![b]!.count, c44![b]!.count) - Math.min(c40![a]!.count, c44![a]!.count))[0]!;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccpipe-explorer-'));
    const store = new FsObjectStore({ root: dir });
    let reg = emptyDatasetRegistry();
    for (const crawl of DEV_CRAWLS) reg = ensureDatasetIn(reg, crawl, crawl, '2030-11-10T00:00:00Z').registry;
    await store.put(layout.datasetRegistry(), serializeDatasetRegistry(reg));
    ids = Object.fromEntries(reg.datasets.map((d) => [d.name, d.id]));
    let batches = 0;
    let rowsWritten = 0;
    for (const crawl of DEV_CRAWLS) {
      for (const b of await devBatches(crawl, { datasetId: ids[crawl]! })) {
        const { marker } = await processBatch(
          b,
          { reader: devReader(), store, extract: async (html, url) => extractDocument(html, { url }), writePart: (r) => writeParquetPart(r) },
          { concurrency: 4, includeText: true },
        );
        batches++;
        rowsWritten += marker.rows;
      }
    }
    const merged = await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 60_000 });
    expect(merged.version).not.toBeNull();
    servedVersion = merged.version!;
    source = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    const statusProvider = async (): Promise<object> => ({ batchesDone: batches, rows: rowsWritten, done: true });
    api = await startApi({ source, port: 0, statusProvider });
    guarded = await startApi({
      source, port: 0,
      acl: Acl.parse(JSON.stringify({ v: 1, tokens: [{ name: 'partner', token: TOKEN, datasets: [DEV_CRAWLS[0]] }] })),
    });
    tab = await openTab({ width: 1200, height: 900 });
    page = tab.page;
  }, 600_000);

  afterAll(async () => {
    await closeTab(tab);
    await api?.close();
    await guarded?.close();
    await source?.close();
    await closeDuckDbParquetEngine();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('the start view lists the crawls of /v1/datasets and says the index status in words', async () => {
    const server = api!;
    await page.goto(`${server.url}/`);
    await rendered(page, {});
    const all = (await apiJson(server, '/v1/datasets')).body;
    expect(await page.locator('#overview-rows tr td:first-child').allTextContents()).toEqual([...DEV_CRAWLS]);
    expect(await page.locator('#overview-rows tr td:nth-child(3)').allTextContents()).toEqual(all.datasets.map((d: { url_count: number }) => d.url_count.toLocaleString('en-US')));
    await page.locator('#status-version').waitFor();
    const status = (await apiJson(server, '/v1/status')).body;
    expect(await page.locator('#status-version').textContent()).toBe(status.version);
    // words a user reads, not the provider's field names
    expect(await page.locator('#status').textContent()).toBe(`Index version ${status.version}2 crawls · ingest done`);
    expect(await page.locator('#status-summary').textContent()).toBe('2 crawls · ingest done');
    await screenshot(page, 'explorer-home.png');
  });

  it('searches a host, shows the crawls and the chart of /v1/domain, and pages a crawl by cursor forward, back and after a reload', async () => {
    const server = api!;
    await page.goto(`${server.url}/`);
    await rendered(page, {});
    // search by keyboard with a host spelling: the API's registered domain replaces it in the hash
    await search(page, `WWW.${domain.toUpperCase()}`);
    await rendered(page, domainHash(domain));
    expect(await page.locator('#domain-name').textContent()).toBe(domain);
    expect(await page.locator('#domain-ascii').isHidden()).toBe(true);
    const want = DEV_CRAWLS.map((c) => ({ name: c, id: ids[c]!, urls: new Set(oracle.crawls[c]!.domains[domain]!.urls.map(canon)) }));
    const d = (await apiJson(server, `/v1/domain/${domain}`)).body;
    expect(d.datasets.map((x: any) => [x.dataset_id, x.name, x.url_count])).toEqual(want.map((w) => [w.id, w.name, w.urls.size]));
    expect(await page.locator('#datasets a .name').allTextContents()).toEqual(want.map((w) => w.name));
    expect(await page.locator('#datasets td.count').allTextContents()).toEqual(want.map((w) => String(w.urls.size)));

    // the chart: one bar group per crawl carrying its URL count; the status mix only when the version has facts
    const groups = await page.locator('#chart-plot g.bar-group').evaluateAll((gs: any[]) => gs.map((g) => [g.dataset.datasetId, g.dataset.urlCount]));
    expect(groups).toEqual(d.datasets.map((x: any) => [String(x.dataset_id), String(x.url_count)]));
    const withFacts = d.datasets.some((x: any) => x.status_classes);
    expect(await page.locator('#chart-plot rect.seg').count() > 0).toBe(withFacts);
    expect(await page.locator('#facts-note').isVisible()).toBe(!withFacts);
    expect(await page.locator('#chart-legend').isVisible()).toBe(withFacts);

    // with no crawl chosen the rows are every crawl's, as /pages answers them
    const everyCrawl = await apiPages(server, domain, {});
    expectRowsAre(await rows(page), everyCrawl[0]!.items);
    expect(await page.locator('#pages-title').textContent()).toBe('Pages in every crawl');

    // Tab from the search box reaches the first crawl's link; Enter opens its pages
    await page.locator('#q').focus();
    expect(await tabTo(page, '#datasets a')).toBe(true);
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.getAttribute('data-dataset-id') as string)).toBe(String(want[0]!.id));
    await page.keyboard.press('Enter');
    const w = want[0]!;
    await rendered(page, domainHash(domain, { dataset: String(w.id) }));
    expect(await page.locator('#datasets a[aria-current="true"] .name').textContent()).toBe(w.name);
    expect(await page.locator('#f-dataset').inputValue()).toBe(String(w.id));
    expect(await page.locator('#pages-title').textContent()).toBe(`Pages in ${w.name}`);

    // each page is the API's page for the same query, its cursor stacked in the hash; walk with Next, Enter and n
    const expected = await apiPages(server, domain, { dataset_id: String(w.id) });
    expect(expected.length).toBeGreaterThanOrEqual(3);
    const at = (k: number): HashWant => (k === 0 ? {} : { at: expected[k]!.at.join('.'), v: servedVersion });
    expectRowsAre(await rows(page), expected[0]!.items);
    expect(await page.locator('#range').textContent()).toBe(`Rows 1–${PAGE_SIZE} of ${w.urls.size}`);
    expect(await page.locator('#range-bottom').textContent()).toBe(`Rows 1–${PAGE_SIZE} of ${w.urls.size}`);
    expect(await page.locator('#prev').isDisabled()).toBe(true);
    expect(await tabTo(page, '#next')).toBe(true);
    const seen = (await rows(page)).map((r) => r.url);
    for (let k = 1; k < expected.length; k++) {
      expect(await activeId(page)).toBe('next');
      await page.keyboard.press(k % 2 === 1 ? 'Enter' : 'n');
      await rendered(page, domainHash(domain, { dataset: String(w.id), ...at(k) }));
      const shown = await rows(page);
      expectRowsAre(shown, expected[k]!.items);
      expect(await page.locator('#range').textContent()).toBe(`Rows ${k * PAGE_SIZE + 1}–${k * PAGE_SIZE + shown.length} of ${w.urls.size}`);
      seen.push(...shown.map((r) => r.url));
    }
    expect(await page.locator('#next').isDisabled()).toBe(true);
    // Next went disabled under the keyboard: the focus moved to Previous instead of falling to <body>
    expect(await activeId(page)).toBe('prev');
    // every URL of (domain, crawl) exactly once across the pages, as the oracle says
    expect(seen.length).toBe(w.urls.size);
    expect(new Set(seen)).toEqual(w.urls);

    // Back returns to the previous page's rows; Previous pops one more cursor; reload keeps the place
    const last = expected.length - 1;
    await page.goBack();
    await rendered(page, domainHash(domain, { dataset: String(w.id), ...at(last - 1) }));
    expectRowsAre(await rows(page), expected[last - 1]!.items);
    await page.locator('#prev-bottom').click(); // the pager under the table does the same
    await rendered(page, domainHash(domain, { dataset: String(w.id), ...at(last - 2) }));
    expectRowsAre(await rows(page), expected[last - 2]!.items);
    const before = await rows(page);
    await page.reload();
    await rendered(page, domainHash(domain, { dataset: String(w.id), ...at(last - 2) }));
    expect(await rows(page)).toEqual(before);
    await screenshot(page, 'explorer-domain-lake.png');

    // a click on the other crawl's row (not its link: the whole row opens) lists its pages from the first
    const other = want[1]!;
    await page.locator(`#datasets tr[data-dataset-id="${other.id}"] td.count`).click();
    await rendered(page, domainHash(domain, { dataset: String(other.id) }));
    expect(await page.locator('#range').textContent()).toBe(`Rows 1–${Math.min(PAGE_SIZE, other.urls.size)} of ${other.urls.size}`);
    expectRowsAre(await rows(page), (await apiPages(server, domain, { dataset_id: String(other.id) }))[0]!.items);
  }, 180_000);

  it('filters and sorts the rows as /pages does for the same terms, and names a filter the API refuses', async () => {
    const server = api!;
    const w = ids[DEV_CRAWLS[1]]!;
    await page.goto(`${server.url}/#view=domain&domain=${domain}`);
    await rendered(page, domainHash(domain));
    // a time range that cuts the crawl: from its second capture day on (an independent check below)
    const all = (await apiPages(server, domain, { dataset_id: String(w) })).flatMap((p) => p.items);
    const days = [...new Set(all.map((i) => i.ts.slice(0, 10)))].sort();
    const from = days[Math.min(1, days.length - 1)]!;
    await page.locator('#f-dataset').selectOption(String(w));
    await page.locator('#f-from').fill(from);
    await page.locator('#f-status').fill('2xx');
    await page.locator('#f-sort').selectOption('ts');
    await page.locator('#f-order').selectOption('desc');
    await page.locator('#f-apply').click();
    const terms = { dataset_id: String(w), from, status: '2xx', sort: 'ts', order: 'desc' };
    await rendered(page, domainHash(domain, { dataset: String(w), from, status: '2xx', sort: 'ts', order: 'desc' }));
    const expected = await apiPages(server, domain, terms);
    const shown = await rows(page);
    expectRowsAre(shown, expected[0]!.items);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.every((r) => r.ts! >= from && r.status.startsWith('2'))).toBe(true);
    expect(shown.map((r) => r.ts)).toEqual([...shown.map((r) => r.ts)].sort().reverse());
    expect(await page.locator('#range').textContent()).toBe(`Rows 1–${shown.length} of ${expected[0]!.total}`);
    // the form shows the terms of the hash after a reload
    await page.reload();
    await rendered(page, domainHash(domain, { dataset: String(w), from, status: '2xx', sort: 'ts', order: 'desc' }));
    expect([await page.locator('#f-from').inputValue(), await page.locator('#f-status').inputValue(), await page.locator('#f-sort').inputValue(), await page.locator('#f-order').inputValue()])
      .toEqual([from, '2xx', 'ts', 'desc']);

    // a status the API refuses: its 400 names the parameter, the page names the field; the domain stays to fix it
    await page.locator('#f-status').fill('abc');
    await page.locator('#f-apply').click();
    await rendered(page, domainHash(domain, { dataset: String(w), from, status: 'abc', sort: 'ts', order: 'desc' }), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_BAD_REQUEST');
    expect(await page.locator('#error').getAttribute('data-param')).toBe('status');
    expect(await page.locator('#error .error-text').textContent()).toBe('The filter “Status” was refused; change it and apply again.');
    expect(await page.locator('#domain').isVisible()).toBe(true);
    expect(await page.locator('#filters').isVisible()).toBe(true);
    expect(await page.locator('#pages-body').isHidden()).toBe(true);
    // Clear filters lists every row again
    await page.locator('#f-clear').click();
    await rendered(page, domainHash(domain));
    expectRowsAre(await rows(page), (await apiPages(server, domain, {}))[0]!.items);
  }, 60_000);

  it('the page view shows a URL\'s captures oldest first, the chosen one\'s text, status, language and WARC location', async () => {
    const server = api!;
    // a URL both crawls captured: a history of two
    const url = canon(oracle.crawls[DEV_CRAWLS[0]]!.domains[domain]!.urls.find((u) => oracle.crawls[DEV_CRAWLS[1]]!.domains[domain]!.urls.map(canon).includes(canon(u)))!);
    const answer = (await apiJson(server, `/v1/url?url=${encodeURIComponent(url)}&include=text`)).body;
    const caps = answer.captures as any[];
    expect(caps.length).toBe(2);
    expect(caps.some((c) => typeof c.text === 'string' && c.text.length > 0)).toBe(true);

    // a URL typed with its scheme opens its page view
    await page.goto(`${server.url}/`);
    await rendered(page, {});
    await search(page, url);
    await rendered(page, pageHash(url));
    expect(await timeline(page)).toEqual(caps.map((c, k) => ({ ts: c.ts, crawl: c.dataset, status: `HTTP ${c.status}`, chosen: k === caps.length - 1 })));
    const check = async (c: any): Promise<void> => {
      expect(await page.locator('#page-title').textContent()).toBe(c.title ?? '(no title)');
      expect(await page.locator('#capture-text').textContent()).toBe(c.text ?? '');
      const f = await captureFacts(page);
      expect(f).toMatchObject({ Crawl: c.dataset, 'HTTP status': String(c.status), Language: c.language ?? 'unknown', 'WARC file': c.warc.filename });
      expect(f['WARC record']).toBe(`offset ${c.warc.offset.toLocaleString('en-US')}, ${c.warc.length.toLocaleString('en-US')} bytes`);
      expect(f['Response size']).toContain(c.content_length === null ? 'unknown' : `${c.content_length.toLocaleString('en-US')} bytes`);
    };
    await check(caps[caps.length - 1]);
    expect(await page.locator('#page-url a').getAttribute('href')).toBe(new URL(url).href);
    await screenshot(page, 'explorer-page.png');

    // the older capture by mouse, back to the newer with the n key
    await page.locator('#captures a[data-index="0"]').click();
    await rendered(page, pageHash(url, 0));
    await check(caps[0]);
    await page.locator('#capture-text').focus();
    await page.keyboard.press('n');
    await rendered(page, pageHash(url, 1));
    await check(caps[1]);

    // its domain link opens the domain view, whose row titles open page views
    await page.locator('#page-domain').click();
    await rendered(page, domainHash(domain));
    const first = (await rows(page))[0]!;
    await page.locator('#rows tr a.open').first().click();
    await rendered(page, pageHash(first.url));
    expect((await timeline(page)).length).toBeGreaterThan(0);
  }, 60_000);

  it('full-text search: hits with their marked words and the total, paged by cursor, a hit opening its page view, a domain-scoped search, a refused query', async () => {
    const server = api!;
    const word = 'the';
    await page.goto(`${server.url}/`);
    await rendered(page, {});
    expect(await page.locator('#fq-scope').isHidden()).toBe(true); // nothing to narrow to on the start view
    await textSearch(page, word);
    await rendered(page, searchHash(word));
    const expected = await apiSearch(server, { q: word }, 3);
    const top = expected[0]!.body;
    expect(top.total).toBeGreaterThan(SEARCH_PAGE_SIZE);
    expect(expected.length).toBe(3);
    const shown = await hits(page);
    expectHitsAre(shown, top.items);
    expect(shown.length).toBe(SEARCH_PAGE_SIZE);
    expect(await page.locator('#hits mark').count()).toBeGreaterThan(0);
    // the marked words are the query's word (case and diacritics folded, as the index folds them)
    expect(shown.flatMap((h) => h.marks).every((m) => m.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase() === word)).toBe(true);
    expect(await page.locator('#search-total').textContent()).toBe(totalText(top));
    expect(await page.locator('#search-total').getAttribute('data-total')).toBe(String(top.total));
    const of = `of ${top.total_exact ? '' : 'about '}${top.total.toLocaleString('en-US')}`;
    expect(await page.locator('#search-range').textContent()).toBe(`Results 1–${SEARCH_PAGE_SIZE} ${of}`);
    expect(await page.locator('#search-prev').isDisabled()).toBe(true);
    expect(await page.locator('#search-crawls a[aria-current="true"]').textContent()).toBe('every crawl');
    await screenshot(page, 'explorer-search.png');

    // Next (button, then the n key) stacks the answer's cursors in the hash; Previous and Back pop them; reload keeps the place
    const at = (k: number): HashWant => (k === 0 ? {} : { at: expected[k]!.at.join('.'), v: servedVersion });
    await page.locator('#search-next').click();
    await rendered(page, searchHash(word, at(1)));
    expectHitsAre(await hits(page), expected[1]!.body.items);
    expect(await page.locator('#search-range').textContent()).toBe(`Results ${SEARCH_PAGE_SIZE + 1}–${2 * SEARCH_PAGE_SIZE} ${of}`);
    await page.keyboard.press('n');
    await rendered(page, searchHash(word, at(2)));
    expectHitsAre(await hits(page), expected[2]!.body.items);
    await page.locator('#search-prev-bottom').click();
    await rendered(page, searchHash(word, at(1)));
    expectHitsAre(await hits(page), expected[1]!.body.items);
    await page.goBack();
    await rendered(page, searchHash(word, at(2)));
    await page.goBack();
    await rendered(page, searchHash(word, at(1)));
    await page.reload();
    await rendered(page, searchHash(word, at(1)));
    expectHitsAre(await hits(page), expected[1]!.body.items);
    expect(await page.locator('#fq').inputValue()).toBe(word);
    await page.locator('#search-prev').click();
    await rendered(page, searchHash(word));
    expectHitsAre(await hits(page), top.items);

    // a hit's title opens the page view of its URL; Back returns to the results
    const hit = top.items[0] as ApiHit;
    await page.locator('#hits li.hit a.open').first().click();
    await rendered(page, pageHash(hit.url));
    expect((await timeline(page)).map((t) => t.ts)).toContain(hit.ts);
    await page.goBack();
    await rendered(page, searchHash(word));

    // on a domain view the box can be narrowed to that domain: only its URLs, as /v1/search?domain= answers
    await page.goto(`${server.url}/#view=domain&domain=${domain}`);
    await rendered(page, domainHash(domain));
    expect(await page.locator('#fq-scope').isVisible()).toBe(true);
    expect(await page.locator('#fq-domain-name').textContent()).toBe(domain);
    expect(await page.locator('#fq-domain').isChecked()).toBe(false);
    await page.locator('#fq-domain').check();
    await textSearch(page, word);
    await rendered(page, searchHash(word, { domain }));
    const scoped = (await apiSearch(server, { q: word, domain }, 1))[0]!.body;
    const inDomain = await hits(page);
    expect(inDomain.length).toBeGreaterThan(0);
    expectHitsAre(inDomain, scoped.items);
    for (const h of inDomain) expect(new URL(h.url).hostname).toMatch(new RegExp(`(^|\\.)${domain.replace(/\./g, '\\.')}$`));
    expect(await page.locator('#search-total').textContent()).toBe(totalText(scoped));
    expect(scoped.total).toBeLessThan(top.total);
    expect(await page.locator('#search-domain').textContent()).toBe(domain);
    expect(await page.locator('#fq-domain').isChecked()).toBe(true);
    // a crawl narrows it further; "search every domain" drops the domain and keeps the crawl
    const crawlId = ids[DEV_CRAWLS[1]]!;
    await page.locator(`#search-crawls a[data-dataset-id="${crawlId}"]`).click();
    await rendered(page, searchHash(word, { domain, dataset: String(crawlId) }));
    const inCrawl = (await apiSearch(server, { q: word, domain, dataset_id: String(crawlId) }, 1))[0]!.body;
    expectHitsAre(await hits(page), inCrawl.items);
    expect(inCrawl.items.every((i: ApiHit) => i.dataset_id === crawlId)).toBe(true);
    await page.locator('#search-everywhere').click();
    await rendered(page, searchHash(word, { dataset: String(crawlId) }));
    expect(await page.locator('#fq-scope').isHidden()).toBe(true);
    expectHitsAre(await hits(page), (await apiSearch(server, { q: word, dataset_id: String(crawlId) }, 1))[0]!.body.items);

    // nothing found: said in words, no pager
    await textSearch(page, 'qqzxv');
    await rendered(page, searchHash('qqzxv', { dataset: String(crawlId) }));
    expect(await page.locator('#search-total').textContent()).toBe('No results');
    expect(await page.locator('#search-empty').textContent()).toMatch(/^No page matches qqzxv here/);
    expect(await page.locator('#hits li').count()).toBe(0);
    expect(await page.locator('#search-next').isVisible()).toBe(false);

    // a query of punctuation only: the API's 400 names the problem, shown in place with the query kept to fix it
    await textSearch(page, '"');
    await rendered(page, searchHash('"', { dataset: String(crawlId) }), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_BAD_SEARCH');
    expect(await page.locator('#error .error-text').textContent()).toBe('That search cannot be run: the query has no letters or digits to search for. Change it and search again.');
    expect(await page.locator('#error').textContent()).toContain('HTTP 400');
    expect(await page.locator('#results').isHidden()).toBe(true);
    expect(await page.locator('#fq').inputValue()).toBe('"');
    await page.goBack();
    await rendered(page, searchHash('qqzxv', { dataset: String(crawlId) }));
    expect(await page.locator('#error').isHidden()).toBe(true);
  }, 120_000);

  it('search results at 400 px in the dark colour scheme: no sideways scroll, marks readable', async () => {
    const narrow = await openTab({ width: 400, height: 860 }, 'dark');
    try {
      const p = narrow.page;
      await p.goto(`${api!.url}/#view=search&q=the`);
      await rendered(p, searchHash('the'));
      expect(await p.locator('#hits li').count()).toBe(SEARCH_PAGE_SIZE);
      expect(await pageWidth(p)).toBeLessThanOrEqual(400);
      // the mark's own colours, not the light defaults: light text on a dark ground
      const [fg, bg] = await p.locator('#hits mark').first().evaluate((m: any) => {
        const cs = (globalThis as any).getComputedStyle(m);
        return [cs.color, cs.backgroundColor] as [string, string];
      });
      const lum = (c: string): number => {
        const [r, g, b] = (c.match(/\d+/g) ?? []).map(Number);
        return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
      };
      expect(lum(fg) - lum(bg)).toBeGreaterThan(100);
      await screenshot(p, 'explorer-search-400.png', false);
      expect(narrow.pageErrors).toEqual([]);
      expect(narrow.cspMessages).toEqual([]);
      expect(narrow.blocked).toEqual([]);
    } finally {
      await closeTab(narrow);
    }
  }, 60_000);

  it('shows the API\'s errors as text and goes Back through them', async () => {
    const server = api!;
    await page.goto(`${server.url}/#view=domain&domain=${domain}`);
    await rendered(page, domainHash(domain));
    await search(page, 'no-such-domain-in-the-corpus.com');
    await rendered(page, domainHash('no-such-domain-in-the-corpus.com'), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_DOMAIN_NOT_FOUND');
    expect(await page.locator('#error').textContent()).toContain('No dataset holds no-such-domain-in-the-corpus.com.');
    expect(await page.locator('#error').textContent()).toContain('HTTP 404');
    expect(await page.locator('#domain').isHidden()).toBe(true);
    expect(await page.locator('#pages').isHidden()).toBe(true);
    await search(page, '<b>co.uk');
    await rendered(page, domainHash('<b>co.uk'), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_BAD_DOMAIN');
    expect(await page.locator('#error .error-text').textContent()).toMatch(/^<b>co\.uk is not a domain/);
    expect(await page.locator('#error b').count()).toBe(0);
    await search(page, 'https://no-such-domain-in-the-corpus.com/a');
    await rendered(page, pageHash('https://no-such-domain-in-the-corpus.com/a'), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_URL_NOT_FOUND');
    expect(await page.locator('#page').isHidden()).toBe(true);

    for (let i = 0; i < 3; i++) await page.goBack();
    await rendered(page, domainHash(domain));
    expect(await page.locator('#error').isHidden()).toBe(true);
  }, 60_000);

  it('asks for a token when the API has an ACL, sends it as a bearer token, and shows only what it may see', async () => {
    const server = guarded!;
    const shared = Object.keys(oracle.crawls[DEV_CRAWLS[0]]!.domains).find((d) => oracle.crawls[DEV_CRAWLS[1]]!.domains[d])!;
    await page.goto(`${server.url}/#view=domain&domain=${shared}`);
    await rendered(page, domainHash(shared), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_UNAUTHORIZED');
    expect(await page.locator('#auth').getAttribute('open')).not.toBeNull();
    expect(await activeId(page)).toBe('token');
    await page.keyboard.type(TOKEN);
    await page.keyboard.press('Enter');
    await rendered(page, domainHash(shared));
    expect(await page.locator('#datasets a .name').allTextContents()).toEqual([DEV_CRAWLS[0]]);
    expect(await page.locator('#token-state').textContent()).toBe('(set)');
    const toGuarded = tab!.sent.filter((r) => r.url.startsWith(server.url));
    expect(toGuarded.map((r) => r.headers['authorization'])).toContain(`Bearer ${TOKEN}`);
    expect(tab!.requested.some((u) => u.includes(TOKEN))).toBe(false);
    // the token lives for the tab: a reload still sees the data
    await page.reload();
    await rendered(page, domainHash(shared));
    expect(await page.locator('#datasets a .name').allTextContents()).toEqual([DEV_CRAWLS[0]]);
    await page.locator('#auth summary').click();
    await page.locator('#token-clear').click();
    await rendered(page, domainHash(shared), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_UNAUTHORIZED');
  }, 60_000);

  it('never asked for anything but the API, broke no CSP rule, threw nothing, and pinned every page walk to one version', () => {
    const t = tab!;
    expect(t.requested.length).toBeGreaterThan(10);
    expect(t.blocked).toEqual([]);
    const origins = new Set(t.requested.map((u) => new URL(u).origin));
    expect([...origins].sort()).toEqual([api!.url, guarded!.url].sort());
    expect(t.cspMessages).toEqual([]);
    expect(t.pageErrors).toEqual([]);
    // a first page is pinned to the version its domain counts came from; a later page by its cursor alone
    const pages = t.sent.filter((r) => /\/pages\?/.test(r.url));
    const first = pages.filter((r) => !new URL(r.url).searchParams.has('cursor'));
    const later = pages.filter((r) => new URL(r.url).searchParams.has('cursor'));
    expect([first.length > 3, later.length > 3]).toEqual([true, true]);
    expect(new Set(first.map((r) => r.headers['x-index-version']))).toEqual(new Set([servedVersion]));
    expect(later.map((r) => r.headers['x-index-version']).filter((v) => v !== undefined)).toEqual([]);
  });

  it('the browser enforces the CSP: no HTML sinks (Trusted Types), no remote fetch', async () => {
    await page.goto(`${api!.url}/`);
    await rendered(page, {});
    const probe = await page.evaluate(async () => {
      const doc = (globalThis as any).document;
      const seen: string[] = [];
      doc.addEventListener('securitypolicyviolation', (e: { effectiveDirective: string }) => void seen.push(e.effectiveDirective));
      let sink = 'assigned';
      try {
        doc.getElementById('domain-title').innerHTML = '<b>x</b>';
      } catch (e) {
        sink = (e as Error).name;
      }
      const remote = await fetch('http://192.0.2.1/probe').then(() => 'fetched', (e: Error) => e.name);
      // violation events are queued tasks: wait for both (bounded), then report what was seen
      for (let i = 0; i < 100 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 50));
      return { sink, remote, seen: seen.sort() };
    });
    expect(probe).toEqual({ sink: 'TypeError', remote: 'TypeError', seen: ['connect-src', 'require-trusted-types-for'] });
    // the CSP refused it before the network: the route guard never saw it
    expect(tab!.blocked).toEqual([]);
  });
});

(runs ? describe : describe.skip)('explorer over a lake with every record kept (its link graph), in headless Chromium', () => {
  let dir = '';
  let source: IndexSource | null = null;
  let api: ApiServer | null = null;
  let tab: Tab | null = null;
  let page: Page;
  let linkingHash: HashWant = {}; // the page view a linking page opened (the 400 px check)

  beforeAll(async () => {
    // redirects and errors kept too: pages without outlinks (dead ends) beside linked ones
    dir = await mkdtemp(join(tmpdir(), 'ccpipe-explorer-links-'));
    const { store, ids, deps } = await devStore(dir);
    for (const crawl of DEV_CRAWLS) {
      for (const b of await devBatches(crawl, { datasetId: ids[crawl]!, batchSize: 200, filter: { status: null, languages: null } })) {
        await processBatch(b, deps, { concurrency: 4, includeText: true });
      }
    }
    expect((await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 60_000 })).version).not.toBeNull();
    source = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    api = await startApi({ source, port: 0 });
    tab = await openTab({ width: 1200, height: 900 });
    page = tab.page;
  }, 600_000);

  afterAll(async () => {
    await closeTab(tab);
    await api?.close();
    await source?.close();
    await closeDuckDbParquetEngine();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('shows the domain\'s linking pages and the link counts on its rows, sorts "most linked to", filters dead ends and min inlinks, as the API answers', async () => {
    const server = api!;
    const names = [...new Set(DEV_CRAWLS.flatMap((c) => Object.keys(oracle.crawls[c]!.domains)))];
    // the domain the most pages of other sites link to (/v1/domain/{d}/inlinks), and for the rows the domain whose
    // pages' inlinks spread widest with some dead ends among them
    let linked: any = null;
    let rowsOf: { domain: string; spread: number } | null = null;
    for (const d of names) {
      const r = await apiJson(server, `/v1/domain/${encodeURIComponent(d)}/inlinks?limit=20`);
      if (r.status === 200 && (linked === null || r.body.total > linked.total)) linked = r.body;
      const q = `/v1/domain/${encodeURIComponent(d)}/pages?limit=1`;
      const [most, least, dead] = await Promise.all([apiJson(server, `${q}&sort=inlinks&order=desc`), apiJson(server, `${q}&sort=inlinks&order=asc`), apiJson(server, `${q}&max_outlinks=0&sort=ts`)]);
      if (most.status !== 200 || dead.body.total === 0 || dead.body.total === most.body.total) continue;
      const spread = most.body.items[0].inlinks - least.body.items[0].inlinks;
      if (rowsOf === null || spread > rowsOf.spread) rowsOf = { domain: most.body.domain, spread };
    }
    expect(linked.total).toBeGreaterThan(0);
    expect(rowsOf!.spread).toBeGreaterThan(1);

    await page.goto(`${server.url}/#view=domain&domain=${encodeURIComponent(linked.domain)}`);
    await rendered(page, domainHash(linked.domain));
    const summary = page.locator('#inlinks-summary');
    expect([await summary.getAttribute('data-total'), await summary.getAttribute('data-linking-domains')]).toEqual([String(linked.total), String(linked.linking_domains)]);
    expect(await summary.textContent()).toBe(`${linked.total.toLocaleString('en-US')} ${linked.total === 1 ? 'page of other sites links' : 'pages of other sites link'} here (from ${many(linked.linking_domains, 'domain', 'domains')})`);
    // the number opens the first linking pages, each opening its page view
    expect(await page.locator('#inlinks-list').isVisible()).toBe(false);
    await summary.click();
    expect(await page.locator('#inlinks-list').isVisible()).toBe(true);
    const listed = await linkList(page, 'inlinks-list');
    expect(listed.items).toEqual(linked.items.map((i: any) => [i.url, String(i.dataset_id)]));
    expect(listed.items.length).toBe(Math.min(20, linked.total));
    expect(listed.opensPage).toBe(true);
    await screenshot(page, 'explorer-links-domain.png');
    const from = linked.items[0];
    await page.locator('#inlinks-list a.open').first().click();
    await rendered(page, pageHash(from.url));
    expect((await timeline(page)).map((t) => t.ts)).toContain(from.ts);
    await page.goBack();
    await rendered(page, domainHash(linked.domain));

    // the rows carry both counts, as /pages gives them
    const domain = rowsOf!.domain;
    await page.goto(`${server.url}/#view=domain&domain=${encodeURIComponent(domain)}`);
    await rendered(page, domainHash(domain));
    const { items: plain, total: allRows } = (await apiPages(server, domain, {}))[0]!;
    expect(plain.length).toBeGreaterThan(0);
    expect(plain.every((i) => typeof i.inlinks === 'number' && typeof i.outlinks === 'number')).toBe(true);
    const shownPlain = await linkCounts(page);
    expect(shownPlain.counts).toEqual(plain.map((i) => [i.url_id, i.inlinks, i.outlinks]));
    expect(shownPlain.textOk).toBe(true);
    expect(await page.locator('#pages th.links-col').evaluateAll((ths: any[]) => ths.map((th) => [th.textContent, th.hidden]))).toEqual([['Inlinks', false], ['Outlinks', false]]);

    // "most linked to": sort=inlinks, descending (the order follows the choice), as the API orders the rows
    await page.locator('#f-sort').selectOption('inlinks');
    expect(await page.locator('#f-order').inputValue()).toBe('desc');
    await page.locator('#f-apply').click();
    await rendered(page, domainHash(domain, { sort: 'inlinks', order: 'desc' }));
    const byIn = await apiPages(server, domain, { sort: 'inlinks', order: 'desc' });
    expectRowsAre(await rows(page), byIn[0]!.items);
    const inShown = (await linkCounts(page)).counts.map(([, n]) => n!);
    expect(inShown).toEqual(byIn[0]!.items.map((i) => i.inlinks));
    expect(inShown).toEqual([...inShown].sort((a, b) => b - a));
    expect(inShown[0]).toBeGreaterThan(inShown[inShown.length - 1]!);
    expect(await page.locator('#f-sort option:checked').textContent()).toBe('most linked to');
    await screenshot(page, 'explorer-links-rows.png');

    // dead ends straight from the plain listing (max_outlinks=0 in the hash, the same sort and order: the API once
    // answered it from the plain listing's cached rows), kept over a reload
    await page.locator('#f-clear').click();
    await rendered(page, domainHash(domain));
    await page.locator('#f-dead').check();
    await page.locator('#f-apply').click();
    const deadHash = { max_outlinks: '0' };
    await rendered(page, domainHash(domain, deadHash));
    const dead = await apiPages(server, domain, deadHash);
    expect(dead[0]!.total).toBeGreaterThan(0);
    expect(dead[0]!.total).toBeLessThan(allRows!);
    expectRowsAre(await rows(page), dead[0]!.items);
    const deadShown = (await linkCounts(page)).counts;
    expect(deadShown.length).toBe(Math.min(PAGE_SIZE, dead[0]!.total!));
    expect(deadShown.every(([, , out]) => out === 0)).toBe(true);
    expect(await page.locator('#range').textContent()).toBe(`Rows 1–${deadShown.length} of ${dead[0]!.total}`);
    await page.reload();
    await rendered(page, domainHash(domain, deadHash));
    expect(await page.locator('#f-dead').isChecked()).toBe(true);

    // min inlinks, most outlinks first; Back returns to the dead ends with their box ticked
    const atLeast = Math.max(1, inShown[Math.min(2, inShown.length - 1)]!);
    await page.locator('#f-dead').uncheck();
    await page.locator('#f-min-inlinks').fill(String(atLeast));
    await page.locator('#f-sort').selectOption('outlinks');
    await page.locator('#f-apply').click();
    const minHash = { min_inlinks: String(atLeast), sort: 'outlinks', order: 'desc' };
    await rendered(page, domainHash(domain, minHash));
    const minRows = await apiPages(server, domain, minHash);
    expectRowsAre(await rows(page), minRows[0]!.items);
    const minShown = (await linkCounts(page)).counts;
    expect(minShown.length).toBeGreaterThan(0);
    expect(minShown.every(([, n]) => n! >= atLeast)).toBe(true);
    expect(minShown.map(([, , o]) => o!)).toEqual(minShown.map(([, , o]) => o!).sort((a, b) => b - a));
    await page.goBack();
    await rendered(page, domainHash(domain, deadHash));
    expect([await page.locator('#f-dead').isChecked(), await page.locator('#f-min-inlinks').inputValue()]).toEqual([true, '']);
    expectRowsAre(await rows(page), dead[0]!.items);

    // the most linked-to page: counts per capture, its linking pages and outlinks as /v1/url/links lists them
    await page.goto(`${server.url}/#view=domain&domain=${encodeURIComponent(domain)}&sort=inlinks&order=desc`);
    await rendered(page, domainHash(domain, { sort: 'inlinks', order: 'desc' }));
    const top = byIn[0]!.items[0]!;
    await page.locator('#rows tr a.open').first().click();
    await rendered(page, pageHash(top.url));
    const u = (await apiJson(server, `/v1/url?url=${encodeURIComponent(top.url)}&include=text`)).body;
    expect(u.captures.every((c: any) => typeof c.inlinks === 'number' && typeof c.outlinks === 'number')).toBe(true);
    expect(await page.locator('#captures a .links').evaluateAll((ss: any[]) => ss.map((x) => [Number(x.dataset.inlinks), Number(x.dataset.outlinks), x.textContent])))
      .toEqual(u.captures.map((c: any) => [c.inlinks, c.outlinks, `${c.inlinks.toLocaleString('en-US')} in · ${c.outlinks.toLocaleString('en-US')} out`]));
    const chosen = u.captures[u.captures.length - 1];
    expect(await captureFacts(page)).toMatchObject({ 'Linked from': `${many(chosen.inlinks, 'page', 'pages')} of this crawl`, 'Links to': many(chosen.outlinks, 'URL', 'URLs') });
    const lists: Record<string, any> = {};
    for (const dir of ['in', 'out']) {
      const want = (await apiJson(server, `/v1/url/links?url=${encodeURIComponent(top.url)}&direction=${dir}&limit=20`)).body;
      lists[dir] = want;
      const title = page.locator(`#links-${dir}-title`);
      expect(await title.getAttribute('data-total')).toBe(String(want.total));
      expect(await title.textContent()).toBe(`${dir === 'in' ? 'Linked from' : 'Links to'} ${many(want.total, dir === 'in' ? 'page' : 'URL', dir === 'in' ? 'pages' : 'URLs')} (every crawl)`);
      const shown = await linkList(page, `links-${dir}-list`);
      expect(shown.items).toEqual(want.items.map((i: any) => [i.url, String(i.dataset_id)]));
      expect(shown.opensPage).toBe(true);
      expect(await page.locator(`#links-${dir}-more`).isVisible()).toBe(want.total > want.items.length);
    }
    // a capture's counts are its dataset's share of the lists' totals
    for (const c of u.captures) {
      const share = (dir: string): number => lists[dir].by_dataset.find((d: any) => d.dataset_id === c.dataset_id)?.total ?? 0;
      expect([share('in'), share('out')]).toEqual([c.inlinks, c.outlinks]);
    }
    expect(lists['in'].items.length).toBeGreaterThan(0);
    await screenshot(page, 'explorer-links-page.png');
    // a linking page opens its own page view
    const linking = lists['in'].items[0];
    await page.locator('#links-in-list a.open').first().click();
    await rendered(page, pageHash(linking.url));
    expect((await timeline(page)).map((t) => t.ts)).toContain(linking.ts);
    expect(await page.locator('#page-links').isVisible()).toBe(true);
    linkingHash = pageHash(linking.url);
  }, 180_000);

  it('the link views at 400 px: no sideways scroll', async () => {
    const narrow = await openTab({ width: 400, height: 860 }, 'dark');
    try {
      const p = narrow.page;
      expect(linkingHash.url).toBeDefined();
      await p.goto(`${api!.url}/#${new URLSearchParams(linkingHash)}`);
      await rendered(p, linkingHash);
      expect(await p.locator('#page-links').isVisible()).toBe(true);
      expect(await pageWidth(p)).toBeLessThanOrEqual(400);
      expect(narrow.pageErrors).toEqual([]);
      expect(narrow.cspMessages).toEqual([]);
    } finally {
      await closeTab(narrow);
    }
  });

  it('threw nothing, broke no CSP rule and asked for nothing but the API', () => {
    expect(tab!.pageErrors).toEqual([]);
    expect(tab!.cspMessages).toEqual([]);
    expect(tab!.blocked).toEqual([]);
  });
});

const DATASETS: MemoryDataset[] = DEV_CRAWLS.map((crawl, i) => ({ datasetId: i + 1, name: crawl, crawl }));

/** A crawl's captures straight from cc-mirror-dev's CDX with every record kept (redirects and errors too). */
function everyCapture(crawl: string, datasetId: number): MemoryCapture[] {
  const dir = join(CC_MIRROR_DEV, 'cc-index/collections', crawl, 'indexes');
  const keep = compileFilter({ status: null, languages: null });
  const out: MemoryCapture[] = [];
  for (const e of parseClusterIdx(readFileSync(join(dir, 'cluster.idx'), 'utf8'))) {
    const block = readFileSync(join(dir, e.shard)).subarray(e.offset, e.offset + e.length);
    for (const r of parseCdxBlock(block).records) {
      if (!keep(r).keep) continue;
      const t = r.timestamp;
      out.push({
        datasetId, url: r.url, ts: `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}Z`,
        status: Number(r.status), title: null, textLength: null, language: r.languages[0] ?? null,
        warc: { filename: r.filename, offset: r.offset, length: r.length },
      });
    }
  }
  return out;
}

(runs ? describe : describe.skip)('explorer over an index with facts and largest domains (MemoryIndexSource), in headless Chromium', () => {
  // the IDN host of ccpipe's bundled sample, on a real capture's record
  const IDN = 'www.bücherstube-am-see.de';
  let captures: MemoryCapture[] = [];
  let memory: MemoryIndexSource;
  let api: ApiServer | null = null;
  let tab: Tab | null = null;
  let page: Page;
  const view = (version: string) => buildMemoryView(version, DATASETS, captures).view;

  beforeAll(async () => {
    const all = DEV_CRAWLS.flatMap((c, i) => everyCapture(c, i + 1));
    captures = [...all, { ...all[0]!, url: `https://${IDN}/` }];
    memory = new MemoryIndexSource(view('v000001'), 3);
    // mid-ingest, as ingestStatusOf reports it: 19 of 20 blocks read
    const statusProvider = async (): Promise<object> => ({
      blocksPlanned: 20, blocksRead: 19, batchesPublished: 40, recordsPublished: 1400, batchesMerged: 38, done: false,
      datasets: DATASETS.map((d) => ({ dataset_id: d.datasetId, name: d.name, crawl: d.crawl, blocksPlanned: 10, blocksDone: d.datasetId === 1 ? 10 : 9, batcherDone: false, done: false })),
    });
    api = await startApi({ source: memory, port: 0, statusProvider });
    tab = await openTab({ width: 1200, height: 900 });
    page = tab.page;
  }, 60_000);

  afterAll(async () => {
    await closeTab(tab);
    await api?.close();
  });

  it('the status corner reads as words mid-ingest: version, crawls and how much is done', async () => {
    await page.goto(`${api!.url}/`);
    await rendered(page, {});
    await page.locator('#status-summary').waitFor();
    expect(await page.locator('#status-version').textContent()).toBe('v000001');
    expect(await page.locator('#status-summary').textContent()).toBe('2 crawls · ingest 95 % done');
    expect(await page.locator('#status progress').getAttribute('value')).toBe('19');
    expect(await page.locator('#status').textContent()).not.toMatch(/blocks|batches|Planned|Read|done:/);
  });

  it('the start view opens a crawl\'s largest domains as /v1/datasets/{id}/domains lists them, each opening its domain', async () => {
    await page.goto(`${api!.url}/`);
    await rendered(page, {});
    await page.locator('#overview-rows a[data-dataset-id="1"]').click();
    await rendered(page, { view: 'crawl', dataset: '1' });
    const top = (await apiJson(api!, '/v1/datasets/1/domains?limit=50')).body;
    expect(top.items.length).toBeGreaterThan(3);
    const shown = await page.locator('#top-rows tr').evaluateAll((trs: any[]) => trs.map((tr) => [tr.cells[1].textContent, tr.cells[2].textContent]));
    expect(shown).toEqual(top.items.map((i: any) => [i.domain, i.url_count.toLocaleString('en-US')]));
    expect(await page.locator('#top-title').textContent()).toBe(`Largest domains in ${DEV_CRAWLS[0]}`);
    await screenshot(page, 'explorer-crawl.png');
    await page.locator('#top-rows a').first().click();
    await rendered(page, domainHash(top.items[0].domain, { dataset: '1' }));
    expect(await page.locator('#domain-name').textContent()).toBe(top.items[0].domain);
  });

  it('the chart has one bar group per crawl with its URL count and status mix from /v1/domain, and the crawl rows show the facts', async () => {
    const domain = 'bulk-3.org';
    await page.goto(`${api!.url}/#view=domain&domain=${domain}`);
    await rendered(page, domainHash(domain));
    const d = (await apiJson(api!, `/v1/domain/${domain}`)).body;
    expect(d.datasets.every((x: any) => x.status_classes)).toBe(true);
    const groups = await page.locator('#chart-plot g.bar-group').evaluateAll((gs: any[]) => gs.map((g) => ({
      id: g.dataset.datasetId, urls: g.dataset.urlCount,
      mix: Object.fromEntries(Array.from(g.querySelectorAll('rect.seg')).map((r: any) => [r.dataset.class, Number(r.dataset.count)])),
    })));
    expect(groups).toEqual(d.datasets.map((x: any) => ({
      id: String(x.dataset_id), urls: String(x.url_count),
      mix: Object.fromEntries(Object.entries(x.status_classes).filter(([, n]) => (n as number) > 0)),
    })));
    // a real mix: the mirror's redirects and errors are kept in this index
    expect(groups.some((g) => Object.keys(g.mix).length > 1)).toBe(true);
    // the numbers reach a screen reader in the chart's label (role=img hides its parts)
    const label = await page.locator('#chart-plot svg').getAttribute('aria-label');
    for (const x of d.datasets) expect(label).toContain(`${x.name} ${x.url_count} URLs (2xx ${x.status_classes['2xx']}`);
    expect(await page.locator('#chart-legend').isVisible()).toBe(true);
    expect(await page.locator('#facts-note').isHidden()).toBe(true);
    expect(await page.locator('#datasets td.hosts').allTextContents()).toEqual(d.datasets.map((x: any) => x.hosts.toLocaleString('en-US')));
    expect(await page.locator('#datasets td.mix').allTextContents()).toEqual(d.datasets.map((x: any) =>
      ['2xx', '3xx', '4xx', '5xx'].filter((k) => x.status_classes[k] > 0).map((k) => `${k} ${x.status_classes[k].toLocaleString('en-US')}`).join(' · ')));
    await screenshot(page, 'explorer-domain.png');

    // a bar opens its crawl's pages, as its row does; a status filter then shows only that class
    await page.locator(`#chart-plot g.bar-group[data-dataset-id="${d.datasets[1].dataset_id}"] rect`).first().click();
    await rendered(page, domainHash(domain, { dataset: String(d.datasets[1].dataset_id) }));
    await page.locator('#f-status').fill('3xx');
    await page.locator('#f-status').press('Enter');
    await rendered(page, domainHash(domain, { dataset: String(d.datasets[1].dataset_id), status: '3xx' }));
    const expected = await apiPages(api!, domain, { dataset_id: String(d.datasets[1].dataset_id), status: '3xx' });
    expect(expected[0]!.total).toBe(d.datasets[1].status_classes['3xx']);
    expectRowsAre(await rows(page), expected[0]!.items);
  });

  it('an IDN domain shows in Unicode beside its punycode', async () => {
    await page.goto(`${api!.url}/`);
    await rendered(page, {});
    await search(page, 'BÜCHERSTUBE-AM-SEE.DE');
    const d = (await apiJson(api!, `/v1/domain/${encodeURIComponent('bücherstube-am-see.de')}`)).body;
    expect(d.domain).toMatch(/^xn--/);
    await rendered(page, domainHash(d.domain));
    expect(await page.locator('#domain-name').textContent()).toBe(d.domain_unicode);
    expect(await page.locator('#domain-name').textContent()).toBe('bücherstube-am-see.de');
    expect(await page.locator('#domain-ascii').textContent()).toBe(d.domain);
    expect(await page.locator('#domain-ascii').isVisible()).toBe(true);
  });

  it('a page walk whose version is collected starts again on the current version and says so', async () => {
    const domain = 'bulk-3.org';
    await page.goto(`${api!.url}/#view=domain&domain=${domain}&dataset=1`);
    await rendered(page, domainHash(domain, { dataset: '1' }));
    const old = await apiPages(api!, domain, { dataset_id: '1' });
    await page.locator('#next').click();
    await rendered(page, domainHash(domain, { dataset: '1', at: old[1]!.at.join('.'), v: 'v000001' }));
    expectRowsAre(await rows(page), old[1]!.items);
    // three merges later the source keeps v000002..v000004 only: v000001's cursors answer 410
    for (const v of ['v000002', 'v000003', 'v000004']) memory.set(view(v));
    expect((await apiJson(api!, `/v1/domain/${domain}/pages?dataset_id=1&limit=50&cursor=${old[2]!.at[1]}`)).status).toBe(410);
    await page.locator('#next').click();
    await rendered(page, domainHash(domain, { dataset: '1' }));
    expect(await page.locator('#notice').textContent()).toBe('Index version v000001 is no longer served, so the listing started again on the current version.');
    expect(await page.locator('#domain-meta').textContent()).toContain('index version v000004');
    expectRowsAre(await rows(page), (await apiPages(api!, domain, { dataset_id: '1' }))[0]!.items);
    // the notice goes with the next view
    await page.locator('#next').click();
    await rendered(page, domainHash(domain, { dataset: '1', at: (await apiPages(api!, domain, { dataset_id: '1' }))[1]!.at.join('.'), v: 'v000004' }));
    expect(await page.locator('#notice').isHidden()).toBe(true);
  });

  it('a replica that cannot serve the pinned version ends in the API\'s 410, not in a loop of restarts', async () => {
    // a source that serves its current version but can pin none (as a replica whose pinnedBytes nothing fits)
    const unpinnable: IndexSource = { current: () => memory.current(), at: async () => null, close: async () => undefined };
    const server = await startApi({ source: unpinnable, port: 0 });
    try {
      const before = tab!.sent.length;
      await page.goto(`${server.url}/#view=domain&domain=bulk-3.org`);
      await rendered(page, domainHash('bulk-3.org'), 'error');
      expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_VERSION_GONE');
      // one restart, then the error: the first page asked twice (pinned, then pinned again on the fresh answer)
      await new Promise((r) => setTimeout(r, 500));
      expect(tab!.sent.slice(before).filter((r) => /\/pages\?/.test(r.url)).length).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('at 400 px wide no view scrolls sideways (in the dark colour scheme, so the screenshots show it too)', async () => {
    const narrow = await openTab({ width: 400, height: 860 }, 'dark');
    try {
      const p = narrow.page;
      const url = canon(oracle.crawls[DEV_CRAWLS[0]]!.domains['bulk-3.org']!.urls[0]!);
      const views: [string, HashWant][] = [
        ['', {}], ['#view=crawl&dataset=1', { view: 'crawl', dataset: '1' }], ['#view=domain&domain=bulk-3.org', domainHash('bulk-3.org')],
        [`#${new URLSearchParams(pageHash(url))}`, pageHash(url)],
      ];
      for (const [hash, want] of views) {
        await p.goto(`${api!.url}/${hash}`);
        await rendered(p, want);
        expect({ hash, sideways: (await pageWidth(p)) > 400 }).toEqual({ hash, sideways: false });
      }
      await screenshot(p, 'explorer-page-400.png');
      await p.goto(`${api!.url}/#view=domain&domain=bulk-3.org`);
      await rendered(p, domainHash('bulk-3.org'));
      await screenshot(p, 'explorer-domain-400.png', false);
      // the rows as cards, below the chart and the filters
      const top = await p.locator('#pages').evaluate((e: any) => e.getBoundingClientRect().top + (globalThis as any).scrollY);
      await p.screenshot({ path: join(OUTPUT, 'explorer-rows-400.png'), fullPage: true, clip: { x: 0, y: top, width: 400, height: 1100 } });
      expect(narrow.pageErrors).toEqual([]);
      expect(narrow.cspMessages).toEqual([]);
      expect(narrow.blocked).toEqual([]);
    } finally {
      await closeTab(narrow);
    }
  });

  it('a version without search shards says so in place; a search past its time limit asks to try again or narrow it', async () => {
    // a MemoryIndexSource keeps no search shards: 404 CCP_ERR_API_NO_SEARCH
    await page.goto(`${api!.url}/#view=search&q=the`);
    await rendered(page, searchHash('the'), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_NO_SEARCH');
    expect(await page.locator('#error .error-text').textContent()).toBe('This index version has no full-text search.');
    expect(await page.locator('#error').textContent()).toContain('HTTP 404');
    expect(await page.locator('#fq').inputValue()).toBe('the');
    // a version whose search runs past its time limit: 503 CCP_ERR_API_SEARCH_TIMEOUT
    const base = (await memory.current())!;
    const slowView = Object.assign(Object.create(base) as IndexView, {
      search: async (): Promise<never> => {
        throw new SearchError('CCP_ERR_SEARCH_TIMEOUT', 'past the time limit');
      },
    });
    const server = await startApi({ source: { current: async () => slowView, close: async () => undefined }, port: 0 });
    try {
      await page.goto(`${server.url}/#view=search&q=the`);
      await rendered(page, searchHash('the'), 'error');
      expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_SEARCH_TIMEOUT');
      expect(await page.locator('#error .error-text').textContent()).toBe('The search took too long: try again, or narrow it (a domain, a crawl, a "phrase").');
      expect(await page.locator('#error').textContent()).toContain('HTTP 503');
      expect(await page.locator('#results').isHidden()).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('a version without a link graph shows no link counts, link controls or lists, and no error (404 CCP_ERR_API_NO_LINKS is silent)', async () => {
    const domain = 'bulk-3.org';
    expect((await apiJson(api!, `/v1/domain/${domain}/inlinks`)).body.error.code).toBe('CCP_ERR_API_NO_LINKS');
    await page.goto(`${api!.url}/#view=domain&domain=${domain}`);
    await rendered(page, domainHash(domain));
    expect(await page.locator('#inlinks').isHidden()).toBe(true);
    expect(await page.locator('#pages th.links-col').evaluateAll((ths: any[]) => ths.map((th) => th.hidden))).toEqual([true, true]);
    expect(await page.locator('#rows td.inlinks, #rows td.outlinks').count()).toBe(0);
    expect(await page.locator('#filters .link-filter').evaluateAll((ls: any[]) => ls.map((l) => l.hidden))).toEqual([true, true]);
    expect(await page.locator('#f-sort option.link-sort').evaluateAll((os: any[]) => os.map((o) => o.disabled))).toEqual([true, true]);
    const url = canon(oracle.crawls[DEV_CRAWLS[0]]!.domains[domain]!.urls[0]!);
    await page.goto(`${api!.url}/#${new URLSearchParams(pageHash(url))}`);
    await rendered(page, pageHash(url));
    expect(await page.locator('#page-links').isHidden()).toBe(true);
    expect(await page.locator('#captures a .links').count()).toBe(0);
    expect(Object.keys(await captureFacts(page))).not.toContain('Linked from');
  });

  it('threw nothing and broke no CSP rule', () => {
    expect(tab!.pageErrors).toEqual([]);
    expect(tab!.cspMessages).toEqual([]);
    expect(tab!.blocked).toEqual([]);
  });
});
