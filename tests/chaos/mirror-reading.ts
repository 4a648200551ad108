/**
 * What the pipeline must yield from a mirror, read by the test itself: every ZipNum block that cluster.idx names is
 * cut out of its shard and inflated with node:zlib, each CDX line parsed as `SURT TS JSON`, the default filter applied
 * (status "200", "eng" among the languages), and URLs grouped by registered domain (tldts, ICANN section). Nothing of
 * ccpipe's batcher, parser or filter is on this path; ccpipe's canonical URL form is applied only at the end, to
 * compare with what the API returns.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { getDomain } from 'tldts';
import { canonicalizeUrl } from '@ccpipe/core';
import { oracleUrlForm } from '../support/corpus';

/** One crawl as the mirror holds it. */
export interface CrawlReading {
  /** CDX lines in every block. */
  cdxLines: number;
  /** Captures the default filter keeps (a URL captured twice counts twice). */
  kept: number;
  blocks: number;
  /** Batches a batcher with `batchSize` publishes: per block, ceil(kept / batchSize) (batches never span blocks). */
  batches: number;
  /** Registered domain → its URLs in ccpipe's canonical form (the API's), each once. */
  domains: Map<string, Set<string>>;
  /** Registered domain → its URLs in the oracle's form (scheme and host lower-cased, default port dropped). */
  oracleForm: Map<string, Set<string>>;
}

/** Reads `crawl` from the mirror at `root` for batches of `batchSize`. */
export function readCrawl(root: string, crawl: string, batchSize: number): CrawlReading {
  const dir = join(root, 'cc-index', 'collections', crawl, 'indexes');
  const shards = new Map<string, Buffer>();
  const out: CrawlReading = { cdxLines: 0, kept: 0, blocks: 0, batches: 0, domains: new Map(), oracleForm: new Map() };
  for (const entry of readFileSync(join(dir, 'cluster.idx'), 'utf8').split('\n')) {
    if (entry.trim() === '') continue;
    const [, shard, offset, length] = entry.split('\t');
    if (!shards.has(shard!)) shards.set(shard!, readFileSync(join(dir, shard!)));
    const block = shards.get(shard!)!.subarray(Number(offset), Number(offset) + Number(length));
    let keptInBlock = 0;
    for (const line of gunzipSync(block).toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      out.cdxLines += 1;
      const json = line.slice(line.indexOf('{'));
      const j = JSON.parse(json) as Record<string, string>;
      const langs = (j['languages'] ?? '').split(',');
      if (j['status'] !== '200' || !langs.includes('eng')) continue;
      keptInBlock += 1;
      const raw = j['url']!;
      const host = new URL(raw).hostname.toLowerCase();
      const domain = getDomain(host, { allowPrivateDomains: false }) ?? host;
      add(out.oracleForm, domain, oracleUrlForm(raw));
      add(out.domains, domain, canonicalizeUrl(raw).url);
    }
    out.blocks += 1;
    out.kept += keptInBlock;
    out.batches += Math.ceil(keptInBlock / batchSize);
  }
  return out;
}

function add(m: Map<string, Set<string>>, k: string, v: string): void {
  let s = m.get(k);
  if (s === undefined) m.set(k, (s = new Set()));
  s.add(v);
}
