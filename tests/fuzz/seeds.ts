// Real inputs from ../shared/corpus that the fuzz targets mutate: CDX and cluster.idx lines, WARC records as
// Common Crawl addresses them (one gzip member each), URLs and HTML pages. Each loader reads once per process.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { decodeHtml, iterateWarcFile } from '@ccpipe/core';
import { CC_MIRROR_DEV, CORPUS, DEV_CRAWLS } from '../support/corpus';

const once = <T>(load: () => T): (() => T) => {
  let v: T | undefined;
  return () => (v ??= load());
};
const lines = (t: string): string[] => t.split('\n').filter((l) => l.length > 0);
const indexDir = (crawl: string): string => join(CC_MIRROR_DEV, 'cc-index/collections', crawl, 'indexes');

/** Every real CDX line: preciz (CC-MAIN-2021-43), cdx_toolkit (2024-30) and both cc-mirror-dev crawls. */
export const cdxLines = once((): string[] => [
  ...lines(readFileSync(join(CORPUS, 'preciz-common_crawl/index_snippet'), 'utf8')),
  ...lines(readFileSync(join(CORPUS, 'preciz-common_crawl/api_response'), 'utf8')),
  ...lines(readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'), 'utf8')),
  ...DEV_CRAWLS.flatMap((crawl) => readdirSync(indexDir(crawl)).filter((f) => /^cdx-\d+\.gz$/.test(f)).sort()
    .flatMap((f) => lines(gunzipSync(readFileSync(join(indexDir(crawl), f))).toString('utf8')))),
]);

/** Every real cluster.idx line: preciz's and both cc-mirror-dev crawls'. */
export const clusterIdxLines = once((): string[] => [
  ...lines(readFileSync(join(CORPUS, 'preciz-common_crawl/cluster_idx_snippet'), 'utf8')),
  ...DEV_CRAWLS.flatMap((crawl) => lines(readFileSync(join(indexDir(crawl), 'cluster.idx'), 'utf8'))),
]);

/** A real WARC record: the bytes a CDX range read returns (a gzip member), and the same record uncompressed. */
export interface WarcSeed {
  member: Uint8Array;
  raw: Uint8Array;
}

/** Up to `perFile` records from each real WARC file: cc-mirror-dev's (as CC writes them) and other producers'. */
export const warcSeeds = once((): WarcSeed[] => {
  const files = [
    ...DEV_CRAWLS.flatMap((crawl) => {
      const segs = join(CC_MIRROR_DEV, 'crawl-data', crawl, 'segments');
      return readdirSync(segs).flatMap((s) => readdirSync(join(segs, s, 'warc')).map((f) => join(segs, s, 'warc', f))).sort().slice(0, 3);
    }),
    ...['webrecorder-warcio-edgecases/example-iana.org-chunked.warc', 'webrecorder-warcio-edgecases/example-wrong-chunks.warc.gz',
      'webrecorder-warcio-edgecases/example-bad-non-chunked.warc.gz', 'hynky1999-CmonCrawl/mini.warc.gz', 'iipc-jwarc/cc.warc.gz',
      'chatnoir-resiliparse/clueweb-quirk.warc.gz', 'commoncrawl-whirlwind-python/whirlwind.warc.gz'].map((p) => join(CORPUS, p)),
  ];
  const out: WarcSeed[] = [];
  for (const file of files) {
    const bytes = readFileSync(file);
    let n = 0;
    try {
      for (const e of iterateWarcFile(bytes)) {
        if (n++ >= 40) break;
        out.push({ member: e.memberPerRecord ? bytes.subarray(e.offset, e.offset + e.length) : e.raw, raw: e.raw });
      }
    } catch {
      // a file with a damaged tail still gives the records before it
    }
  }
  return out;
});

/** URLs: the CDX lines' and the WHATWG URL test inputs (with their bases). */
export const urlSeeds = once((): Array<{ input: string; base?: string }> => {
  const fromCdx = cdxLines().map((l) => ({ input: (JSON.parse(l.slice(l.indexOf('{'))) as { url: string }).url }));
  const wpt = (JSON.parse(readFileSync(join(CORPUS, 'whatwg-url-wpt-via-ada/urltestdata.json'), 'utf8')) as unknown[])
    .filter((t): t is { input: string; base: string | null } => typeof t === 'object' && t !== null && 'input' in t)
    .map((t) => (t.base === null ? { input: t.input } : { input: t.input, base: t.base }));
  return [...fromCdx, ...wpt];
});

/** Real HTML pages: every 6th scrapinghub benchmark page and every 20th trafilatura evaluation page. */
export const htmlPages = once((): string[] => {
  const sh = join(CORPUS, 'scrapinghub-article-extraction-benchmark/html');
  const te = join(CORPUS, 'adbar-trafilatura-eval/eval');
  return [
    ...readdirSync(sh).sort().filter((_, i) => i % 6 === 0).map((f) => gunzipSync(readFileSync(join(sh, f))).toString('utf8')),
    ...readdirSync(te).sort().filter((_, i) => i % 20 === 0).map((f) => decodeHtml(gunzipSync(readFileSync(join(te, f)))).text),
  ];
});
