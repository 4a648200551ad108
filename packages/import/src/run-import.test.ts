import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { compress as zstdCompress, init as zstdInit } from '@bokuweb/zstd-wasm';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { emptyDatasetRegistry, ensureDatasetIn, layout, parseDatasetRegistry, serializeDatasetRegistry, type ObjectStore } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine, writeParquetPart, type PartRow } from '@ccpipe/adapters';
import { tempDirEach } from '../../../tests/support/temp-dir';
import { runImport, type ImportOptions } from './run-import';

let tmp = '';
tempDirEach('ccpipe-import-', (d) => (tmp = d));
const dir = (): string => tmp;
afterAll(closeDuckDbParquetEngine);

const COLUMNS = { url: 'url', ts: 'ts', status: 'status', title: 'title', text: 'text' };
const opts = (files: string[], more: Partial<ImportOptions> = {}): ImportOptions => ({ files, dataset: 'partner', columns: COLUMNS, explicit: new Set(), ...more });
let stores = 0;
const storeOf = (): FsObjectStore => new FsObjectStore({ root: join(dir(), `data-${++stores}`) });
const deps = (store: ObjectStore, writePart = (rows: readonly PartRow[]) => writeParquetPart(rows)) => ({ store, writePart });

async function file(name: string, content: string | Uint8Array): Promise<string> {
  const p = join(dir(), name);
  await writeFile(p, content);
  return p;
}

async function keys(store: ObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list(prefix)) out.push(o.key);
  return out.sort();
}

/** Every part row of the dataset, read back by hyparquet (an independent reader), in part then row order. */
async function partRows(store: ObjectStore): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const k of (await keys(store, 'batches/')).filter((k) => k.endsWith('part.parquet'))) {
    const b = (await store.get(k))!;
    rows.push(...(await parquetReadObjects({ file: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer, compressors })));
  }
  return rows;
}

async function rejects(store: ObjectStore): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const k of (await keys(store, 'batches/')).filter((k) => k.endsWith('import-rejects.jsonl'))) {
    out.push(...Buffer.from((await store.get(k))!).toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>));
  }
  return out;
}

describe('runImport', () => {
  it('imports a CSV into parts keyed as a worker keys captures, rejecting bad rows by physical line', async () => {
    const csv = await file('list.csv', [
      'url,ts,status,title,clicks,note',
      'https://Example.com:443/a?b=2&a=1#frag,2024-05-01T12:00:00+02:00,200,Page A,12,"two',
      'lines"',
      'example.org/b,,,"Title, with comma",5,',
      'not a url at all,2024-05-01,200,x,1,1',
      'https://example.net/c,yesterday,200,c,1,1',
      'https://example.net/d,1714557600,999,d,1,1',
      'https://example.net/e,1714557600000,404,e,1,1',
      '',
    ].join('\r\n'));
    const store = storeOf();
    const s = await runImport(opts([csv], { maxRejects: 10 }), deps(store));
    expect(s).toMatchObject({ outcome: 'imported', rows: 3, rejects: 3, rejectsByReason: { 'bad-url': 1, 'bad-ts': 1, 'bad-status': 1 }, batches: 1, resumed: 0 });
    expect(s.files).toEqual([{ file: 'list.csv', rows: 3, rejects: 3 }]);
    // lines are physical: the quoted field spans lines 2-3, so the bad rows are lines 5, 6 and 7
    expect((await rejects(store)).map((r) => [r['file'], r['line'], r['reason']])).toEqual([
      ['list.csv', 5, 'bad-url'], ['list.csv', 6, 'bad-ts'], ['list.csv', 7, 'bad-status'],
    ]);
    expect((await rejects(store))[0]!['raw']).toBe('not a url at all,2024-05-01,200,x,1,1');
    const rows = await partRows(store);
    const byUrl = new Map(rows.map((r) => [r['url'], r]));
    expect([...byUrl.keys()].sort()).toEqual(['http://example.org/b', 'https://example.com/a?a=1&b=2', 'https://example.net/e']);
    expect(byUrl.get('https://example.com/a?a=1&b=2')).toMatchObject({
      dataset_id: 1, domain: 'example.com', raw_url: 'https://Example.com:443/a?b=2&a=1#frag', ts: new Date('2024-05-01T10:00:00Z'), status: 200, title: 'Page A',
      extras: '{"clicks":"12","note":"two\\r\\nlines"}', warc_filename: '', warc_offset: 0n, content_length: null, surt: 'com,example)/a?a=1&b=2',
    });
    // a URL without a scheme is read as http://; a missing time, status or extra stays null / as given
    expect(byUrl.get('http://example.org/b')).toMatchObject({ ts: null, status: null, title: 'Title, with comma', extras: '{"clicks":"5","note":""}', warc_offset: 1n });
    expect(byUrl.get('https://example.net/e')).toMatchObject({ ts: new Date('2024-05-01T10:00:00Z'), status: 404 });
    // the marker comes last with the counts, its inbox entry after it; the registry says what the dataset is
    const marker = JSON.parse(Buffer.from((await store.get((await keys(store, 'batches/')).find((k) => k.endsWith('_SUCCESS.json'))!))!).toString('utf8'));
    expect(marker).toMatchObject({ datasetId: 1, dataset: 'partner', records: 6, rows: 3, failed: 3, failures: { 'bad-url': 1, 'bad-ts': 1, 'bad-status': 1 } });
    expect(marker.store).toEqual(parseDatasetRegistry((await store.get('datasets.json'))!).storeId);
    expect(await keys(store, 'inbox/')).toHaveLength(1);
    expect(parseDatasetRegistry((await store.get('datasets.json'))!).datasets).toEqual([expect.objectContaining({ id: 1, name: 'partner', kind: 'import', sources: ['list.csv'] })]);
  });

  it('stops above --max-rejects (default 1% of the rows) with nothing imported, and a rerun allowing them completes', async () => {
    const lines = ['url'];
    for (let i = 0; i < 300; i++) lines.push(i % 100 === 7 ? 'http://[bad' : `https://example.com/${i}`);
    const csv = await file('many.csv', lines.join('\n'));
    const store = storeOf();
    const s = await runImport(opts([csv], { batchRows: 100 }), deps(store));
    expect(s).toMatchObject({ outcome: 'imported', rows: 297, rejects: 3, maxRejects: 3, batches: 3 }); // 3 of 300: within 1%
    const strict = storeOf();
    const csv2 = await file('many2.csv', [...lines, 'http://[bad'].join('\n'));
    const stopped = await runImport(opts([csv2], { batchRows: 100 }), deps(strict));
    expect(stopped).toMatchObject({ outcome: 'too-many-rejects', rejects: 4, maxRejects: 3 });
    expect(await keys(strict, 'inbox/')).toEqual([]);
    expect((await keys(strict, 'batches/')).filter((k) => k.endsWith('_SUCCESS.json'))).toEqual([]);
    // an explicit cap stops at the first reject past it
    const capped = await runImport(opts([csv2], { batchRows: 100, maxRejects: 0 }), deps(storeOf()));
    expect(capped).toMatchObject({ outcome: 'too-many-rejects', rejects: 1 });
    const again = await runImport(opts([csv2], { batchRows: 100, maxRejects: 10 }), deps(strict));
    expect(again).toMatchObject({ outcome: 'imported', rows: 297, rejects: 4 });
    expect(await keys(strict, 'inbox/')).toHaveLength(4);
  });

  it('resumes a killed import: the rerun keeps the batch ids, reuses written parts and marks each batch once', async () => {
    const csv = await file('big.csv', ['url,ts', ...Array.from({ length: 1000 }, (_, i) => `https://site${i % 37}.example/p${i},2024-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`)].join('\n'));
    const store = storeOf();
    let parts = 0;
    const dying = (rows: readonly PartRow[]) => {
      if (++parts === 4) throw new Error('killed');
      return writeParquetPart(rows);
    };
    await expect(runImport(opts([csv], { batchRows: 200 }), deps(store, dying))).rejects.toThrow('killed');
    expect(await keys(store, 'inbox/')).toEqual([]); // no marker before every batch is written
    let written = 0;
    const counting = (rows: readonly PartRow[]) => {
      written++;
      return writeParquetPart(rows);
    };
    const s = await runImport(opts([csv], { batchRows: 200 }), deps(store, counting));
    expect(s).toMatchObject({ outcome: 'imported', rows: 1000, batches: 5, resumed: 0 });
    expect(written).toBe(2); // the three parts written before the kill are kept
    const rows = await partRows(store);
    expect(rows).toHaveLength(1000);
    expect(new Set(rows.map((r) => r['url'])).size).toBe(1000);
    expect(await keys(store, 'inbox/')).toHaveLength(5);
    // once complete, the same import again writes nothing new
    const third = await runImport(opts([csv], { batchRows: 200 }), deps(store, counting));
    expect(third).toMatchObject({ outcome: 'imported', rows: 1000, resumed: 5 });
    expect(written).toBe(2);
    expect(await keys(store, 'inbox/')).toHaveLength(5);
    // the same rows imported later (another run: the file changed) are a new run whose batch ids sort after
    await writeFile(csv, (await readFile(csv, 'utf8')) + '\n');
    const later = await runImport(opts([csv], { batchRows: 200 }), { ...deps(store, counting), now: () => new Date(Date.now() + 2000) });
    expect(later.run > s.run).toBe(true);
  });

  it('reads TSV, JSONL, gzip and zstd; JSONL keys match regardless of case and other keys are kept as JSON', async () => {
    await zstdInit();
    const tsv = await file('a.tsv.gz', gzipSync('URL\tTitle\nhttps://a.example/1\tOne\n'));
    const jsonl = [
      '{"Url":"https://b.example/2","TS":"20240102030405","meta":{"tags":["x","y"],"n":1}}',
      'not json',
      '[1,2]',
      '{"url":"https://b.example/3","status":301}',
    ].join('\n');
    const zst = await file('b.jsonl.zst', zstdCompress(Buffer.from(jsonl), 3));
    const store = storeOf();
    const s = await runImport(opts([tsv, zst], { maxRejects: 5 }), deps(store));
    expect(s).toMatchObject({ rows: 3, rejects: 2, rejectsByReason: { 'bad-record': 2 }, files: [{ file: 'a.tsv.gz', rows: 1, rejects: 0 }, { file: 'b.jsonl.zst', rows: 2, rejects: 2 }] });
    expect((await rejects(store)).map((r) => [r['file'], r['line'], r['reason'], r['raw']])).toEqual([
      ['b.jsonl.zst', 2, 'bad-record', 'not json'], ['b.jsonl.zst', 3, 'bad-record', '[1,2]'],
    ]);
    const byUrl = new Map((await partRows(store)).map((r) => [r['url'], r]));
    expect(byUrl.get('https://a.example/1')).toMatchObject({ title: 'One', extras: null });
    expect(byUrl.get('https://b.example/2')).toMatchObject({ ts: new Date('2024-01-02T03:04:05Z'), extras: '{"meta":{"tags":["x","y"],"n":1}}' });
    expect(byUrl.get('https://b.example/3')).toMatchObject({ status: 301, ts: null });
  });

  it('rejects the rows of a file with bytes that are not UTF-8, and keeps U+FFFD in a file that is UTF-8', async () => {
    const csv = await file('mixed.csv', Buffer.concat([
      Buffer.from('url,title\nhttps://a.example/1,caf\u00e9\nhttps://a.example/2,'), Buffer.from([0x63, 0x61, 0x66, 0xe9]), Buffer.from('\nhttps://a.example/3,ok\n'),
    ]));
    const store = storeOf();
    const s = await runImport(opts([csv], { maxRejects: 5 }), deps(store));
    expect(s).toMatchObject({ rows: 2, rejects: 1, rejectsByReason: { 'not-utf8': 1 } });
    expect((await rejects(store)).map((r) => r['line'])).toEqual([3]);
    const utf8 = storeOf();
    expect(await runImport(opts([await file('fffd.csv', 'url,title\nhttps://a.example/1,ok \ufffd\n')]), deps(utf8))).toMatchObject({ rows: 1, rejects: 0 });
    expect((await partRows(utf8))[0]).toMatchObject({ title: 'ok \ufffd' });
  });

  it('refuses a file it cannot import at all, naming it, before anything is written', async () => {
    const good = await file('good.csv', 'url\nhttps://a.example/\n');
    const cases: [string, string | Uint8Array, RegExp][] = [
      ['empty.csv', '', /empty\.csv: is empty/],
      ['blob.csv', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00, 0x08]), /blob\.csv: looks binary \(a NUL byte at byte 4\)/],
      ['cols.csv', 'link,when\nhttps://a.example/,2024\n', /cols\.csv: line 1: no url column "url" in the header; its columns are "link", "when"/],
    ];
    for (const [name, content, want] of cases) {
      const store = storeOf();
      await expect(runImport(opts([good, await file(name, content)]), deps(store))).rejects.toThrow(want);
      expect(await keys(store, '')).toEqual([]);
    }
    await expect(runImport(opts([join(dir(), 'missing.csv')]), deps(storeOf()))).rejects.toThrow(/missing\.csv: does not exist/);
    await expect(runImport(opts([await file('x.txt', 'url\n')]), deps(storeOf()))).rejects.toThrow(/x\.txt: has no known extension/);
    // a column named by flag must exist; a defaulted one may be absent
    await expect(runImport(opts([good], { columns: { url: 'url', ts: 'when' }, explicit: new Set(['ts']) }), deps(storeOf()))).rejects.toThrow(/no ts column "when"/);
  });

  it('reads Parquet (written by DuckDB): TIMESTAMP times, integer statuses, nested extras, rejects by 0-based row; refuses wrong column types', async () => {
    const pq = join(dir(), 'list.parquet');
    const bad = join(dir(), 'bad.parquet');
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    await conn.run(`COPY (SELECT * FROM (VALUES
        ('https://p.example/1', TIMESTAMP '2024-05-01 12:00:00', 200, 'One', 12::BIGINT, ['x', 'y']),
        ('mailto:someone@p.example', NULL, 200, 'Two', 1::BIGINT, []),
        ('https://p.example/3', NULL, NULL, NULL, NULL, NULL)
      ) t(url, ts, status, title, clicks, tags)) TO '${pq}' (FORMAT parquet, COMPRESSION zstd)`);
    await conn.run(`COPY (SELECT 42 AS url, 'x' AS title) TO '${bad}' (FORMAT parquet)`);
    conn.closeSync();
    db.closeSync();
    const store = storeOf();
    const s = await runImport(opts([pq], { maxRejects: 5 }), deps(store));
    expect(s).toMatchObject({ rows: 2, rejects: 1, rejectsByReason: { 'bad-url': 1 } });
    expect((await rejects(store)).map((r) => [r['file'], r['row'], r['line'], r['reason']])).toEqual([['list.parquet', 1, undefined, 'bad-url']]);
    const byUrl = new Map((await partRows(store)).map((r) => [r['url'], r]));
    expect(byUrl.get('https://p.example/1')).toMatchObject({ ts: new Date('2024-05-01T12:00:00Z'), status: 200, title: 'One', extras: '{"clicks":12,"tags":["x","y"]}' });
    expect(byUrl.get('https://p.example/3')).toMatchObject({ ts: null, status: null, title: null, extras: '{"clicks":null,"tags":null}' });
    await expect(runImport(opts([bad]), deps(storeOf()))).rejects.toThrow(/bad\.parquet: column "url" \(the url\) is INT32, which cannot hold a url/);
    await expect(runImport(opts([await file('fake.parquet', 'url\nhttps://a.example/\n')]), deps(storeOf()))).rejects.toThrow(/fake\.parquet: is not a Parquet file/);
  });

  it('refuses to import into a crawl dataset', async () => {
    const store = storeOf();
    await store.put(layout.datasetRegistry(), serializeDatasetRegistry(ensureDatasetIn(emptyDatasetRegistry(), 'partner', 'CC-MAIN-2030-40', 'now').registry));
    await expect(runImport(opts([await file('l.csv', 'url\nhttps://a.example/\n')]), deps(store))).rejects.toThrow(/partner is a crawl/);
  });
});
