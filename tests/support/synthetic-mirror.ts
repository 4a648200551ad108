/**
 * A synthetic crawl large enough for `--mode auto`'s CDX sample to be a small part of the plan: many WARC files
 * (warcinfo, then request + response per capture, one gzip member per record as Common Crawl writes them) of pages of
 * varied sizes over many hosts, indexed into Common Crawl's layout by the project's own `buildMirror` (languages
 * detected as it always does). Deterministic for a seed.
 */
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { sha1Base32 } from '@ccpipe/core';
import { buildMirror, type BuildMirrorSummary } from '@ccpipe/mirror';
import { FOREIGN, englishSentence } from '../../packages/cli/src/run/sample/sample-text';
import { rng, type Rng } from './rng';

/** What a synthetic page is. */
export type SyntheticKind = 'eng' | 'deu' | 'fra' | 'not-found' | 'error' | 'redirect' | 'pdf';

/**
 * Shares of the kinds other than `eng` (the rest), drawn per page: the default filter (200, English) keeps ≈ 95 %,
 * `--languages deu` ≈ 1 %.
 */
const RARE: [SyntheticKind, number][] = [['deu', 0.01], ['fra', 0.006], ['not-found', 0.012], ['error', 0.003], ['redirect', 0.012], ['pdf', 0.004]];

/** One response record of the synthetic crawl, as the generator wrote it: the truth a test counts from. */
export interface SyntheticCapture {
  url: string;
  host: string;
  /** The host's registered domain (every synthetic host is `[www.]NAME.TLD`). */
  domain: string;
  kind: SyntheticKind;
  status: number;
  /** The language the page is written in (what the mirror's language detection should find); null for none. */
  language: 'eng' | 'deu' | 'fra' | null;
  /** Index of its WARC file in warc.paths.gz. */
  fileNo: number;
  /** Bytes of its gzip member: its CDX `length`. */
  length: number;
}

/** Options of {@link buildSyntheticMirror}; the defaults make 60 files × 120 pages, 240 blocks of 30 lines in 8 CDX files. */
export interface SyntheticMirrorOptions {
  seed?: number;
  warcFiles?: number;
  recordsPerFile?: number;
  hosts?: number;
  /** CDX lines per ZipNum block, and `cdx-NNNNN.gz` files (buildMirror's blockSize and shards). */
  blockSize?: number;
  shards?: number;
  /** Smallest and largest HTML page, bytes (log-uniform between them). */
  pageBytes?: [number, number];
}

/** A built synthetic mirror: serve `dir` with serveMirror. */
export interface SyntheticMirror {
  dir: string;
  crawl: string;
  /** Every response record, in WARC file order. */
  captures: SyntheticCapture[];
  /** Bytes of all WARC files (what reading them whole moves). */
  warcBytes: number;
  /** Bytes of all `cdx-NNNNN.gz` files. */
  cdxBytes: number;
  summary: BuildMirrorSummary;
}

const CRAWL = 'CC-MAIN-2031-22';
const SEGMENTS = 4;
const START = Date.UTC(2031, 4, 20, 0, 0, 0);
const WORDS = ['river', 'garden', 'lantern', 'harbour', 'maple', 'quiet', 'morning', 'station', 'paper', 'winter', 'orchard', 'bridge', 'meadow', 'copper', 'signal', 'valley', 'stone', 'north', 'market', 'willow'];
const TLDS = ['com', 'com', 'com', 'org', 'net', 'co.uk', 'de', 'io'];
const sentencesOf = (passages: string[]): string[] => passages.flatMap((p) => p.split(/(?<=\.)\s+/));
const FOREIGN_SENTENCES = { deu: sentencesOf(FOREIGN.deu), fra: sentencesOf(FOREIGN.fra) };
const wordsOf = (sentences: string[]): string[] => sentences.join(' ').split(/[\s.,:]+/).filter((w) => w.length > 3);
const FOREIGN_WORDS = { deu: wordsOf(FOREIGN_SENTENCES.deu), fra: wordsOf(FOREIGN_SENTENCES.fra) };

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const hex = (r: Rng): string => r.next(0x100000000).toString(16).padStart(8, '0');

/** Inline page state: JSON items with random ids (a page takes a slice; a draw per byte made generation slow). */
const STATE_POOL = ((): string => {
  const r = rng(1);
  const items: string[] = [];
  for (let n = 0; n < 200_000; n += 40) items.push(`"id":"${hex(r)}${hex(r)}","v":${r.next(1e6)}},{`);
  return items.join('');
})();

/**
 * Writes a synthetic crawl's WARC files straight into Common Crawl's layout under `dir` and indexes them in place with
 * `buildMirror`. Hosts get pages Zipf-style (a few large sites, a long tail); each page goes to a random WARC file, as
 * Common Crawl's fetch lists spread a host's pages over a segment. Same options, same bytes. Throws fs errors.
 */
export async function buildSyntheticMirror(dir: string, o: SyntheticMirrorOptions = {}): Promise<SyntheticMirror> {
  const r = rng(o.seed ?? 23);
  const files = o.warcFiles ?? 60;
  const [minPage, maxPage] = o.pageBytes ?? [5_000, 60_000];
  const domains = Array.from({ length: o.hosts ?? 300 }, (_, i) => `${r.pick(WORDS)}-${r.pick(WORDS)}-${i}.${r.pick(TLDS)}`);
  const hosts = domains.map((d) => (r.chance(0.6) ? `www.${d}` : d));
  const cumulative: number[] = [];
  hosts.reduce((sum, _h, i) => (cumulative[i] = sum + 1 / (i + 1) ** 0.8), 0);
  const drawHost = (): number => {
    const x = r.float() * cumulative[cumulative.length - 1]!;
    return Math.max(0, cumulative.findIndex((c) => c >= x));
  };
  const pages = Array.from({ length: files * (o.recordsPerFile ?? 120) }, (_, i) => ({ i, host: drawHost(), kind: drawKind(r), fileNo: r.next(files) }));

  const captures: SyntheticCapture[] = [];
  let warcBytes = 0;
  for (let f = 0; f < files; f++) {
    const seg = Math.floor((f * SEGMENTS) / files);
    const warcDir = join(dir, 'crawl-data', CRAWL, 'segments', `${1937400000000 + seg * 3_600_000}.${11 + seg}`, 'warc');
    const fileStart = new Date(START + f * 600_000);
    const stamp = fileStart.toISOString().replace(/[-:T]/g, '').slice(0, 14);
    // named in time order: warc.paths.gz (sorted) lists file f as number f
    const name = `${CRAWL}-${stamp}-${stamp}-${String(f).padStart(5, '0')}.warc.gz`;
    const members = [member([['WARC-Type', 'warcinfo'], ['WARC-Date', warcDate(fileStart)], ['WARC-Filename', name], ['Content-Type', 'application/warc-fields']], Buffer.from('software: ccpipe tests/support/synthetic-mirror\r\n'))];
    let n = 0;
    for (const p of pages) {
      if (p.fileNo !== f) continue;
      const c = captureOf(r, { ...p, host: hosts[p.host]! }, new Date(fileStart.getTime() + n++ * 1000), minPage, maxPage);
      const [request, response] = exchange(c);
      members.push(request, response);
      captures.push({ url: c.url, host: hosts[p.host]!, domain: domains[p.host]!, kind: p.kind, status: c.status, language: c.language, fileNo: f, length: response.length });
    }
    const bytes = Buffer.concat(members);
    await fsp.mkdir(warcDir, { recursive: true });
    await fsp.writeFile(join(warcDir, name), bytes);
    warcBytes += bytes.length;
  }

  // the files already sit at their mirror paths: buildMirror indexes them where they are
  const segments = join(dir, 'crawl-data', CRAWL, 'segments');
  const warcs: string[] = [];
  for (const seg of await fsp.readdir(segments)) for (const name of await fsp.readdir(join(segments, seg, 'warc'))) warcs.push(join(segments, seg, 'warc', name));
  const summary = await buildMirror({ crawl: CRAWL, out: dir, warcs: warcs.sort(), blockSize: o.blockSize ?? 30, shards: o.shards ?? 8 });
  const indexes = join(dir, 'cc-index', 'collections', CRAWL, 'indexes');
  let cdxBytes = 0;
  for (const name of await fsp.readdir(indexes)) if (name.startsWith('cdx-')) cdxBytes += (await fsp.stat(join(indexes, name))).size;
  return { dir, crawl: CRAWL, captures, warcBytes, cdxBytes, summary };
}

function drawKind(r: Rng): SyntheticKind {
  let x = r.float();
  for (const [kind, share] of RARE) {
    if (x < share) return kind;
    x -= share;
  }
  return 'eng';
}

interface Response {
  url: string;
  date: Date;
  status: number;
  headers: [string, string][];
  body: Buffer;
  language: SyntheticCapture['language'];
}

/** The response a page gets, by kind. */
function captureOf(r: Rng, p: { i: number; host: string; kind: SyntheticKind }, date: Date, minPage: number, maxPage: number): Response {
  const url = `${r.chance(0.9) ? 'https' : 'http'}://${p.host}/${r.pick(WORDS)}/${r.pick(WORDS)}-${r.pick(WORDS)}-${p.i}${r.chance(0.15) ? `?page=${1 + r.next(9)}` : ''}`;
  const base = { url, date, status: 200, language: null };
  const server: [string, string][] = [['Date', date.toUTCString()], ['Server', 'synthetic-httpd']];
  const html: [string, string] = ['Content-Type', 'text/html; charset=utf-8'];
  switch (p.kind) {
    case 'redirect':
      return { ...base, status: 301, headers: [...server, ['Location', `https://${p.host}/${r.pick(WORDS)}/${p.i}`], html], body: Buffer.alloc(0) };
    case 'pdf': {
      const size = Math.round(r.between(minPage, maxPage));
      const from = r.next(STATE_POOL.length - size);
      return { ...base, url: `${url}.pdf`, headers: [...server, ['Content-Type', 'application/pdf']], body: Buffer.from(`%PDF-1.4\n${STATE_POOL.slice(from, from + size)}`, 'latin1') };
    }
    case 'not-found':
    case 'error':
      return { ...base, status: p.kind === 'error' ? 500 : 404, headers: [...server, html], body: page(r, 'eng', p.host, Math.round(r.between(2_000, 6_000))), language: 'eng' };
    default:
      return { ...base, headers: [...server, html], body: page(r, p.kind, p.host, Math.round(Math.exp(r.between(Math.log(minPage), Math.log(maxPage))))), language: p.kind };
  }
}

/**
 * An HTML page of about `size` bytes, built like a real one: most bytes are markup (a stylesheet, wrappers with
 * classes and data attributes, a script of inline state) around 400–800 characters of visible text. Every visible
 * word is in `lang`, link texts too, so language detection finds that language alone; the short text keeps detection
 * (the mirror build's slowest step) to one chunk a page.
 */
function page(r: Rng, lang: 'eng' | 'deu' | 'fra', host: string, size: number): Buffer {
  const sentence = (): string => (lang === 'eng' ? englishSentence(r.float) : r.pick(FOREIGN_SENTENCES[lang]));
  const word = (): string => (lang === 'eng' ? r.pick(WORDS) : r.pick(FOREIGN_WORDS[lang]));
  const title = sentence().slice(0, 60);
  const css = Array.from({ length: 10 + r.next(30) }, () => `.c-${hex(r)}{margin:${r.next(24)}px;color:#${hex(r).slice(0, 6)}}`).join('\n');
  const nav = Array.from({ length: 6 + r.next(12) }, () => `<li class="nav-item"><a class="nav-link" href="https://${host}/${r.pick(WORDS)}/${hex(r)}">${esc(word())}</a></li>`).join('\n');
  const paras: string[] = [];
  for (let text = 0, want = r.between(250, 500); text < want;) {
    const t = Array.from({ length: 2 + r.next(3) }, sentence).join(' ');
    paras.push(`<div class="c-${hex(r)}" data-block="${hex(r)}"><p>${esc(t)}</p></div>\n`);
    text += t.length;
  }
  const head = `<!DOCTYPE html>\n<html lang="${lang.slice(0, 2)}"><head><meta charset="utf-8"><title>${esc(title)}</title>\n<style>\n${css}\n</style>\n`;
  const body = `<body><header><nav><ul>\n${nav}\n</ul></nav></header>\n<main><article><h1>${esc(title)}</h1>\n${paras.join('')}</article></main>\n` +
    `<footer><p>${esc(sentence())}</p></footer></body></html>\n`;
  const fill = Math.max(0, size - head.length - body.length - 60);
  const from = r.next(STATE_POOL.length - fill);
  return Buffer.from(`${head}<script>window.__STATE__={"items":[{${STATE_POOL.slice(from, from + fill)}}]};</script></head>\n${body}`, 'utf8');
}

const warcDate = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
const recordId = (r: string): string => `<urn:uuid:${r.slice(0, 8)}-${r.slice(8, 12)}-4${r.slice(13, 16)}-8${r.slice(17, 20)}-${r.slice(20, 32)}>`;

/**
 * One WARC record as its own gzip member. Level 1: the CLI sample's writer (packages/cli/src/run/sample) uses level 9,
 * which took longer than the rest of generation here; the level changes no CDX field but the lengths.
 */
function member(headers: [string, string][], block: Buffer): Buffer {
  const head = ['WARC/1.0', ...headers.map(([k, v]) => `${k}: ${v}`), `Content-Length: ${block.length}`, '', ''].join('\r\n');
  return gzipSync(Buffer.concat([Buffer.from(head, 'utf8'), block, Buffer.from('\r\n\r\n')]), { level: 1 });
}

/** The request and response records of one capture, headed like Common Crawl's. */
function exchange(c: Response): [Buffer, Buffer] {
  const u = new URL(c.url);
  const date = warcDate(c.date);
  const id = sha1Base32(Buffer.from(`${c.url} ${date}`)).toLowerCase().replace(/[^0-9a-f]/g, '0');
  const reqBlock = Buffer.from(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUser-Agent: CCBot/2.0\r\nAccept: text/html,*/*;q=0.8\r\n\r\n`, 'latin1');
  const reason = { 200: 'OK', 301: 'Moved Permanently', 404: 'Not Found', 500: 'Internal Server Error' }[c.status] ?? 'Status';
  const httpHead = [`HTTP/1.1 ${c.status} ${reason}`, ...c.headers.map(([k, v]) => `${k}: ${v}`), `Content-Length: ${c.body.length}`, '', ''].join('\r\n');
  const common: [string, string][] = [['WARC-Date', date], ['WARC-IP-Address', '192.0.2.10'], ['WARC-Target-URI', c.url]];
  return [
    member([['WARC-Type', 'request'], ['WARC-Record-ID', recordId(`${id.slice(0, 31)}0`)], ['Content-Type', 'application/http; msgtype=request'], ...common], reqBlock),
    member([
      ['WARC-Type', 'response'], ['WARC-Record-ID', recordId(`${id.slice(0, 31)}1`)], ['Content-Type', 'application/http; msgtype=response'], ...common,
      ['WARC-Payload-Digest', `sha1:${sha1Base32(c.body)}`],
      ['WARC-Identified-Payload-Type', c.headers.find(([k]) => k === 'Content-Type')![1].split(';')[0]!],
    ], Buffer.concat([Buffer.from(httpHead, 'latin1'), c.body])),
  ];
}
