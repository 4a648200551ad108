import { domainToASCII } from 'node:url';
import type { Capture } from './warc-records';
import { FOREIGN, englishParagraphs, prng, seedOf } from './sample-text';

/** The two sample crawls: names and capture windows (the second revisits most pages a month later). */
export const SAMPLE_CRAWLS = [
  { name: 'SAMPLE-2030-01', start: Date.UTC(2030, 0, 10, 12, 0, 0), segment: '1893844800.01' },
  { name: 'SAMPLE-2030-02', start: Date.UTC(2030, 1, 12, 12, 0, 0), segment: '1896537600.02' },
] as const;

/** The IDN host of the sample, in Unicode; its pages are captured under the punycode form, as crawlers fetch it. */
export const IDN_HOST = 'www.bücherstube-am-see.de';

interface Page {
  url: string;
  status: 200 | 301 | 404;
  kind: 'html' | 'robots' | 'redirect';
  title?: string;
  /** English paragraphs seed, or a foreign language's passages. */
  lang?: 'eng' | keyof typeof FOREIGN;
  location?: string;
  links?: string[];
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function html(p: Page, crawl: number): Buffer {
  const langAttr = p.lang === undefined || p.lang === 'eng' ? 'en' : { deu: 'de', fra: 'fr', spa: 'es', ita: 'it' }[p.lang];
  const paras = p.status === 404
    ? ['The page you asked for is not here. It may have moved, or the address may be misspelt.']
    : p.lang === undefined || p.lang === 'eng'
      ? englishParagraphs(`${p.url}#${crawl}`, 4 + (seedOf(p.url) % 4))
      : FOREIGN[p.lang];
  const links = (p.links ?? []).map((l) => `<li><a href="${esc(l)}">${esc(l.replace(/^https?:\/\/[^/]+/, '') || '/')}</a></li>`).join('');
  return Buffer.from(
    `<!DOCTYPE html>\n<html lang="${langAttr}"><head><meta charset="utf-8"><title>${esc(p.title ?? 'Not found')}</title></head>\n` +
      `<body><header><nav><a href="/">Home</a></nav></header>\n<main><article><h1>${esc(p.title ?? 'Not found')}</h1>\n` +
      paras.map((t) => `<p>${esc(t)}</p>`).join('\n') +
      `\n</article></main>\n${links ? `<aside><ul>${links}</ul></aside>\n` : ''}<footer><p>Sample site generated for ccpipe.</p></footer></body></html>\n`,
    'utf8',
  );
}

const slug = (seed: string, r: () => number): string => {
  const words = ['river', 'garden', 'lantern', 'harbour', 'maple', 'quiet', 'morning', 'station', 'paper', 'winter', 'orchard', 'bridge', 'meadow', 'copper', 'signal'];
  return `${words[Math.floor(r() * words.length)]}-${words[Math.floor(r() * words.length)]}-${seedOf(seed) % 997}`;
};

/**
 * Every page of crawl `crawl` (0 or 1), in capture order. The second crawl adds pages, drops some (now 404) and
 * extends the paginated catalogue, so the two datasets differ per domain.
 */
export function samplePages(crawl: 0 | 1): Page[] {
  const pages: Page[] = [];
  const add = (p: Page): void => void pages.push(p);
  const r = prng(seedOf(`sample-${crawl}`));

  // A bookshop: www and shop subdomains, an apex redirect, a paginated catalogue, a robots.txt and a 404.
  const books = 'https://www.maple-street-books.com';
  add({ url: `${books}/robots.txt`, status: 200, kind: 'robots' });
  add({ url: 'http://maple-street-books.com/', status: 301, kind: 'redirect', location: `${books}/` });
  add({ url: `${books}/`, status: 200, kind: 'html', lang: 'eng', title: 'Maple Street Books', links: [`${books}/catalog?page=1`] });
  const catalogPages = crawl === 0 ? 12 : 16;
  for (let n = 1; n <= catalogPages; n++) {
    add({ url: `${books}/catalog?page=${n}`, status: 200, kind: 'html', lang: 'eng', title: `Catalogue, page ${n}`, links: n < catalogPages ? [`${books}/catalog?page=${n + 1}`] : [] });
  }
  for (let i = 0; i < 20; i++) {
    const s = slug(`book-${i}`, prng(i + 1));
    add({ url: `${books}/books/${s}`, status: crawl === 1 && i % 7 === 3 ? 404 : 200, kind: 'html', lang: 'eng', title: `Book notes: ${s.replace(/-\d+$/, '').replace(/-/g, ' ')}` });
  }
  add({ url: `${books}/books/lost-title`, status: 404, kind: 'html' });
  for (let i = 0; i < 6 + crawl * 3; i++) add({ url: `https://shop.maple-street-books.com/item/${1000 + i}?ref=home&color=blue`, status: 200, kind: 'html', lang: 'eng', title: `Shop item ${1000 + i}` });

  // A newspaper under a multi-level public suffix (.co.uk), with a sport subdomain.
  const gazette = 'https://www.harbourside-gazette.co.uk';
  add({ url: `${gazette}/robots.txt`, status: 200, kind: 'robots' });
  for (let i = 0; i < 14 + crawl * 4; i++) {
    const month = crawl === 0 ? '01' : i < 14 ? '01' : '02';
    add({ url: `${gazette}/news/2030/${month}/${slug(`gazette-${i}`, prng(100 + i))}`, status: 200, kind: 'html', lang: 'eng', title: `Harbourside news ${i + 1}` });
  }
  for (let i = 0; i < 5; i++) add({ url: `https://sport.harbourside-gazette.co.uk/rowing/results-${i + 1}`, status: 200, kind: 'html', lang: 'eng', title: `Rowing results ${i + 1}` });
  add({ url: `http://harbourside-gazette.co.uk/`, status: 301, kind: 'redirect', location: `${gazette}/` });

  // Two project sites under github.io (a private-section suffix: the registered domain is github.io).
  for (const user of ['tinkerer-notes', 'quiet-compiler']) {
    for (let i = 0; i < 6 + (user === 'quiet-compiler' ? crawl * 2 : 0); i++) {
      add({ url: `https://${user}.github.io/posts/${2029 + crawl}/${slug(`${user}-${i}`, prng(200 + i))}.html`, status: 200, kind: 'html', lang: 'eng', title: `${user}: post ${i + 1}` });
    }
  }

  // An IDN host: an English page set and German pages (dropped by the default language filter).
  const idn = `https://${domainToASCII(IDN_HOST)}`;
  add({ url: `${idn}/`, status: 200, kind: 'html', lang: 'eng', title: 'The bookshop by the lake' });
  for (let i = 0; i < 4; i++) add({ url: `${idn}/en/events/${i + 1}`, status: 200, kind: 'html', lang: 'eng', title: `Event ${i + 1}` });
  for (let i = 0; i < 3; i++) add({ url: `${idn}/de/veranstaltungen/${i + 1}`, status: 200, kind: 'html', lang: 'deu', title: `Veranstaltung ${i + 1}` });

  // A weather site: deep pagination with a query in two spellings and station pages.
  const weather = 'https://quiet-valley-weather.net';
  for (let n = 1; n <= (crawl === 0 ? 25 : 30); n++) add({ url: `${weather}/archive?page=${n}&sort=date`, status: 200, kind: 'html', lang: 'eng', title: `Archive page ${n}` });
  add({ url: `${weather}/archive?sort=date&page=1`, status: 200, kind: 'html', lang: 'eng', title: 'Archive page 1' });
  for (let i = 0; i < 8; i++) add({ url: `https://data.quiet-valley-weather.net/station/QV${String(i + 1).padStart(3, '0')}`, status: 200, kind: 'html', lang: 'eng', title: `Station QV${i + 1}` });
  add({ url: `${weather}/station/QV999`, status: 404, kind: 'html' });

  // A language-exchange club: pages in four languages; only the English ones pass the default filter.
  const club = 'https://www.lingua-exchange.org';
  add({ url: `${club}/`, status: 200, kind: 'html', lang: 'eng', title: 'Lingua Exchange Club' });
  for (const lang of ['fra', 'spa', 'ita', 'deu'] as const) add({ url: `${club}/${lang}/welcome`, status: 200, kind: 'html', lang, title: `Welcome (${lang})` });
  add({ url: `${club}/robots.txt`, status: 200, kind: 'robots' });

  // A museum under another multi-level suffix (.org.uk), present in the second crawl only.
  if (crawl === 1) for (let i = 0; i < 5; i++) add({ url: `https://old-mill-museum.org.uk/collection/${slug(`mill-${i}`, prng(300 + i))}`, status: 200, kind: 'html', lang: 'eng', title: `Collection item ${i + 1}` });

  // Keep the order deterministic but not grouped by site, like a crawler's fetch order.
  return pages.map((p) => ({ p, k: r() })).sort((a, b) => a.k - b.k).map((x) => x.p);
}

/** The captures of crawl `crawl`, one second apart from its start time. */
export function sampleCaptures(crawl: 0 | 1): Capture[] {
  const start = SAMPLE_CRAWLS[crawl].start;
  return samplePages(crawl).map((p, i) => {
    const date = new Date(start + i * 1000);
    const server: [string, string][] = [['Date', date.toUTCString()], ['Server', 'sample-httpd']];
    if (p.kind === 'redirect') {
      return { url: p.url, date, status: p.status, headers: [...server, ['Location', p.location!], ['Content-Type', 'text/html; charset=utf-8']], body: Buffer.alloc(0) };
    }
    if (p.kind === 'robots') {
      return { url: p.url, date, status: 200, headers: [...server, ['Content-Type', 'text/plain']], body: Buffer.from('User-agent: *\nDisallow: /private/\n', 'utf8') };
    }
    return { url: p.url, date, status: p.status, headers: [...server, ['Content-Type', 'text/html; charset=utf-8']], body: html(p, crawl) };
  });
}
