/**
 * What the chaos suite reads back after the run, to compare with its reading of the mirror (mirror-reading.ts): the
 * final version's lake, file by file with hyparquet, and every (domain, crawl) through the HTTP API.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decompress as decompressZstd } from 'fzstd';
import { parquetReadObjects } from 'hyparquet';
import type { CrawlReading } from './mirror-reading';

const compressors = { ZSTD: (input: Uint8Array, outputLength: number) => decompressZstd(input, new Uint8Array(outputLength)) };

/**
 * The URLs of every lake file of `version` (its files.json), per dataset id, read with hyparquet — not the merger's or
 * the API's reader. The lake holds one row per (dataset, canonical URL): a URL read twice is doubled in storage, whatever
 * the API makes of it.
 */
export async function lakeUrls(dataDir: string, version: string): Promise<Map<number, string[]>> {
  const files = JSON.parse(await readFile(join(dataDir, 'index', version, 'files.json'), 'utf8')) as { key: string }[];
  const out = new Map<number, string[]>();
  for (const f of files) {
    const id = Number(/dataset_id=(\d+)\//.exec(f.key)?.[1]);
    const bytes = await readFile(join(dataDir, f.key));
    const rows = (await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, columns: ['url'], compressors })) as { url: string }[];
    out.set(id, [...(out.get(id) ?? []), ...rows.map((r) => r.url)]);
  }
  return out;
}

export interface CrawlComparison {
  want: number;
  served: number;
  domains: number;
  lost: number;
  doubled: number;
  extra: number;
  countMismatches: number;
}

/**
 * Reads every (domain, crawl) through the API — the dataset's domain list, `/v1/domain/{d}` counts, every page of
 * `/urls` — and compares with the reading: URLs the reading has and the API does not (lost), URLs served twice
 * (doubled), URLs the reading does not have (extra), and counts that differ from the reading's.
 */
export async function compareApi(base: string, reading: Map<string, CrawlReading>): Promise<{ byCrawl: Map<string, CrawlComparison>; problems: string[] }> {
  const get = async (path: string): Promise<{ status: number; body: any }> => {
    const res = await fetch(base + path);
    return { status: res.status, body: await res.json() };
  };
  const problems: string[] = [];
  const byCrawl = new Map<string, CrawlComparison>();
  const datasets = (await get('/v1/datasets')).body.datasets as { dataset_id: number; name: string; url_count: number; domain_count: number }[];
  for (const [crawl, r] of reading) {
    const ds = datasets.find((d) => d.name === crawl);
    const c: CrawlComparison = { want: [...r.domains.values()].reduce((n, s) => n + s.size, 0), served: 0, domains: 0, lost: 0, doubled: 0, extra: 0, countMismatches: 0 };
    byCrawl.set(crawl, c);
    if (ds === undefined) {
      problems.push(`${crawl}: not among the API's datasets`);
      c.lost = c.want;
      continue;
    }
    if (ds.url_count !== c.want || ds.domain_count !== r.domains.size) {
      c.countMismatches += 1;
      problems.push(`${crawl}: /v1/datasets says ${ds.url_count} URLs in ${ds.domain_count} domains, the mirror ${c.want} in ${r.domains.size}`);
    }
    const listed = new Map<string, number>(((await get(`/v1/datasets/${ds.dataset_id}/domains?limit=1000`)).body.items as { domain: string; url_count: number }[]).map((i) => [i.domain, i.url_count]));
    c.domains = listed.size;
    for (const domain of new Set([...r.domains.keys(), ...listed.keys()])) {
      const want = r.domains.get(domain) ?? new Set<string>();
      const one = await get(`/v1/domain/${encodeURIComponent(domain)}`);
      const count = one.status === 200 ? (one.body.datasets as { dataset_id: number; url_count: number }[]).find((d) => d.dataset_id === ds.dataset_id)?.url_count ?? 0 : 0;
      const seen: string[] = [];
      for (let offset: number | null = 0; offset !== null; ) {
        const page = await get(`/v1/domain/${encodeURIComponent(domain)}/datasets/${ds.dataset_id}/urls?offset=${offset}&limit=1000`);
        if (page.status !== 200) break;
        seen.push(...(page.body.items as { url: string }[]).map((i) => i.url));
        offset = page.body.next_offset as number | null;
      }
      const got = new Set(seen);
      const lost = [...want].filter((u) => !got.has(u));
      const extra = [...got].filter((u) => !want.has(u));
      c.served += seen.length;
      c.lost += lost.length;
      c.extra += extra.length;
      c.doubled += seen.length - got.size;
      const counts = [count, listed.get(domain) ?? 0];
      if (counts.some((n) => n !== want.size)) c.countMismatches += 1;
      if (lost.length + extra.length + seen.length - got.size > 0 || counts.some((n) => n !== want.size)) {
        problems.push(`${crawl} ${domain}: mirror ${want.size} URLs, /v1/domain ${counts[0]}, domain list ${counts[1]}, listed ${seen.length} (${got.size} distinct); lost e.g. ${lost.slice(0, 2).join(' ')}; extra e.g. ${extra.slice(0, 2).join(' ')}`);
      }
    }
  }
  return { byCrawl, problems };
}
