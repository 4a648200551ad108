import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { decompress } from 'fzstd';
import { Registry } from 'prom-client';
import { emptyDatasetRegistry, ensureDatasetIn, serializeDatasetRegistry } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine, writeParquetPart } from '@ccpipe/adapters';
import { processBatch, type BatchDeps } from '@ccpipe/worker';
import { decodeLocator, indexLayout, openIndexSource, runMerge, type LakeFileEntry } from '@ccpipe/index';
import { DEV_CRAWLS } from '../../../tests/support/corpus';
import { devBatches, devReader } from '../../../tests/support/dev-batches';
import { lakeReaderMetrics } from './metrics';
import { startApi, type ApiServer } from './server';
import { get } from './test-corpus';

// A lake file damaged after publishing (bit rot, a bad copy): the API checks each column chunk it fetches against the
// CRC32 its row-group locator records, answers 500 CCP_ERR_API_DATA_DAMAGED for what needs the damaged chunk, counts
// it, and goes on answering everything else.
let dir: string;
afterAll(async () => {
  await closeDuckDbParquetEngine();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('a damaged lake chunk fails only the answers that need it, with its own code, counted on /metrics', async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-api-damage-'));
  const store = new FsObjectStore({ root: dir });
  const crawl = DEV_CRAWLS[0];
  const { registry: reg } = ensureDatasetIn(emptyDatasetRegistry(), crawl, crawl, '2030-01-01T00:00:00Z');
  await store.put('datasets.json', serializeDatasetRegistry(reg));
  const datasetId = reg.datasets[0]!.id;
  const deps: BatchDeps = {
    reader: devReader(), store,
    extract: async () => ({ title: 'T', text: 'some text', lang: null, outlinks: [], dom: 'linkedom', article: false, truncated: false, outlinksTruncated: false }),
    writePart: (rows) => writeParquetPart(rows, { engine: 'duckdb' }),
  };
  for (const b of await devBatches(crawl, { datasetId })) await processBatch(b, deps, { concurrency: 8, includeText: true });
  const { version } = await runMerge({ store, dataDir: dir, rowGroupSize: 64, keepVersions: 3, graceMs: 60_000 });
  expect(version).not.toBeNull();

  // two lake files (the dev crawl's rows fit one row group per partition): a domain of the damaged one and one of another
  const files = JSON.parse((await readFile(join(dir, indexLayout.versionFile(version!, 'files.json')))).toString()) as LakeFileEntry[];
  expect(files.length).toBeGreaterThan(2);
  const domainsOf = async (f: LakeFileEntry): Promise<string[]> => {
    const b = await readFile(join(dir, f.key));
    return (await parquetReadObjects({ file: b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer, columns: ['domain'], compressors: { ZSTD: (input: Uint8Array) => decompress(input) } })).map((r) => r['domain'] as string);
  };
  const [file, other] = [files[0]!, files[1]!];
  const path = join(dir, file.key);
  const bytes = await readFile(path);
  const hit = (await domainsOf(file))[0]!;
  const otherDomains = await domainsOf(other);
  const spared = otherDomains[0]!;

  // one byte flipped inside the url chunk of the damaged file's row group 0, where its locator says it lies
  const loc = decodeLocator(await readFile(join(dir, file.locator!.key)), file.locator!.key);
  const k = loc.columns.findIndex((c) => c.name === 'url');
  expect(loc.fields).toBe(5); // each chunk's CRC32 recorded
  const o = 1 + k * loc.fields; // row group 0's url chunk: dictionary or data page offset, compressed bytes
  const at = (loc.table[o]! > 0 ? loc.table[o]! : loc.table[o + 1]!) + Math.floor(loc.table[o + 2]! / 2);
  const fh = await open(path, 'r+');
  try {
    await fh.write(Buffer.from([bytes[at]! ^ 0x5a]), 0, 1, at);
  } finally {
    await fh.close();
  }

  const source = await openIndexSource({ store, dataDir: dir, pollMs: 0 });
  const registry = new Registry();
  lakeReaderMetrics(registry, () => source.cacheStats());
  let server: ApiServer | undefined;
  const damaged = async (): Promise<string | undefined> => (await (await fetch(`${server!.url}/metrics`)).text()).match(/\nccpipe_api_lake_damaged_chunks_total (\d+)\n/)?.[1];
  try {
    server = await startApi({ source, port: 0, registry });
    const urls = (d: string) => get(server!, `/v1/domain/${d}/datasets/${datasetId}/urls?limit=1000`);
    for (const round of [1, 2]) {
      // refused every time (a damaged chunk is never decoded or cached), counted each time
      const r = await urls(hit);
      expect([round, r.status, r.body.error?.code]).toEqual([round, 500, 'CCP_ERR_API_DATA_DAMAGED']);
      expect(await damaged()).toBe(String(round));
    }
    // the index answers for the same domain, and another file's domain is served whole
    const d = await get(server, `/v1/domain/${hit}`);
    expect(d.status).toBe(200);
    const s = await urls(spared!);
    expect(s.status).toBe(200);
    expect(s.body.items).toHaveLength(otherDomains.filter((x) => x === spared).length);
    expect(s.body.total).toBe(s.body.items.length);

    // a lake file cut short (a bad copy, a full disk): damaged data too, counted — not an internal error
    const cut = files.find((f) => f !== file && f !== other)!;
    const cutDomain = (await domainsOf(cut))[0]!;
    const fh2 = await open(join(dir, cut.key), 'r+');
    try {
      await fh2.truncate(Math.floor(cut.bytes / 3));
    } finally {
      await fh2.close();
    }
    const before = Number(await damaged());
    const c = await urls(cutDomain);
    expect([c.status, c.body.error?.code]).toEqual([500, 'CCP_ERR_API_DATA_DAMAGED']);
    expect(Number(await damaged())).toBe(before + 1);
  } finally {
    await server?.close();
    await source.close();
  }
});
