import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadata, type FileMetaData } from 'hyparquet';
import { urlId, urlIdHex, type ObjectStore } from '@ccpipe/core';
import { MemoryObjectStore } from '@ccpipe/adapters';
import { RecordingStore } from '../../../tests/support/recording-store';
import type { DuckDBInstance } from '@duckdb/node-api';
import { BatchSet } from './batch-set';
import { openDuck, queryRows, sqlString } from './duck';
import { DomainIndex, crcOf, indexLayout, type LakeFileEntry } from './format';
import { indexFiles } from '../../../tests/support/index-files';
import { buildLocator } from './lake-locator';
import { LakeIndexView } from './lake-index-view';
import { ParquetLakeReader, groupsOf } from './lake-reader';
import type { LoadedVersion } from './version-files';

// A lake file as the merger writes it (domain64-sorted runs, ZSTD, 2048-row groups), made by DuckDB in SQL so the
// run of big.example spans several row groups; DuckDB also reads it back as the independent oracle.
const DOMAINS = [
  { domain: 'big.example', d64: 1n, rows: 5000 },
  { domain: 'small.example', d64: 2n, rows: 3 },
  { domain: 'mid.example', d64: 3n, rows: 2100 },
];
const KEY = 'urls/dataset_id=1/domain_prefix=00/part-v000001.parquet';

let dir: string;
let db: DuckDBInstance;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-lake-reader-'));
  db = await openDuck();
});
afterAll(async () => {
  db.closeSync();
  await rm(dir, { recursive: true, force: true });
});

/** Writes the fixture file (with or without url_id, Parquet V1 or V2 pages) and returns its bytes. */
async function lakeFile(name: string, opts: { urlId: boolean; version: 'V1' | 'V2' }): Promise<Buffer> {
  const path = join(dir, name);
  const gen = DOMAINS.map(
    (d) => `SELECT ${d.d64}::BIGINT AS domain64, 'https://www.${d.domain}/p/' || lpad(i::VARCHAR, 5, '0') || CASE WHEN i % 7 = 0 THEN '?q=ü' ELSE '' END AS url, i FROM range(${d.rows}) t(i)`,
  );
  const conn = await db.connect();
  try {
    await conn.run(`COPY (
      SELECT domain64, ${opts.urlId ? '(hash(url) % 9223372036854775807)::BIGINT AS url_id,' : ''} url, NULL::VARCHAR AS raw_url,
             to_timestamp(1900000000 + i * 61) AS ts, (CASE WHEN i % 11 = 0 THEN 404 ELSE 200 END)::SMALLINT AS status,
             CASE WHEN i % 5 = 0 THEN NULL ELSE 'Title ' || i END AS title,
             CASE WHEN i % 3 = 0 THEN NULL ELSE repeat('héllo wörld 𝄞 ', (i % 4)::INTEGER) END AS text,
             (i * 37 % 100000)::INTEGER AS content_length,
             CASE WHEN i % 4 = 0 THEN NULL WHEN i % 4 = 1 THEN 'eng' ELSE 'deu,eng' END AS languages,
             'crawl-data/w-' || (i % 13) || '.warc.gz' AS warc_filename, (i * 1000)::BIGINT AS warc_offset, (500 + i % 100)::INTEGER AS warc_length
      FROM (${gen.join(' UNION ALL ')}) ORDER BY domain64, url
    ) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 2048, PARQUET_VERSION ${opts.version})`);
  } finally {
    conn.closeSync();
  }
  return readFile(path);
}

/** DuckDB's reading of rows [from, to) of a file: the oracle. */
async function oracle(name: string, from: number, to: number): Promise<Record<string, unknown>[]> {
  const conn = await db.connect();
  try {
    return await queryRows(
      conn,
      `SELECT * EXCLUDE (file_row_number), length(text) AS text_length FROM read_parquet(${sqlString(join(dir, name))}, file_row_number = true)
       WHERE file_row_number >= ${from} AND file_row_number < ${to} ORDER BY file_row_number`,
    );
  } finally {
    conn.closeSync();
  }
}

/** A version over one lake file: the three domains' runs, back to back, all in dataset 1. */
function version(bytes: Buffer, meta: FileMetaData, collisions: Record<string, string> = {}, locator?: LakeFileEntry['locator']): LoadedVersion {
  let first = 0;
  const entries = DOMAINS.map((d) => {
    const e = { domain: d.domain, d64: d.d64, postings: [{ datasetId: 1, file: 0, first, rows: d.rows }] };
    first += d.rows;
    return e;
  });
  const rowGroups: [number, number][] = [];
  for (const g of meta.row_groups) rowGroups.push([rowGroups.reduce((n, [, r]) => n + r, 0), Number(g.num_rows)]);
  const file: LakeFileEntry = { key: KEY, datasetId: 1, prefix: '00', rows: first, bytes: bytes.length, crc32: crcOf(bytes), rowGroups, ...(locator && { locator }) };
  return {
    toc: { v: 1, version: 'v000001', parent: null, createdAt: '2030-01-01T00:00:00Z', files: {} },
    index: new DomainIndex([indexFiles(entries)]),
    files: [file],
    domainIds: {} as LoadedVersion['domainIds'],
    collisions,
    batches: BatchSet.empty(),
    status: { datasets: [{ datasetId: 1, urlCount: first, domainCount: 3 }] } as unknown as LoadedVersion['status'],
  };
}

/** Byte ranges of every column chunk: [rowGroup, column, start, end). */
function chunksOf(meta: FileMetaData): { g: number; column: string; start: number; end: number }[] {
  return meta.row_groups.flatMap((rg, g) =>
    rg.columns.map((c) => {
      const m = c.meta_data!;
      const start = Number(m.dictionary_page_offset || m.data_page_offset);
      return { g, column: m.path_in_schema[0]!, start, end: start + Number(m.total_compressed_size) };
    }),
  );
}

/**
 * The (row group, column) chunks a set of range reads touched; the footer tail counts as 'footer', a read of the
 * row-group locator as 'locator'.
 */
function touched(meta: FileMetaData, ranges: { key: string; offset: number; length: number }[], size: number): string[] {
  const chunks = chunksOf(meta);
  const out = new Set<string>();
  for (const r of ranges) {
    if (r.key !== KEY) {
      out.add(r.key === indexLayout.locatorOf(KEY) ? 'locator' : r.key);
      continue;
    }
    // the footer is read as one tail of up to 64 KiB, which may also cover the last chunks
    if (r.offset + r.length === size && r.length === Math.min(size, 64 * 1024)) {
      out.add('footer');
      continue;
    }
    for (const c of chunks) if (r.offset < c.end && r.offset + r.length > c.start) out.add(`${c.g}:${c.column}`);
  }
  // The columns of one row group are fetched as one range across gaps of ≤ 8 KiB (hyparquet's coalescing): raw_url,
  // all null here (tens of bytes), sits between url and ts and comes along; it is never decoded.
  for (const c of chunks) if (c.column === 'raw_url' && out.has(`${c.g}:raw_url`) && c.end - c.start < 8192) out.delete(`${c.g}:raw_url`);
  return [...out].sort();
}

const expectedItem = (r: Record<string, unknown>, id: bigint) => ({
  urlId: urlIdHex(id),
  url: r['url'],
  ts: (r['ts'] as Date).toISOString().replace('.000Z', 'Z'),
  status: Number(r['status']),
  title: r['title'] ?? null,
});

describe.each([
  ['V1', 'footer', 'flat'],
  ['V2', 'footer', 'flat'],
  ['V1', 'locator', 'flat'],
  ['V2', 'locator', 'flat'],
  ['V2', 'locator', 'hyparquet'],
] as const)('ParquetLakeReader over a MemoryObjectStore (Parquet %s pages, layout from the %s, %s decoder)', (pv, layout, decoder) => {
  const name = `lake-${pv}.parquet`;
  // the first read of a file: its footer, or its row-group locator (never the footer then)
  const first = layout === 'footer' ? 'footer' : 'locator';
  let bytes: Buffer;
  let meta: FileMetaData;
  beforeAll(async () => {
    bytes = await lakeFile(name, { urlId: true, version: pv });
    meta = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer);
  });
  const open = async (cacheBytes?: number) => {
    const store = new RecordingStore();
    await store.put(KEY, bytes);
    let locator: LakeFileEntry['locator'];
    if (layout === 'locator') {
      const loc = buildLocator(bytes);
      locator = { key: indexLayout.locatorOf(KEY), bytes: loc.length, crc32: crcOf(loc) };
      await store.put(locator.key, loc);
    }
    const reader = new ParquetLakeReader({ store, decoder, ...(cacheBytes !== undefined && { cacheBytes }) });
    return { store, reader, view: new LakeIndexView(version(bytes, meta, {}, locator), reader, new Map()) };
  };

  it('fixture: big.example spans several row groups', () => {
    expect(meta.row_groups.length).toBeGreaterThanOrEqual(4);
    expect(groupsOf({ starts: [0, 2048, 4096, 6144, 7103] }, 2000, 2100)).toEqual([0, 1]);
  });

  it('reads only the footer or locator, then the row groups and columns a page needs; a repeated page reads nothing', async () => {
    const { store, view } = await open();
    // big.example rows 2100..2200 lie inside row group 1
    const page = await view.urls('big.example', 1, 2100, 100);
    expect(page.total).toBe(5000);
    // url_id is not read: computed from url (the fixture's column holds other values, so a read one would show)
    expect(touched(meta, store.ranges, bytes.length)).toEqual(['1:status', '1:title', '1:ts', '1:url', first].sort());
    const want = await oracle(name, 2100, 2200);
    expect(page.items).toEqual(want.map((r) => expectedItem(r, urlId(r['url'] as string))));
    store.ranges = [];
    expect(await view.urls('big.example', 1, 2100, 100)).toEqual(page);
    expect(store.ranges).toEqual([]);
    // a page straddling row groups 1 and 2 reads just row group 2 more
    const straddle = await view.urls('big.example', 1, 4000, 200);
    expect(touched(meta, store.ranges, bytes.length)).toEqual(['2:status', '2:title', '2:ts', '2:url']);
    expect(straddle.items.map((i) => i.url)).toEqual((await oracle(name, 4000, 4200)).map((r) => r['url']));
  });

  it('paging over a multi-row-group run returns every row exactly once, in file order, for each domain', async () => {
    const { view } = await open();
    let first = 0;
    for (const d of DOMAINS) {
      const seen: string[] = [];
      for (let off = 0; ; off += 700) {
        const p = await view.urls(d.domain, 1, off, 700);
        expect(p.total).toBe(d.rows);
        if (p.items.length === 0) break;
        seen.push(...p.items.map((i) => i.url));
      }
      expect(seen).toEqual((await oracle(name, first, first + d.rows)).map((r) => r['url']));
      first += d.rows;
    }
    expect(await view.urls('big.example', 1, 5000, 10)).toEqual({ total: 5000, items: [] });
    expect(await view.urls('big.example', 2, 0, 10)).toEqual({ total: 0, items: [] });
    expect(await view.urls('nope.example', 1, 0, 10)).toEqual({ total: 0, items: [] });
  });

  it('captures(url) reads the url column of the run and the other columns of the matching row group only', async () => {
    const { store, view } = await open();
    const [want] = await oracle(name, 5000 + 3 + 2058, 5000 + 3 + 2059); // mid.example, row group 3
    const url = want!['url'] as string;
    const got = await view.captures(url);
    expect(got).toEqual([
      {
        datasetId: 1, ...expectedItem(want!, urlId(url)),
        textLength: want!['text_length'] === null ? null : Number(want!['text_length']),
        language: want!['languages'] === null ? null : String(want!['languages']).split(',')[0],
        contentLength: Number(want!['content_length']),
        warc: { filename: want!['warc_filename'], offset: Number(want!['warc_offset']), length: want!['warc_length'] },
        // a lake written without the quality step's columns: null
        textLanguage: null, textLanguageConfidence: null,
      },
    ]);
    // with its text: only the page of the text column holding the row is decoded
    expect((await view.captures(url, { text: true }))[0]!.text).toBe(want!['text'] ?? null);
    const t = touched(meta, store.ranges, bytes.length);
    // the url column of mid.example's row groups; everything else only of the matching one (3); never text as text
    expect(t.filter((c) => c.endsWith(':url'))).toEqual(['2:url', '3:url']);
    expect(t.filter((c) => !c.endsWith(':url') && c !== first).every((c) => c.startsWith('3:'))).toBe(true);
    expect(t).toContain(first);
    expect(t).toContain('3:text');
    // a row with text: length in code points, as DuckDB counts them
    const [withText] = await oracle(name, 5000 + 3 + 1, 5000 + 3 + 2);
    expect(withText!['text_length']).not.toBeNull();
    expect((await view.captures(withText!['url'] as string))[0]!.textLength).toBe(Number(withText!['text_length']));
    expect((await view.captures(withText!['url'] as string, { text: true }))[0]!.text).toBe(withText!['text']);
    expect(await view.captures('https://www.mid.example/absent')).toEqual([]);
  });

  it('keeps decoded chunks within the cache bound and still answers correctly', async () => {
    const bound = 100_000; // a few packed column chunks of one 2048-row group (the run needs ≈ 270 KB)
    const { reader, view } = await open(bound);
    const all: string[] = [];
    for (let off = 0; off < 5000; off += 500) all.push(...(await view.urls('big.example', 1, off, 500)).items.map((i) => i.url));
    const s = reader.stats();
    expect(s.bytes).toBeLessThanOrEqual(bound);
    expect(s.evictions).toBeGreaterThan(0);
    expect(all).toEqual((await oracle(name, 0, 5000)).map((r) => r['url']));
    const unbounded = await open();
    for (let off = 0; off < 5000; off += 500) await unbounded.view.urls('big.example', 1, off, 500);
    expect(unbounded.reader.stats().bytes).toBeGreaterThan(2 * bound); // so the bound was what kept it small
  });
});

describe('ParquetLakeReader without a url_id column', () => {
  it('computes collisions[url] ?? urlId(url) from the version', async () => {
    // (files with the column are answered the same way; this checks a lake that dropped it reads at all)
    const bytes = await lakeFile('no-url-id.parquet', { urlId: false, version: 'V2' });
    const meta = parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer);
    expect(meta.schema.map((e) => e.name)).not.toContain('url_id');
    const store: ObjectStore = new MemoryObjectStore();
    await store.put(KEY, bytes);
    const rows = await oracle('no-url-id.parquet', 5000, 5003);
    const collided = rows[1]!['url'] as string;
    const view = new LakeIndexView(version(bytes, meta, { [collided]: '-42' }), new ParquetLakeReader({ store }), new Map());
    const page = await view.urls('small.example', 1, 0, 10);
    expect(page.items).toEqual(rows.map((r) => expectedItem(r, r['url'] === collided ? -42n : urlId(r['url'] as string))));
    expect((await view.captures(collided))[0]!.urlId).toBe(urlIdHex(-42n));
  });
});
