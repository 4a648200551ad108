import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalizeUrl, emptyDatasetRegistry, ensureDatasetIn, serializeDatasetRegistry, type Batch } from '@ccpipe/core';
import { FsObjectStore, FsRangeReader, closeDuckDbParquetEngine, writeParquetPart } from '@ccpipe/adapters';
import { processBatch, type BatchDeps } from '@ccpipe/worker';
import { CC_MIRROR_DEV, DEV_CRAWLS, loadOracle } from '../../../tests/support/corpus';
import { openDuck, queryRows } from './duck';
import { indexLayout, type LakeFileEntry } from './format';
import { openIndexSource } from './index-source';
import { partitionOf } from './domain-ids';
import { runMerge } from './run-merge';
import { devBatches } from '../../../tests/support/dev-batches';
import { readParquetRows } from '../../../tests/support/parquet';

/** A domain's datasets with their URL counts only (the facts are domain-facts.test.ts's). */
const urlCounts = ({ datasetId, urlCount }: { datasetId: number; urlCount: number }): { datasetId: number; urlCount: number } => ({ datasetId, urlCount });

const oracle = loadOracle();
const reader = new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true });

const batchesOf = (crawl: string, datasetId: number): Promise<Batch[]> => devBatches(crawl, { datasetId });

/** Canonical form of an oracle URL (dedupe is by canonical URL; a few oracle spellings canonicalize together). */
const canon = (u: string): string => canonicalizeUrl(u).url;

let dir: string;
afterAll(async () => {
  await closeDuckDbParquetEngine();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('runMerge over cc-mirror-dev batches written by the worker', () => {
  it('answers every (domain, crawl) of the oracle with the same datasets, counts and URL set; the second crawl merges incrementally', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccpipe-index-corpus-'));
    const store = new FsObjectStore({ root: dir });
    let reg = emptyDatasetRegistry();
    const ids: Record<string, number> = {};
    for (const crawl of DEV_CRAWLS) {
      const r = ensureDatasetIn(reg, crawl, crawl, '2030-01-01T00:00:00Z');
      reg = r.registry;
      ids[crawl] = r.entry.id;
    }
    await store.put('datasets.json', serializeDatasetRegistry(reg));
    // Extraction is not what this test is about: an inline extractor keeps it fast.
    const deps: BatchDeps = {
      reader, store, extract: async () => ({ title: null, text: 'x', lang: null, outlinks: [], dom: 'linkedom', article: false, truncated: false, outlinksTruncated: false }),
      writePart: (rows) => writeParquetPart(rows, { engine: 'duckdb' }),
    };
    const mergeOpts = { store, dataDir: dir, rowGroupSize: 2048, keepVersions: 3, graceMs: 60_000, passRows: 150 }; // partitions written in many groups (each group uploaded before the next)
    const results = [];
    for (const crawl of DEV_CRAWLS) {
      for (const b of await batchesOf(crawl, ids[crawl]!)) await processBatch(b, deps, { concurrency: 8, includeText: false });
      results.push(await runMerge(mergeOpts));
    }
    expect(results.map((r) => r.version)).toEqual(['v000001', 'v000002']);
    expect(results.map((r) => r.rowsIn)).toEqual(DEV_CRAWLS.map((c) => oracle.crawls[c]!.kept_captures));

    // The second crawl is a new dataset: the first crawl's lake files are carried over untouched.
    const files = async (v: string) => JSON.parse(Buffer.from((await store.get(indexLayout.versionFile(v, 'files.json')))!).toString()) as LakeFileEntry[];
    const f1 = await files('v000001');
    const f2 = await files('v000002');
    expect(f2.filter((f) => f.datasetId === ids[DEV_CRAWLS[0]]).map((f) => f.key)).toEqual(f1.map((f) => f.key));
    expect(results[1]!.rewrittenFiles).toBe(f2.filter((f) => f.datasetId === ids[DEV_CRAWLS[1]]).length);
    // Every lake file is in (domain64, url) order, read back by hyparquet.
    for (const f of f2) {
      const rows = await readParquetRows((await store.get(f.key))!);
      const keys = rows.map((r) => [BigInt(r['domain64'] as bigint), r['url'] as string] as const);
      const sorted = [...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
      expect(keys).toEqual(sorted);
    }

    const src = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    try {
      const v = (await src.current())!;
      expect(v.version).toBe('v000002');
      const allDomains = new Set(DEV_CRAWLS.flatMap((c) => Object.keys(oracle.crawls[c]!.domains)));
      let checked = 0;
      for (const domain of allDomains) {
        const want = DEV_CRAWLS.filter((c) => oracle.crawls[c]!.domains[domain]).map((c) => ({
          datasetId: ids[c]!,
          urls: [...new Set(oracle.crawls[c]!.domains[domain]!.urls.map(canon))].sort(),
        }));
        const got = v.domain(domain);
        expect(got?.datasets.map(urlCounts)).toEqual(want.map((w) => ({ datasetId: w.datasetId, urlCount: w.urls.length })));
        for (const w of want) {
          const seen: string[] = [];
          for (let off = 0; ; off += 7) {
            const page = await v.urls(domain, w.datasetId, off, 7);
            expect(page.total).toBe(w.urls.length);
            if (page.items.length === 0) break;
            seen.push(...page.items.map((i) => i.url));
          }
          expect(seen).toEqual([...seen].sort()); // stable (domain64, url) order inside one domain
          expect([...seen].sort()).toEqual(w.urls);
          checked++;
        }
      }
      expect(checked).toBe(DEV_CRAWLS.reduce((n, c) => n + Object.keys(oracle.crawls[c]!.domains).length, 0));
      // A URL captured in both crawls shows one capture per dataset.
      const both = [...allDomains].find((d) => DEV_CRAWLS.every((c) => oracle.crawls[c]!.domains[d]))!;
      const url = (await v.urls(both, ids[DEV_CRAWLS[0]]!, 0, 1)).items[0]!.url;
      const caps = await v.captures(url);
      expect(caps.every((c) => c.url === url && c.warc!.length > 0)).toBe(true);
      expect(caps.map((c) => c.datasetId)).toContain(ids[DEV_CRAWLS[0]]);
      expect(v.datasets().map((d) => [d.name, d.urlCount])).toEqual(
        DEV_CRAWLS.map((c) => [c, Object.values(oracle.crawls[c]!.domains).reduce((n, d) => n + new Set(d.urls.map(canon)).size, 0)]),
      );
      // Any engine reads the lake as a plain hive-partitioned dataset: one row per (dataset, canonical URL).
      const db = await openDuck();
      const conn = await db.connect();
      try {
        const rows = await queryRows(
          conn,
          `SELECT dataset_id, count(*) AS n, count(DISTINCT url) AS u FROM read_parquet('${dir}/urls/*/*/*.parquet', hive_partitioning = true) GROUP BY 1 ORDER BY 1`,
        );
        expect(rows.map((r) => [Number(r['dataset_id']), Number(r['n']), Number(r['u'])])).toEqual(
          v.datasets().map((d) => [d.datasetId, d.urlCount, d.urlCount]),
        );
        // domain_prefix, the other hive key, is each domain's partition: one per domain, the one its domain64 gives
        const prefixes = await queryRows(
          conn,
          `SELECT domain, min(domain_prefix) AS p, count(DISTINCT domain_prefix) AS k FROM read_parquet('${dir}/urls/*/*/*.parquet', hive_partitioning = true) GROUP BY 1`,
        );
        expect(prefixes.length).toBe(new Set(DEV_CRAWLS.flatMap((c) => Object.keys(oracle.crawls[c]!.domains))).size);
        for (const r of prefixes) {
          const found = v.domain(r['domain'] as string)!;
          expect([r['domain'], Number(r['k']), r['p']]).toEqual([r['domain'], 1, partitionOf(BigInt(`0x${found.domain64.replace(/:/g, '')}`))]);
        }
      } finally {
        conn.closeSync();
        db.closeSync();
      }
    } finally {
      await src.close();
    }
  }, 300_000);
});
