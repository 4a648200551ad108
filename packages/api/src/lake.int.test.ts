import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalizeUrl, emptyDatasetRegistry, ensureDatasetIn, serializeDatasetRegistry, type Batch } from '@ccpipe/core';
import { FsObjectStore, FsRangeReader, closeDuckDbParquetEngine, writeParquetPart } from '@ccpipe/adapters';
import { processBatch, type BatchDeps } from '@ccpipe/worker';
import { openIndexSource, runMerge } from '@ccpipe/index';
import { CC_MIRROR_DEV, DEV_CRAWLS, loadOracle } from '../../../tests/support/corpus';
import { startApi, type ApiServer } from './server';
import { get } from './test-corpus';
import { devBatches } from '../../../tests/support/dev-batches';

// The API over the real read side: cc-mirror-dev → batcher → worker → merger → openIndexSource → HTTP, with a
// manifest flip (second crawl merged) while the server runs.
const oracle = loadOracle();
const reader = new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: true });
const canon = (u: string): string => canonicalizeUrl(u).url;

const batchesOf = (crawl: string, datasetId: number): Promise<Batch[]> => devBatches(crawl, { datasetId });

let dir: string;
afterAll(async () => {
  await closeDuckDbParquetEngine();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('API over the merged lake index', () => {
  it('serves what the oracle says, and follows a manifest flip without a restart', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccpipe-api-lake-'));
    const store = new FsObjectStore({ root: dir });
    let reg = emptyDatasetRegistry();
    for (const crawl of DEV_CRAWLS) reg = ensureDatasetIn(reg, crawl, crawl, '2030-01-01T00:00:00Z').registry;
    await store.put('datasets.json', serializeDatasetRegistry(reg));
    const ids = Object.fromEntries(reg.datasets.map((d) => [d.name, d.id])) as Record<string, number>;
    const deps: BatchDeps = {
      reader, store,
      extract: async () => ({ title: 'T', text: 'some text', lang: null, outlinks: [], dom: 'linkedom', article: false, truncated: false, outlinksTruncated: false }),
      writePart: (rows) => writeParquetPart(rows, { engine: 'duckdb' }),
    };
    const ingest = async (crawl: string): Promise<string> => {
      for (const b of await batchesOf(crawl, ids[crawl]!)) await processBatch(b, deps, { concurrency: 8, includeText: true });
      const { version } = await runMerge({ store, dataDir: dir, rowGroupSize: 64, keepVersions: 3, graceMs: 60_000 });
      if (version === null) throw new Error('merge published no version');
      return version;
    };
    const v1 = await ingest(DEV_CRAWLS[0]);

    const source = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
    let server: ApiServer | undefined;
    try {
      server = await startApi({ source, port: 0 });
      const [c40, c44] = DEV_CRAWLS.map((c) => oracle.crawls[c]!.domains);
      const want40 = new Set(c40!['bulk-3.co.uk']!.urls.map(canon));

      const d1 = await get(server, '/v1/domain/WWW.BULK-3.CO.UK');
      expect(d1.headers.get('x-index-version')).toBe(v1);
      expect(d1.body).toMatchObject({ domain: 'bulk-3.co.uk', version: v1, datasets: [{ dataset_id: ids[DEV_CRAWLS[0]], name: DEV_CRAWLS[0], url_count: want40.size }] });

      // paging over HTTP with a page smaller than a row group and one larger
      for (const limit of [50, 1000]) {
        const seen: string[] = [];
        for (let off: number | null = 0; off !== null; ) {
          const r = await get(server, `/v1/domain/bulk-3.co.uk/datasets/${ids[DEV_CRAWLS[0]]}/urls?offset=${off}&limit=${limit}`);
          expect([r.status, r.body.total]).toEqual([200, want40.size]);
          seen.push(...r.body.items.map((i: { url: string }) => i.url));
          off = r.body.next_offset;
        }
        expect(seen.length).toBe(want40.size);
        expect(new Set(seen)).toEqual(want40);
      }

      const only44 = Object.keys(c44!).find((d) => !c40![d])!;
      expect((await get(server, `/v1/domain/${only44}`)).status).toBe(404);

      // the second crawl is merged while the server runs: the next request sees it
      const v2 = await ingest(DEV_CRAWLS[1]);
      expect(v2).not.toBe(v1);
      const d2 = await get(server, '/v1/domain/bulk-3.co.uk');
      expect(d2.headers.get('x-index-version')).toBe(v2);
      expect(d2.body.datasets.map((d: { name: string; url_count: number }) => [d.name, d.url_count])).toEqual(
        DEV_CRAWLS.map((c) => [c, new Set(oracle.crawls[c]!.domains['bulk-3.co.uk']!.urls.map(canon)).size]),
      );
      expect((await get(server, `/v1/domain/${only44}`)).status).toBe(200);

      // a URL of both crawls: one capture per dataset, with its WARC location
      const both = Object.keys(c40!).find((d) => c44![d] && !d.startsWith('bulk'))!;
      const url = [...new Set(c40![both]!.urls.map(canon))].find((u) => c44![both]!.urls.map(canon).includes(u))!;
      const u = await get(server, `/v1/url?url=${encodeURIComponent(url)}`);
      expect(u.status).toBe(200);
      expect(u.body.url).toBe(url);
      expect(u.body.captures.map((c: { dataset: string }) => c.dataset).sort()).toEqual([...DEV_CRAWLS]);
      for (const c of u.body.captures) expect(c.warc).toEqual({ filename: expect.stringMatching(/\.warc\.gz$/), offset: expect.any(Number), length: expect.any(Number) });

      const ds = await get(server, '/v1/datasets');
      expect(ds.body.datasets.map((d: { name: string }) => d.name)).toEqual([...DEV_CRAWLS]);
    } finally {
      await server?.close();
      await source.close();
    }
  }, 300_000);
});
