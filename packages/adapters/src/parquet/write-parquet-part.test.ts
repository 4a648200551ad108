import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { xxh3 } from '@node-rs/xxhash';
import { parse as parseTld } from 'tldts';
import { parquetMetadata, parquetReadObjects, type ColumnData, type FileMetaData, type SchemaElement } from 'hyparquet';
// hyparquet-compressors' ZSTD entry is fzstd; its index also loads hysnappy, which jest's config does not transform,
// so take the same decompressor directly.
import { decompress as decompressZstd } from 'fzstd';
import { queueActionFor } from '@ccpipe/core';
import { closeDuckDbParquetEngine, PART_COLUMNS, QUALITY_COLUMNS, writeParquetPart, type ParquetEngine, type PartRow } from './index';

const CORPUS = join(__dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const ENGINES: ParquetEngine[] = ['duckdb', 'parquet-wasm'];

/** Real CDX lines (CC-MAIN-2024-30 excerpt + the cc-mirror-dev shards) joined with real article texts. */
function realRows(): PartRow[] {
  const lines = readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'), 'utf8').split('\n');
  for (const crawl of ['CC-MAIN-2030-40', 'CC-MAIN-2030-44']) {
    for (const s of ['00000', '00001', '00002']) {
      const gz = readFileSync(join(CORPUS, `cc-mirror-dev/cc-index/collections/${crawl}/indexes/cdx-${s}.gz`));
      lines.push(...gunzipSync(gz).toString('utf8').split('\n'));
    }
  }
  const truth = JSON.parse(readFileSync(join(CORPUS, 'scrapinghub-article-extraction-benchmark/ground-truth.json'), 'utf8')) as Record<string, { articleBody: string; url: string }>;
  const articles = Object.values(truth);
  return lines.filter((l) => l.length > 0).map((line, i) => {
    const [surt, ts, json] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1, line.indexOf(' ') + 15), line.slice(line.indexOf('{'))];
    const j = JSON.parse(json) as Record<string, string>;
    const url = j.url!;
    const p = parseTld(url, { allowPrivateDomains: true });
    const icann = parseTld(url);
    const art = articles[i % articles.length]!;
    const links = i % 4 === 0 ? [] : lines.slice(i, i + (i % 40)).map((l) => l.slice(l.indexOf('"url": "') + 8, l.indexOf('", ')));
    return {
      datasetId: i % 3 === 0 ? 7 : 4_000_000_000,
      urlId: BigInt.asIntN(64, xxh3.xxh64(url)),
      url, rawUrl: url, host: p.hostname ?? '', domain: icann.domain ?? '',
      privateDomain: p.domain !== icann.domain ? p.domain : null,
      surt, timestamp: ts, status: Number(j.status), mime: j.mime ?? '', charset: j.charset ?? null,
      languages: j.languages ?? null,
      title: i % 5 === 0 ? null : art.articleBody.split('\n')[0]!.slice(0, 120),
      text: i % 7 === 0 ? null : art.articleBody,
      contentLength: Buffer.byteLength(art.articleBody) * 4,
      outlinks: links,
      outlinkDomains: links.map((l) => parseTld(l).domain ?? ''),
      warcFilename: j.filename!, warcOffset: Number(j.offset), warcLength: Number(j.length), digest: j.digest ?? '',
    };
  });
}

/** Rows at the edges of every type. */
const EDGE_ROWS: PartRow[] = [
  {
    datasetId: 0, urlId: -(2n ** 63n), url: 'https://例え.jp/パス?q=ü', rawUrl: 'https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9?q=%C3%BC', host: 'xn--r8jz45g.jp',
    domain: 'xn--r8jz45g.jp', privateDomain: null, surt: 'jp,xn--r8jz45g)/', timestamp: '19960101000000', status: 0, mime: 'text/html',
    charset: null, languages: null, title: null, text: null, contentLength: 0, outlinks: [], outlinkDomains: [], warcFilename: 'a.warc.gz', warcOffset: 0,
    warcLength: 0, digest: '',
  },
  {
    datasetId: 0xffff_ffff, urlId: 2n ** 63n - 1n, url: 'https://user.github.io/', rawUrl: 'http://user.github.io', host: 'user.github.io',
    domain: 'github.io', privateDomain: 'user.github.io', surt: 'io,github,user)/', timestamp: '20991231235959', status: 32767, mime: 'application/xhtml+xml',
    charset: 'windows-1252', languages: 'zho,eng', title: '标题 🦆 “quoted”', text: 'Ünïcödé 😀 text\n\twith\u0000nul and 𝔘𝔫𝔦', contentLength: 2 ** 31 - 1,
    outlinks: ['https://a.example/🦆', '', 'https://b.example/x y'], outlinkDomains: ['a.example', '', 'b.example'], warcFilename: 'b.warc.gz', warcOffset: 2 ** 40 + 5, warcLength: 2 ** 31 - 1, digest: 'X'.repeat(32),
    // the quality step's columns; the fractions are exact in FLOAT (binary fractions), so they round-trip unchanged
    textLanguage: 'zho', textLanguageConfidence: 0.75, droppedBy: 'min-words',
    quality: { wordCount: 12, meanWordLength: 4.5, symbolWordRatio: 0, linePunctFraction: 0.5, dupLineFraction: 0.25, dupLineCharFraction: 0.125, top2gramCharFraction: 0.0625, dup5gramCharFraction: 1 },
  },
  {
    // an imported row (ccpipe import): no time, status or body size, no WARC record, its other columns as extras
    datasetId: 3, urlId: 42n, url: 'https://example.org/list', rawUrl: 'example.org/list', host: 'example.org', domain: 'example.org', privateDomain: null,
    surt: 'org,example)/list', timestamp: null, status: null, mime: '', charset: null, languages: null, title: 'From a CSV', text: null, contentLength: null,
    outlinks: [], outlinkDomains: [], warcFilename: '', warcOffset: 7, warcLength: 0, digest: '', extras: '{"clicks":"12","note":"ünï"}',
  },
];

function expected(r: PartRow, includeText: boolean): Record<string, unknown> {
  return {
    dataset_id: r.datasetId, url_id: r.urlId, url: r.url, raw_url: r.rawUrl, host: r.host, domain: r.domain, private_domain: r.privateDomain,
    surt: r.surt,
    ts: r.timestamp === null ? null : new Date(Date.UTC(+r.timestamp.slice(0, 4), +r.timestamp.slice(4, 6) - 1, +r.timestamp.slice(6, 8), +r.timestamp.slice(8, 10), +r.timestamp.slice(10, 12), +r.timestamp.slice(12, 14))),
    status: r.status, mime: r.mime, charset: r.charset, languages: r.languages, title: r.title, text: includeText ? r.text : null,
    content_length: r.contentLength, outlink_count: r.outlinks.length, outlinks: [...r.outlinks], outlink_domains: [...r.outlinkDomains], warc_filename: r.warcFilename,
    warc_offset: BigInt(r.warcOffset), warc_length: r.warcLength, digest: r.digest, extras: r.extras ?? null,
    text_language: r.textLanguage ?? null, text_language_confidence: r.textLanguageConfidence ?? null,
    ...Object.fromEntries(QUALITY_COLUMNS.map(([name, field]) => [name, r.quality?.[field] ?? null])),
    dropped_by: r.droppedBy ?? null,
  };
}

const compressors = { ZSTD: (input: Uint8Array) => decompressZstd(input) };
const ab = (b: Uint8Array): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
const read = (b: Uint8Array, extra: { rowStart?: number; rowEnd?: number; onChunk?: (c: ColumnData) => void } = {}) =>
  parquetReadObjects({ file: ab(b), compressors, ...extra });

/** The documented type of a leaf/group schema element, in PART_COLUMNS' vocabulary. */
function docType(schema: SchemaElement[], name: string): string {
  const i = schema.findIndex((e) => e.name === name);
  const e = schema[i]!;
  if (e.converted_type === 'LIST') {
    const leaf = schema[i + 2]!;
    return `LIST<${leaf.type === 'BYTE_ARRAY' && leaf.converted_type === 'UTF8' ? 'STRING' : leaf.type}>`;
  }
  if (e.type === 'BYTE_ARRAY' && e.converted_type === 'UTF8') return 'STRING';
  const lt = e.logical_type;
  if (lt?.type === 'TIMESTAMP') return `TIMESTAMP(${lt.unit},${lt.isAdjustedToUTC ? 'UTC' : 'LOCAL'})`;
  if (e.type === 'FLOAT') return 'FLOAT';
  if (e.type === 'INT32' && e.converted_type === 'UINT_32') return 'UINT32';
  if (e.type === 'INT32' && e.converted_type === 'INT_16') return 'INT16';
  if (e.type === 'INT32' && (e.converted_type === undefined || e.converted_type === 'INT_32')) return 'INT32';
  if (e.type === 'INT64' && (e.converted_type === undefined || e.converted_type === 'INT_64')) return 'INT64';
  return `${e.type}/${e.converted_type}`;
}

/** Names of the root's children, skipping nested elements (the list's group and leaf). */
function topLevelNames(schema: SchemaElement[]): string[] {
  const names: string[] = [];
  let i = 1;
  const skip = (): void => {
    const e = schema[i++]!;
    for (let k = 0; k < (e.num_children ?? 0); k++) skip();
  };
  while (i < schema.length) {
    names.push(schema[i]!.name);
    skip();
  }
  return names;
}

const rows = [...EDGE_ROWS, ...realRows()];

afterAll(() => closeDuckDbParquetEngine());

describe.each(ENGINES)('writeParquetPart with %s, read back by hyparquet', (engine) => {
  let bytes: Uint8Array;
  let meta: FileMetaData;
  beforeAll(async () => {
    bytes = await writeParquetPart(rows, { engine, rowGroupSize: 2048 });
    meta = parquetMetadata(ab(bytes));
  });

  it('round-trips every column of every row (nulls, unicode, int64 extremes, empty lists)', async () => {
    expect(rows.length).toBeGreaterThan(2000);
    const got = await read(bytes);
    expect(got.length).toBe(rows.length);
    for (let i = 0; i < rows.length; i++) expect([i, got[i]]).toEqual([i, expected(rows[i]!, true)]);
  });

  it('has the documented schema: column order, types and nullability', () => {
    expect(topLevelNames(meta.schema)).toEqual(PART_COLUMNS.map((c) => c.name));
    for (const c of PART_COLUMNS) {
      expect([c.name, docType(meta.schema, c.name)]).toEqual([c.name, c.type]);
      const rep = meta.schema.find((e) => e.name === c.name)!.repetition_type;
      if (c.nullable) expect([c.name, rep]).toEqual([c.name, 'OPTIONAL']);
      if (engine === 'parquet-wasm' && !c.nullable) expect([c.name, rep]).toEqual([c.name, 'REQUIRED']);
    }
  });

  it('compresses every column chunk with ZSTD and dictionary-encodes the low-cardinality dictionary columns', async () => {
    const got = await read(bytes);
    let start = 0;
    let dictChunks = 0;
    for (const rg of meta.row_groups) {
      const n = Number(rg.num_rows);
      for (const cc of rg.columns) {
        const md = cc.meta_data!;
        const name = md.path_in_schema[0]!;
        expect([name, md.codec]).toEqual([name, 'ZSTD']);
        if (!PART_COLUMNS.find((c) => c.name === name)!.dictionary) continue;
        // DuckDB chooses dictionary per chunk by itself; both must use it where values repeat (a worker batch's
        // hosts, mimes, statuses). warc_filename is high-cardinality in CC order (one WARC file per line).
        const values = got.slice(start, start + n).map((r) => r[name]);
        const distinct = new Set(values.map(String)).size;
        // a chunk of nulls only (no row of this part has a text language or a drop) has no value to encode
        if (distinct > n / 4 || values.every((v) => v === null)) continue;
        const dict = md.encodings.some((e) => e === 'RLE_DICTIONARY' || e === 'PLAIN_DICTIONARY') && md.dictionary_page_offset !== undefined;
        expect([name, dict]).toEqual([name, true]);
        dictChunks++;
      }
      start += n;
    }
    expect(dictChunks).toBeGreaterThanOrEqual(meta.row_groups.length * 6);
  });

  it('cuts row groups of rowGroupSize rows, and one row group reads back alone', async () => {
    const sizes = meta.row_groups.map((g) => Number(g.num_rows));
    expect(sizes.length).toBe(Math.ceil(rows.length / 2048));
    expect(sizes.slice(0, -1).every((s) => s === 2048)).toBe(true);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(rows.length);
    const chunks: ColumnData[] = [];
    const got = await read(bytes, { rowStart: 2048, rowEnd: 2048 + sizes[1]!, onChunk: (c) => chunks.push(c) });
    expect(got.map((r) => r.url_id)).toEqual(rows.slice(2048, 2048 + sizes[1]!).map((r) => r.urlId));
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.rowStart >= 2048 && c.rowEnd <= 2048 + sizes[1]!)).toBe(true);
  });

  it('honours a rowGroupSize that is not a multiple of 2048 (DuckDB rounds it up to whole vectors)', async () => {
    const part = await writeParquetPart(rows.slice(0, 2500), { engine, rowGroupSize: 1000 });
    const sizes = parquetMetadata(ab(part)).row_groups.map((g) => Number(g.num_rows));
    expect(sizes).toEqual(engine === 'duckdb' ? [2048, 452] : [1000, 1000, 500]);
  });

  it('includeText: false keeps the column, all null, and makes the part smaller', async () => {
    const noText = await writeParquetPart(rows, { engine, includeText: false });
    const got = await read(noText);
    expect(got.every((r) => r.text === null)).toBe(true);
    expect(got[1]).toEqual(expected(rows[1]!, false));
    expect(noText.length).toBeLessThan(bytes.length * 0.8);
  });

  it('includeOutlinks: false writes empty lists but keeps the real outlink_count', async () => {
    const noLinks = await writeParquetPart(rows, { engine, includeOutlinks: false });
    const got = await read(noLinks);
    expect(got.map((r) => r.outlinks)).toEqual(rows.map(() => []));
    expect(got.map((r) => r.outlink_domains)).toEqual(rows.map(() => []));
    expect(got.map((r) => r.outlink_count)).toEqual(rows.map((r) => r.outlinks.length));
    expect(got.some((r) => (r.outlink_count as number) > 0)).toBe(true);
    expect(noLinks.length).toBeLessThan(bytes.length);
  });

  it('writes an empty part that reads back as zero rows', async () => {
    const empty = await writeParquetPart([], { engine });
    expect(await read(empty)).toEqual([]);
  });
});

describe('writeParquetPart rejects what the schema cannot hold', () => {
  const base = EDGE_ROWS[1]!;
  it.each([
    ['datasetId', { datasetId: 2 ** 32 }],
    ['status', { status: 40000 }],
    ['urlId', { urlId: 2n ** 63n }],
    ['warcOffset', { warcOffset: -1 }],
    ['timestamp', { timestamp: '2024-07-16' }],
    ['timestamp', { timestamp: '20240230120000' }],
  ])('%s out of range → CCP_ERR_PARQUET_ROW', async (_f, patch) => {
    await expect(writeParquetPart([base, { ...base, ...patch } as PartRow], { engine: 'parquet-wasm' })).rejects.toMatchObject({
      code: 'CCP_ERR_PARQUET_ROW',
    });
  });
  it('bad options → CCP_ERR_PARQUET_OPTION', async () => {
    await expect(writeParquetPart([base], { rowGroupSize: 0 })).rejects.toMatchObject({ code: 'CCP_ERR_PARQUET_OPTION' });
    await expect(writeParquetPart([base], { engine: 'arrow' as ParquetEngine })).rejects.toMatchObject({ code: 'CCP_ERR_PARQUET_OPTION' });
  });});

describe('writeParquetPart on a machine that cannot write', () => {
  it('a temp dir the duckdb engine cannot write is CCP_ERR_PARQUET_LOCAL, which stops the worker instead of dead-lettering the batch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccpipe-part-tmp-'));
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    try {
      // a path under a regular file: DuckDB's "IO Error", as on a full disk
      const err = await writeParquetPart(EDGE_ROWS, { engine: 'duckdb', tmpDir: join(file, 'tmp') }).then(() => null, (e: unknown) => e);
      expect(err).toMatchObject({ code: 'CCP_ERR_PARQUET_LOCAL', retryable: true });
      expect(queueActionFor({ ok: false, error: err })).toEqual({ action: 'crash', reason: 'CCP_ERR_PARQUET_LOCAL' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // and the same rows still write where the disk is fine
    expect((await writeParquetPart(EDGE_ROWS, { engine: 'duckdb' })).length).toBeGreaterThan(0);
  });
});
