/**
 * Bulk mode end to end (docs/bulk.md): the built `ccpipe` binary as separate processes, the real RabbitMQ, a real
 * mirror server over ../shared/corpus/cc-mirror-dev counting its requests, Parquet read back by hyparquet.
 */
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { CC_MIRROR_DEV, loadOracle } from './support/corpus';
import { readParquetRows } from './support/parquet';
import { logLine, markersIn, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';
import { ownRuns, type RunDirs } from './support/own-run';

const CRAWL = 'CC-MAIN-2030-40';
const oracle = loadOracle();
const WARC_FILES = gunzipSync(readFileSync(join(CC_MIRROR_DEV, 'crawl-data', CRAWL, 'warc.paths.gz'))).toString('utf8').trim().split('\n').length;

type Run = RunDirs;
const newRun = ownRuns('bulk');
const servers: MirrorServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

async function mirror(): Promise<MirrorServer> {
  const m = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
  servers.push(m);
  return m;
}

const common = (run: Run, baseUrl: string): string[] => ['--data', run.data, '--base-url', baseUrl, '--queue-prefix', run.prefix, '--metrics-port', '0'];

async function runBatcher(run: Run, baseUrl: string, extra: string[]): Promise<CcpipeProcess> {
  const b = spawnCcpipe(['batcher', '--crawl', CRAWL, '--batch-size', '40', ...common(run, baseUrl), ...extra]);
  run.procs.push(b);
  const { code } = await b.exited;
  expect({ code, out: b.text.join('') }).toMatchObject({ code: 0 });
  return b;
}

function worker(run: Run, baseUrl: string): CcpipeProcess {
  const p = spawnCcpipe(['worker', '--extract-threads', '1', '--prefetch', '2', ...common(run, baseUrl)]);
  run.procs.push(p);
  return p;
}

async function rowsOf(run: Run): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  for (const marker of await markersIn(run.data)) {
    const m = JSON.parse(await readFile(marker, 'utf8')) as { part: string | null };
    if (m.part) rows.push(...(await readParquetRows(await readFile(join(run.data, m.part)))));
  }
  return rows;
}

/** Rows in one order, as JSON: the same captures with the same values whatever batches they came in. */
const canonical = (rows: Record<string, unknown>[]): string[] =>
  rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).sort();

async function metric(p: CcpipeProcess, name: string): Promise<number> {
  const port = Number(logLine(p, 'metrics listening')!['port']);
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

/** Runs one mode to the end: the batcher, then a worker until every batch it counted has a marker. */
async function ingest(mode: 'bulk' | 'ranges'): Promise<{ run: Run; rows: Record<string, unknown>[]; requests: number; mirrorRequests: number }> {
  const m = await mirror();
  const run = await newRun();
  const b = await runBatcher(run, m.url, ['--mode', mode]);
  const done = logLine(b, 'batcher done')!;
  const cp = JSON.parse(await readFile(join(run.data, 'batcher', CRAWL, 'checkpoint.json'), 'utf8')) as { batchesPublished: number; mode?: string };
  expect(cp.mode ?? 'ranges').toBe(mode);
  expect(done['kept']).toBe(oracle.crawls[CRAWL]!.kept_captures);
  const w = worker(run, m.url);
  await waitFor('every batch done', async () => (await markersIn(run.data)).length === cp.batchesPublished, 600_000, 500);
  const requests = await metric(w, `ccpipe_worker_source_requests_total{mode="${mode}"}`);
  w.child.kill('SIGTERM');
  expect((await w.exited).code).toBe(0);
  return { run, rows: await rowsOf(run), requests, mirrorRequests: m.stats().requests };
}

describe('bulk mode: one request per WARC file, the same rows as ranges mode', () => {
  it('bulk and ranges write the same rows for the same crawl and filter; bulk sends a request per WARC file, and the lists are gone', async () => {
    const ranges = await ingest('ranges');
    const bulk = await ingest('bulk');
    expect(bulk.rows).toHaveLength(oracle.crawls[CRAWL]!.kept_captures);
    expect(canonical(bulk.rows)).toEqual(canonical(ranges.rows));
    // requests for WARC bytes: one per WARC file in bulk mode, one per kept record in ranges mode
    expect(bulk.requests).toBeLessThanOrEqual(WARC_FILES);
    expect(bulk.requests).toBeGreaterThan(0);
    expect(ranges.requests).toBe(oracle.crawls[CRAWL]!.kept_captures);
    // every request the mirror saw in bulk mode: cluster.idx, warc.paths.gz, one stream per CDX file, one per WARC file
    const cdxFiles = 3;
    expect(bulk.mirrorRequests).toBeLessThanOrEqual(2 + cdxFiles + WARC_FILES);
    await expect(readFile(join(bulk.run.data, 'bulk'))).rejects.toThrow();
  }, 1_200_000);

  it('auto reads in bulk for the whole filter and in ranges for a --domains run, and says why', async () => {
    const m = await mirror();
    const whole = await newRun();
    const b = await runBatcher(whole, m.url, []);
    expect(logLine(b, 'read mode chosen')).toMatchObject({ mode: 'bulk', asked: 'auto' });
    const est = logLine(b, 'read mode chosen')!['estimate'] as { bulk: { requests: number }; ranges: { requests: number } };
    expect(est.bulk.requests).toBeLessThan(est.ranges.requests);
    const cp = JSON.parse(await readFile(join(whole.data, 'batcher', CRAWL, 'checkpoint.json'), 'utf8')) as { mode?: string; modeChoice?: { mode: string } };
    expect([cp.mode, cp.modeChoice?.mode]).toEqual(['bulk', 'bulk']);
    // `ccpipe status` says how the crawl is read, and why
    const status = spawnCcpipe(['status', '--data', whole.data, '--queue-prefix', whole.prefix]);
    whole.procs.push(status);
    expect((await status.exited).code).toBe(0);
    expect((JSON.parse(status.stdout) as { datasets: { read?: unknown }[] }).datasets[0]?.read).toEqual({
      mode: 'bulk', modeChoice: { asked: 'auto', reason: expect.stringMatching(/^the filter keeps ≈ [\d.]+% of the records: reading whole WARC files/) as string },
    });

    const targeted = await newRun();
    const domains = join(targeted.data, 'domains.txt');
    await writeFile(domains, `${Object.keys(oracle.crawls[CRAWL]!.domains).slice(0, 2).join('\n')}\n`);
    const t = await runBatcher(targeted, m.url, ['--domains', domains]);
    expect(logLine(t, 'read mode chosen')).toMatchObject({ mode: 'ranges', asked: 'auto' });

    // a dataset begun in one mode is finished in it: asking for the other is refused
    const again = spawnCcpipe(['batcher', '--crawl', CRAWL, '--batch-size', '40', ...common(whole, m.url), '--mode', 'ranges']);
    whole.procs.push(again);
    expect((await again.exited).code).toBe(1);
    expect(JSON.stringify(again.logs) + again.text.join('')).toMatch(/begun in bulk mode/);
  }, 600_000);

  it('a bulk worker killed with SIGKILL mid-file loses nothing and doubles nothing: the redelivery resumes at the first sub-batch not done', async () => {
    const m = await mirror();
    const run = await newRun();
    const b = spawnCcpipe(['batcher', '--crawl', CRAWL, '--batch-size', '10', '--mode', 'bulk', ...common(run, m.url)]);
    run.procs.push(b);
    expect((await b.exited).code).toBe(0);
    const cp = JSON.parse(await readFile(join(run.data, 'batcher', CRAWL, 'checkpoint.json'), 'utf8')) as { batchesPublished: number };
    const first = worker(run, m.url);
    await waitFor('a first sub-batch done', async () => (await markersIn(run.data)).length >= 2, 300_000, 100);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect((await markersIn(run.data)).length).toBeLessThan(cp.batchesPublished);
    const second = worker(run, m.url);
    await waitFor('every batch done', async () => (await markersIn(run.data)).length === cp.batchesPublished, 600_000, 500);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
    const rows = await rowsOf(run);
    expect(rows).toHaveLength(oracle.crawls[CRAWL]!.kept_captures);
    const keys = new Set(rows.map((r) => `${String(r['raw_url'])} ${String(r['ts'])} ${String(r['warc_filename'])}:${String(r['warc_offset'])}`));
    expect(keys.size).toBe(rows.length);
  }, 900_000);
});
