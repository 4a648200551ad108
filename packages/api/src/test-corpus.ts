// Test fixture (excluded from the build): the corpus as MemoryIndexViews, and a GET helper.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { canonicalizeUrl, compileFilter, parseCdxBlock, parseClusterIdx } from '@ccpipe/core';
import { buildMemoryView, type MemoryCapture, type MemoryDataset } from './memory-index-source';
import type { ApiServer } from './server';

// Real data: cc-mirror-dev's two crawls under the default filter, one dataset each; oracle.json says what each
// registered domain must hold.
export const REPO = resolve(__dirname, '../../..');
const MIRROR = join(REPO, '../shared/corpus/cc-mirror-dev');
export const CRAWLS = ['CC-MAIN-2030-40', 'CC-MAIN-2030-44'] as const;
export const DATASETS: MemoryDataset[] = CRAWLS.map((crawl, i) => ({ datasetId: i + 1, name: crawl, crawl }));
type Oracle = { crawls: Record<string, { domains: Record<string, { count: number; urls: string[] }> }> };
export const oracle = JSON.parse(readFileSync(join(MIRROR, 'oracle.json'), 'utf8')) as Oracle;

export function capturesOf(crawl: string, datasetId: number): MemoryCapture[] {
  const dir = join(MIRROR, 'cc-index/collections', crawl, 'indexes');
  const keep = compileFilter({});
  const out: MemoryCapture[] = [];
  for (const e of parseClusterIdx(readFileSync(join(dir, 'cluster.idx'), 'utf8'))) {
    const block = readFileSync(join(dir, e.shard)).subarray(e.offset, e.offset + e.length);
    for (const r of parseCdxBlock(block).records) {
      if (!keep(r).keep) continue;
      const t = r.timestamp;
      out.push({
        datasetId,
        url: r.url,
        ts: `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}Z`,
        status: Number(r.status),
        title: null,
        textLength: null,
        warc: { filename: r.filename, offset: r.offset, length: r.length },
      });
    }
  }
  return out;
}
export const cap40 = capturesOf(CRAWLS[0], 1);
export const cap44 = capturesOf(CRAWLS[1], 2);
export const viewBoth = buildMemoryView('v2', DATASETS, [...cap40, ...cap44]).view;
export const viewOld = buildMemoryView('v1', DATASETS, cap40).view;
export const canonicalSet = (urls: string[]): Set<string> => new Set(urls.map((u) => canonicalizeUrl(u).url));


/** GET over real HTTP; JSON bodies parsed. */
export async function get(server: ApiServer, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(server.url + path, { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text };
}
