/**
 * `ccpipe import` end to end, as separate processes (#22): a partner's CSV and JSONL beside a crawl indexed by the real
 * worker code from cc-mirror-dev, merged by `ccpipe merge`, answered by `ccpipe api` over HTTP — the import's URLs,
 * counts and extras, the mixed index, rejects by line, the fold of rows without a time, and an import SIGKILLed
 * mid-run then rerun (no row lost or doubled).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalizeUrl, layout } from '@ccpipe/core';
import { closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { processBatch } from '@ccpipe/worker';
import { DEV_CRAWLS } from './support/corpus';
import { devBatches, devStore } from './support/dev-batches';
import { killAll, logLine, markersIn, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';
import { tempDirEach } from './support/temp-dir';

let dir = '';
tempDirEach('ccpipe-import-int-', (d) => (dir = d));
const procs: CcpipeProcess[] = [];
afterEach(async () => killAll(procs.splice(0)));
afterAll(closeDuckDbParquetEngine);

const start = (args: string[]): CcpipeProcess => {
  const p = spawnCcpipe(args);
  procs.push(p);
  return p;
};

async function run(args: string[]): Promise<{ code: number | null; stdout: string; text: string }> {
  const p = start(args);
  const { code } = await p.exited;
  return { code, stdout: p.stdout, text: p.text.join('') };
}

async function serve(data: string): Promise<(path: string) => Promise<any>> {
  const api = start(['api', '--data', data, '--api-port', '0', '--api-host', '127.0.0.1']);
  const listening = (await waitFor('api listening', () => logLine(api, 'api listening'), 60_000))!;
  const base = `http://127.0.0.1:${String(listening['port'])}`;
  return async (path) => {
    const res = await fetch(`${base}${path}`);
    return { status: res.status, ...((await res.json()) as object) };
  };
}

it('imports a CSV and a JSONL beside a crawl: URLs, counts, extras, rejects by line, and rows without a time folded by input order', async () => {
  const data = join(dir, 'data');
  const crawl = DEV_CRAWLS[0];
  const { ids, deps } = await devStore(data);
  const batches = await devBatches(crawl, { datasetId: ids[crawl]!, maxBlocks: 2 });
  for (const b of batches) await processBatch(b, deps, { concurrency: 4, includeText: true });
  // a URL the crawl holds, to find both datasets in its history
  const shared = canonicalizeUrl(batches[0]!.records.find((r) => r.status === '200')!.url);

  const csv = join(dir, 'partner.csv');
  await writeFile(csv, [
    'url,ts,status,title,clicks',
    `${shared.url},2035-01-01T00:00:00Z,200,From the partner,41`,
    'https://partner.example/a,,,"A, first",1',
    'https://partner.example/a,,,"A, second",2', // the same URL without a time: the later row wins
    'https://partner.example/b,2024-02-03 04:05:06,301,B,"3"',
    'ftp://partner.example/c,2024-01-01,200,C,4',
    'https://partner.example/d,31/12/2024,200,D,5',
    '',
  ].join('\n'));
  const jsonl = join(dir, 'more.jsonl');
  await writeFile(jsonl, [
    '{"url":"https://partner.example/e","ts":1706745600,"title":"E","tags":["x","y"]}',
    '{"url": "https://partner.example/f", oops}',
    '{"url":"https://partner.example/a","title":"A, third"}',
  ].join('\n') + '\n');

  const imported = await run(['import', csv, jsonl, '--dataset', 'partner', '--data', data, '--max-rejects', '10']);
  expect([imported.code, imported.text]).toEqual([0, expect.any(String)]);
  const summary = JSON.parse(imported.stdout) as Record<string, any>;
  expect(summary).toMatchObject({
    dataset: 'partner', outcome: 'imported', rows: 6, rejects: 3, rejectsByReason: { 'bad-url': 1, 'bad-ts': 1, 'bad-record': 1 },
    files: [{ file: 'partner.csv', rows: 4, rejects: 2 }, { file: 'more.jsonl', rows: 2, rejects: 1 }],
  });
  const rejectLines = (await Promise.all((summary['rejectFiles'] as string[]).map((k) => readFile(join(data, k), 'utf8'))))
    .join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(rejectLines.map((r) => [r['file'], r['line'], r['reason']])).toEqual([['partner.csv', 6, 'bad-url'], ['partner.csv', 7, 'bad-ts'], ['more.jsonl', 2, 'bad-record']]);

  expect((await run(['merge', '--data', data])).code).toBe(0);
  const get = await serve(data);

  const datasets = (await get('/v1/datasets')).datasets as Record<string, any>[];
  const partner = datasets.find((d) => d['name'] === 'partner')!;
  expect(partner).toMatchObject({ kind: 'import', source: ['partner.csv', 'more.jsonl'], crawl: null, url_count: 4, domain_count: 2, rows: 6, rejects: 3 });
  expect(typeof partner['updated_at']).toBe('string');
  expect(datasets.find((d) => d['name'] === crawl)).toMatchObject({ kind: 'crawl', source: [crawl] });

  // the shared URL: one capture in each dataset, the import's with its extras and no WARC record
  const both = await get(`/v1/url?url=${encodeURIComponent(shared.url)}`);
  expect(both.captures.map((c: any) => c.dataset)).toEqual([crawl, 'partner']);
  expect(both.captures[1]).toMatchObject({ ts: '2035-01-01T00:00:00Z', status: 200, title: 'From the partner', warc: null, extras: { clicks: '41' } });
  expect(both.captures[0].warc).toMatchObject({ filename: expect.stringContaining('.warc.gz') });
  expect(both.captures[0].extras).toBeUndefined();

  // rows without a time: the last of the input order won (the JSONL came after the CSV), shown with a null time
  const a = await get('/v1/url?url=https%3A%2F%2Fpartner.example%2Fa');
  expect(a.captures).toEqual([expect.objectContaining({ dataset: 'partner', ts: null, status: null, title: 'A, third', warc: null })]);
  expect((await get('/v1/url?url=https%3A%2F%2Fpartner.example%2Fe')).captures[0]).toMatchObject({ ts: '2024-02-01T00:00:00Z', extras: { tags: ['x', 'y'] } });

  // the import's domain, with a URL listing and pages; a time filter leaves the row without a time out
  const dom = await get('/v1/domain/partner.example');
  expect(dom.datasets).toEqual([expect.objectContaining({ dataset_id: partner['dataset_id'], url_count: 3, first_ts: '2024-02-01T00:00:00Z' })]);
  const urls = await get(`/v1/domain/partner.example/datasets/${partner['dataset_id']}/urls`);
  expect(urls.items.map((u: any) => u.url).sort()).toEqual(['https://partner.example/a', 'https://partner.example/b', 'https://partner.example/e']);
  const timed = await get(`/v1/pages?dataset_id=${partner['dataset_id']}&from=2000-01-01T00:00:00Z`);
  expect(timed.items.map((p: any) => p.url).sort()).toEqual([shared.url, 'https://partner.example/b', 'https://partner.example/e'].sort());
  const all = await get(`/v1/pages?dataset_id=${partner['dataset_id']}`);
  expect(all.total).toBe(4);
  expect(all.items[0]).toMatchObject({ url: 'https://partner.example/a', ts: null }); // no time sorts first

  // the crawl's dataset still answers as before: its count is the crawl's rows
  expect(datasets.find((d) => d['name'] === crawl)!['url_count']).toBeGreaterThan(0);
  const verify = await run(['verify', '--data', data]);
  expect(verify.code).toBe(0);
  // ccpipe status counts the rejects by reason (from the version's totals), and says what each dataset is
  const status = await run(['status', '--data', data, '--queue-prefix', `ccpipe-import-${process.pid}`]);
  const st = JSON.parse(status.stdout) as Record<string, any>;
  expect(st['batches']['datasets'][String(partner['dataset_id'])]).toEqual({ batches: 1, rows: 6, failedRecords: 3, failedByReason: { 'bad-url': 1, 'bad-ts': 1, 'bad-record': 1 } });
  expect(st['datasets']).toContainEqual({ id: partner['dataset_id'], name: 'partner', crawl: null, kind: 'import', sources: ['partner.csv', 'more.jsonl'] });
}, 300_000);

it('an import SIGKILLed mid-run and rerun with the same arguments completes without losing or doubling a row', async () => {
  const data = join(dir, 'data');
  const csv = join(dir, 'big.csv');
  const n = 60_000;
  const lines = ['url,ts,title'];
  for (let i = 0; i < n; i++) lines.push(`https://host${i % 97}.example/page/${i},2024-03-01T00:00:${String(i % 60).padStart(2, '0')}Z,Page ${i}`);
  await writeFile(csv, lines.join('\n') + '\n');
  const args = ['import', csv, '--dataset', 'bulk', '--data', data, '--batch-rows', '5000'];
  const first = start(args);
  // killed once some parts are written, before the markers (written only when every batch is)
  await waitFor('a part written', async () => (await partsIn(data)).length >= 2, 120_000, 50);
  first.child.kill('SIGKILL');
  expect((await first.exited).signal).toBe('SIGKILL');
  expect(await markersIn(data)).toEqual([]);
  const again = await run(args);
  expect(again.code).toBe(0);
  expect(JSON.parse(again.stdout)).toMatchObject({ outcome: 'imported', rows: n, rejects: 0, batches: 12 });
  expect(await markersIn(data)).toHaveLength(12);
  expect((await run(['merge', '--data', data])).code).toBe(0);
  const get = await serve(data);
  expect((await get('/v1/datasets')).datasets).toEqual([expect.objectContaining({ name: 'bulk', url_count: n, domain_count: 97, rows: n, rejects: 0 })]);
}, 300_000);

async function partsIn(data: string): Promise<string[]> {
  const { readdir } = await import('node:fs/promises');
  const root = join(data, 'batches');
  const out: string[] = [];
  for (const d of await readdir(root).catch(() => [] as string[])) {
    for (const b of await readdir(join(root, d)).catch(() => [] as string[])) {
      const files = await readdir(join(root, d, b)).catch(() => [] as string[]);
      if (files.includes('part.parquet')) out.push(layout.batchPart(Number(d.split('=')[1]), b));
    }
  }
  return out;
}

it('ccpipe run --import fills a dataset inside the embedded run (no sample crawl), and refuses --import without --dataset', async () => {
  const data = join(dir, 'data');
  const csv = join(dir, 'list.csv');
  await writeFile(csv, 'url,title,rank\nhttps://a.example/x,X,1\nhttps://b.example/y,Y,2\n');
  const r = await run(['run', '--import', csv, '--dataset', 'mine', '--data', data, '--port', '0', '--exit-after-merge']);
  expect([r.code, r.text]).toEqual([0, expect.any(String)]);
  expect(r.stdout).toContain('0 crawl(s) ingested, 1 import, index version v000001');
  expect(r.stdout).toContain('list.csv → dataset 1 (mine): 2 rows imported, 0 rejected');
  expect((await run(['verify', '--data', data])).code).toBe(0);
  const bad = await run(['run', '--import', csv, '--data', data, '--port', '0', '--exit-after-merge']);
  expect(bad.code).toBe(1);
  expect(bad.text).toContain('--import and --dataset go together');
}, 120_000);
