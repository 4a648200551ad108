/**
 * The explorer page end to end in real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core):
 * cc-mirror-dev (both crawls) → batcher → worker (real extraction, so real titles) → merger → openIndexSource →
 * the API on a real port → the page. Search by keyboard, open a dataset, page forward and back, reload, errors,
 * an ACL token; every non-loopback request is blocked and must never be attempted. A screenshot is saved under
 * tests/output/.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { canonicalizeUrl, emptyDatasetRegistry, ensureDatasetIn, extractDocument, layout, serializeDatasetRegistry, type IndexSource } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine, writeParquetPart } from '@ccpipe/adapters';
import { processBatch } from '@ccpipe/worker';
import { openIndexSource, runMerge } from '@ccpipe/index';
import { Acl, startApi, type ApiServer } from '@ccpipe/api';
import { DEV_CRAWLS, REPO_ROOT, loadOracle } from './support/corpus';
import { inCi } from './support/ci';
import { devBatches, devReader } from './support/dev-batches';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const OUTPUT = join(REPO_ROOT, 'tests', 'output');
const TOKEN = 'explorer-test-token-0123456789';

const runs = existsSync(CHROMIUM) || inCi();
if (!runs) {
  console.warn(`explorer.int.test: skipped — ${CHROMIUM} is missing (install Debian's chromium; under CI this test always runs)`);
}

const oracle = loadOracle();
const canon = (u: string): string => canonicalizeUrl(u).url;

interface Row {
  urlId: string;
  url: string;
  href: string | null;
  rel: string | null;
  title: string;
  ts: string | null;
  tsText: string;
  status: string;
}
interface ApiItem {
  url_id: string;
  url: string;
  ts: string;
  status: number | null;
  title: string | null;
}

let dir = '';
let source: IndexSource | null = null;
let api: ApiServer | null = null;
let guarded: ApiServer | null = null;
let browser: Browser | null = null;
let context: BrowserContext | null = null;
let page: Page;
let ids: Record<string, number> = {};
const blocked: string[] = [];
const requested: string[] = [];
/** The X-Index-Version request header of every URL-page request (the explorer pins pages to the counts' version). */
const urlPagePins: (string | undefined)[] = [];
let servedVersion = '';
const pageErrors: string[] = [];
const cspMessages: string[] = [];
const authHeaders: (string | undefined)[] = [];

const isLoopback = (u: string): boolean => {
  if (!/^https?:/.test(u)) return true; // data:, about:, blob: never leave the browser
  const h = new URL(u).hostname;
  return h === '127.0.0.1' || h === 'localhost' || h === '[::1]';
};

async function apiJson(server: ApiServer, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(server.url + path, { headers });
  return { status: res.status, body: await res.json() };
}

/** Waits until the page has finished rendering `hash` (its own marker: main[data-rendered], data-state). */
async function rendered(hash: string, state: 'ready' | 'error' = 'ready'): Promise<void> {
  await page.waitForFunction(
    ([h, s]) => {
      const m = (globalThis as any).document.getElementById('main');
      return m.dataset.rendered === h && m.dataset.state === s && (globalThis as any).location.hash === h;
    },
    [hash, state] as const,
    { timeout: 20_000 },
  );
}

const hashOf = (domain: string, dataset?: number, offset?: number): string =>
  '#' + new URLSearchParams(dataset === undefined ? { domain } : { domain, dataset: String(dataset), offset: String(offset) }).toString();

function rows(): Promise<Row[]> {
  return page.evaluate(() =>
    Array.from((globalThis as any).document.querySelectorAll('#rows tr')).map((tr: any) => {
      const a = tr.querySelector('a');
      const time = tr.querySelector('time');
      return {
        urlId: tr.dataset.urlId, url: (a ?? tr.querySelector('.link')).textContent, href: a ? a.getAttribute('href') : null, rel: a ? a.getAttribute('rel') : null,
        title: tr.querySelector('.title').textContent, ts: time ? time.getAttribute('datetime') : null, tsText: time ? time.textContent : '',
        status: tr.querySelector('.status').textContent,
      };
    }),
  );
}

/** The page's rows must be exactly the API's rows of the same page. */
function expectRowsAre(shown: Row[], items: ApiItem[]): void {
  expect(shown.map((r) => r.urlId)).toEqual(items.map((i) => i.url_id));
  shown.forEach((r, k) => {
    const it = items[k]!;
    expect({ url: r.url, href: r.href, rel: r.rel, ts: r.ts, status: r.status, title: r.title }).toEqual({
      url: it.url, href: new URL(it.url).href, rel: 'noopener noreferrer', ts: it.ts, status: it.status === null ? '—' : String(it.status), title: it.title ?? '(no title)',
    });
    // human-readable UTC: "10 Nov 2030, 01:23:04 UTC" for 2030-11-10T01:23:04Z
    const [, y, , d, hms] = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}:\d{2}:\d{2})/.exec(it.ts)!;
    expect(r.tsText).toMatch(new RegExp(`^${d} [A-Z][a-z]{2} ${y}, ${hms} UTC$`));
  });
}

/** Presses Tab (at most 15 times) until the focused element matches `selector`; false when it never does. */
async function tabTo(selector: string): Promise<boolean> {
  for (let i = 0; i < 15; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((sel) => Boolean((globalThis as any).document.activeElement?.matches(sel)), selector)) return true;
  }
  return false;
}

const activeId = (): Promise<string> => page.evaluate(() => String((globalThis as any).document.activeElement?.id ?? ''));

async function search(text: string): Promise<void> {
  await page.locator('#q').fill(text);
  await page.locator('#q').focus();
  await page.keyboard.press('Enter');
}

(runs ? describe : describe.skip)('explorer page in headless Chromium', () => {
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
          { concurrency: 4, includeText: false },
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

    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    await context.route('**/*', async (route) => {
      const u = route.request().url();
      if (!isLoopback(u)) {
        blocked.push(u);
        await route.abort('blockedbyclient');
        return;
      }
      if (u.startsWith(guarded!.url)) authHeaders.push(route.request().headers()['authorization']);
      if (/\/datasets\/\d+\/urls\?/.test(u)) urlPagePins.push(route.request().headers()['x-index-version']);
      await route.continue();
    });
    context.on('request', (r) => void requested.push(r.url()));
    page = await context.newPage();
    page.on('pageerror', (e) => void pageErrors.push(String(e)));
    page.on('console', (m) => {
      if (/Content.Security.Policy|Trusted ?Type/i.test(m.text())) cspMessages.push(m.text());
    });
  }, 600_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close().catch(() => undefined);
    await api?.close();
    await guarded?.close();
    await source?.close();
    await closeDuckDbParquetEngine();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('searches, opens a dataset, pages forward and back, survives a reload, and shows API errors', async () => {
    const server = api!;
    const [c40, c44] = DEV_CRAWLS.map((c) => oracle.crawls[c]!.domains);
    // the domain both crawls hold with the most URLs: several pages in each dataset
    const domain = Object.keys(c40!).filter((d) => c44![d]).sort((a, b) => Math.min(c40![b]!.count, c44![b]!.count) - Math.min(c40![a]!.count, c44![a]!.count))[0]!;

    await page.goto(`${server.url}/`);
    await rendered('');
    // landing: the dataset list of /v1/datasets, and the pipeline status corner
    const all = (await apiJson(server, '/v1/datasets')).body;
    expect(await page.locator('#overview-rows tr td:first-child').allTextContents()).toEqual([...DEV_CRAWLS]);
    expect(await page.locator('#overview-rows tr td:nth-child(3)').allTextContents()).toEqual(all.datasets.map((d: { url_count: number }) => d.url_count.toLocaleString('en-US')));
    await page.locator('#status-version').waitFor();
    const status = (await apiJson(server, '/v1/status')).body;
    expect(await page.locator('#status-version').textContent()).toBe(status.version);
    expect(await page.locator('#status').textContent()).toContain('ingest done');

    // search by keyboard with a host spelling: the API's registered domain replaces it in the hash
    await search(`WWW.${domain.toUpperCase()}`);
    await rendered(hashOf(domain));
    expect(await page.locator('#domain-title').textContent()).toBe(domain);
    const want = DEV_CRAWLS.map((c) => ({ name: c, id: ids[c]!, urls: new Set(oracle.crawls[c]!.domains[domain]!.urls.map(canon)) }));
    const fromApi = (await apiJson(server, `/v1/domain/${domain}`)).body.datasets as { dataset_id: number; name: string; url_count: number }[];
    expect(fromApi).toEqual(want.map((w) => ({ dataset_id: w.id, name: w.name, url_count: w.urls.size })));
    expect(await page.locator('#datasets a .name').allTextContents()).toEqual(want.map((w) => w.name));
    expect(await page.locator('#datasets a .count').allTextContents()).toEqual(want.map((w) => `${w.urls.size} URLs`));

    // Tab from the search box reaches the first dataset link; Enter opens it
    await page.locator('#q').focus();
    expect(await tabTo('#datasets a')).toBe(true);
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.getAttribute('data-dataset-id') as string)).toBe(String(want[0]!.id));
    await page.keyboard.press('Enter');
    const w = want[0]!;
    await rendered(hashOf(domain, w.id, 0));
    expect(await page.locator('#datasets a[aria-current="true"] .name').textContent()).toBe(w.name);

    // page 1 is the API's page 1; walk forward with the Next button and the n key until Next is disabled
    const first = await rows();
    const size = first.length;
    expect(size).toBeGreaterThan(0);
    expect(size).toBeLessThan(w.urls.size); // more than one page, so paging is exercised
    const pages: Row[][] = [first];
    expectRowsAre(first, (await apiJson(server, `/v1/domain/${domain}/datasets/${w.id}/urls?offset=0&limit=${size}`)).body.items);
    expect(await page.locator('#range').textContent()).toBe(`URLs 1–${size} of ${w.urls.size}`);
    expect(await page.locator('#range-bottom').textContent()).toBe(`URLs 1–${size} of ${w.urls.size}`);
    expect(await page.locator('#prev').isDisabled()).toBe(true);
    // Tab from the open dataset link reaches Next (Prev is disabled on page 1); Enter and the n key page forward,
    // the focus staying on Next
    expect(await tabTo('#next')).toBe(true);
    let offset = 0;
    while (!(await page.locator('#next').isDisabled())) {
      offset += size;
      expect(await activeId()).toBe('next');
      await page.keyboard.press(pages.length % 2 === 1 ? 'Enter' : 'n');
      await rendered(hashOf(domain, w.id, offset));
      const shown = await rows();
      const answer = (await apiJson(server, `/v1/domain/${domain}/datasets/${w.id}/urls?offset=${offset}&limit=${size}`)).body;
      expectRowsAre(shown, answer.items);
      expect(await page.locator('#range').textContent()).toBe(`URLs ${offset + 1}–${offset + shown.length} of ${w.urls.size}`);
      expect(new Set(shown.map((r) => r.urlId)).size).toBe(shown.length);
      pages.push(shown);
    }
    // Next went disabled under the keyboard: the focus moved to Prev instead of falling to <body>
    expect(await activeId()).toBe('prev');
    // every URL of (domain, dataset) exactly once across the pages, as the oracle says
    const seen = pages.flat().map((r) => r.url);
    expect(seen.length).toBe(w.urls.size);
    expect(new Set(seen)).toEqual(w.urls);

    // Back returns to the previous page's rows; Prev goes one further; reload keeps the place
    await page.goBack();
    await rendered(hashOf(domain, w.id, offset - size));
    expect((await rows()).map((r) => r.urlId)).toEqual(pages[pages.length - 2]!.map((r) => r.urlId));
    expect(pages.length).toBeGreaterThanOrEqual(3);
    await page.locator('#prev-bottom').click(); // the pager under the table does the same
    await rendered(hashOf(domain, w.id, offset - 2 * size));
    expect((await rows()).map((r) => r.urlId)).toEqual(pages[pages.length - 3]!.map((r) => r.urlId));
    const before = await rows();
    const hash = await page.evaluate(() => (globalThis as any).location.hash as string);
    await page.reload();
    await rendered(hash);
    expect(await rows()).toEqual(before);

    await mkdir(OUTPUT, { recursive: true });
    const shot = join(OUTPUT, 'explorer.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(10_000);

    // the other dataset from the list: its own count and rows
    const other = want[1]!;
    await page.locator(`#datasets a[data-dataset-id="${other.id}"]`).click();
    await rendered(hashOf(domain, other.id, 0));
    expect(await page.locator('#range').textContent()).toBe(`URLs 1–${Math.min(size, other.urls.size)} of ${other.urls.size}`);
    expectRowsAre(await rows(), (await apiJson(server, `/v1/domain/${domain}/datasets/${other.id}/urls?offset=0&limit=${size}`)).body.items);

    // errors come from the API's codes: 404 unknown domain, 400 not a domain (shown as text, never as markup)
    await search('no-such-domain-in-the-corpus.com');
    await rendered(hashOf('no-such-domain-in-the-corpus.com'), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_DOMAIN_NOT_FOUND');
    expect(await page.locator('#error').textContent()).toContain('No dataset holds no-such-domain-in-the-corpus.com.');
    expect(await page.locator('#error').textContent()).toContain('HTTP 404');
    expect(await page.locator('#domain').isHidden()).toBe(true);
    expect(await page.locator('#urls').isHidden()).toBe(true);
    await search('<b>co.uk');
    await rendered(hashOf('<b>co.uk'), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_BAD_DOMAIN');
    expect(await page.locator('#error .error-text').textContent()).toMatch(/^<b>co\.uk is not a domain/);
    expect(await page.locator('#error b').count()).toBe(0);

    // Back through the errors to the last dataset page
    await page.goBack();
    await page.goBack();
    await rendered(hashOf(domain, other.id, 0));
    expect(await page.locator('#error').isHidden()).toBe(true);
  }, 180_000);

  it('asks for a token when the API has an ACL, sends it as a bearer token, and shows only what it may see', async () => {
    const server = guarded!;
    const domain = Object.keys(oracle.crawls[DEV_CRAWLS[0]]!.domains).find((d) => oracle.crawls[DEV_CRAWLS[1]]!.domains[d])!;
    await page.goto(`${server.url}/${hashOf(domain)}`);
    await rendered(hashOf(domain), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_UNAUTHORIZED');
    expect(await page.locator('#auth').getAttribute('open')).not.toBeNull();
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.id)).toBe('token');
    await page.keyboard.type(TOKEN);
    await page.keyboard.press('Enter');
    await rendered(hashOf(domain));
    expect(await page.locator('#datasets a .name').allTextContents()).toEqual([DEV_CRAWLS[0]]);
    expect(await page.locator('#token-state').textContent()).toBe('(set)');
    expect(authHeaders).toContain(`Bearer ${TOKEN}`);
    expect(requested.some((u) => u.includes(TOKEN))).toBe(false);
    // the token lives for the tab: a reload still sees the data
    await page.reload();
    await rendered(hashOf(domain));
    expect(await page.locator('#datasets a .name').allTextContents()).toEqual([DEV_CRAWLS[0]]);
    await page.locator('#auth summary').click();
    await page.locator('#token-clear').click();
    await rendered(hashOf(domain), 'error');
    expect(await page.locator('#error').getAttribute('data-code')).toBe('CCP_ERR_API_UNAUTHORIZED');
  }, 60_000);

  it('never asked for anything but the API, broke no CSP rule and threw nothing', () => {
    expect(requested.length).toBeGreaterThan(10);
    expect(blocked).toEqual([]);
    const origins = new Set(requested.map((u) => new URL(u).origin));
    expect([...origins].sort()).toEqual([api!.url, guarded!.url].sort());
    expect(cspMessages).toEqual([]);
    expect(pageErrors).toEqual([]);
    // every URL page was pinned to the version its domain counts came from
    expect(urlPagePins.length).toBeGreaterThan(3);
    expect(new Set(urlPagePins)).toEqual(new Set([servedVersion]));
  });

  it('the browser enforces the CSP: no HTML sinks (Trusted Types), no remote fetch', async () => {
    await page.goto(`${api!.url}/`);
    await rendered('');
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
    expect(blocked).toEqual([]);
  });
});
