import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { Command } from 'commander';
import { canonicalizeUrl, layout, urlId } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine, writeParquetPart, type PartRow } from '@ccpipe/adapters';
import { registerMergeCommand } from '../commands/merge';
import { MERGE_PHASES } from './merge-metrics';

afterAll(() => closeDuckDbParquetEngine());

const CCPIPE_BIN = resolve(__dirname, '..', '..', 'bin', 'ccpipe.js');

function row(raw: string): PartRow {
  const c = canonicalizeUrl(raw);
  return {
    datasetId: 3, urlId: urlId(c.url), url: c.url, rawUrl: raw, host: c.host, domain: c.domain ?? c.host, privateDomain: null, surt: c.surt,
    timestamp: '20300101000000', status: 200, mime: 'text/html', charset: null, languages: 'eng', title: null, text: null, contentLength: 1,
    outlinks: [], outlinkDomains: [], warcFilename: 'w.warc.gz', warcOffset: 0, warcLength: 1, digest: 'A',
  };
}

/** A data store with one completed batch of `urls`. */
async function storeWithBatch(dir: string, batchId: string, urls: string[]): Promise<void> {
  const store = new FsObjectStore({ root: dir });
  const part = layout.batchPart(3, batchId);
  await store.put(part, await writeParquetPart(urls.map(row), { engine: 'duckdb' }));
  const marker = Buffer.from(JSON.stringify({ v: 1, batchId, datasetId: 3, rows: urls.length, part }));
  await store.put(layout.batchMarker(3, batchId), marker);
  await store.put(layout.inboxEntry(3, batchId), marker);
}

function fakeStream(isTTY: boolean): Writable & { isTTY: boolean; chunks: string[] } {
  const chunks: string[] = [];
  return Object.assign(
    new Writable({
      write(chunk: Buffer | string, _enc, cb) {
        chunks.push(chunk.toString());
        cb();
      },
    }),
    { isTTY, chunks },
  );
}

describe('ccpipe merge progress', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ccpipe-merge-progress-'));
    await storeWithBatch(dir, 'b1', ['https://a.example/', 'https://b.example/x', 'https://b.example/y']);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const run = async (progress: Writable & { isTTY: boolean }): Promise<string[]> => {
    const out: string[] = [];
    const program = new Command('ccpipe').exitOverride();
    registerMergeCommand(program, { write: (l) => void out.push(l), progress });
    await program.parseAsync(['node', 'ccpipe', 'merge', '--data', dir]);
    return out;
  };

  it('on a TTY shows every phase as it completes, then rows in and the published version; stdout keeps its one JSON line', async () => {
    const tty = fakeStream(true);
    const out = await run(tty);
    expect(out).toHaveLength(1);
    expect(JSON.parse(out[0]!)).toMatchObject({ version: 'v000001', published: true, rowsIn: 3, urls: 3, domains: 2 });
    const lines = tty.chunks.join('').trimEnd().split('\n');
    expect(lines.slice(0, -1).map((l) => /^merge (\w+)\s+[\d.]+s\s+elapsed [\d.]+s$/.exec(l)?.[1])).toEqual([...MERGE_PHASES]);
    expect(lines.at(-1)).toMatch(/^merge published v000001: 1 batches, 3 rows in → 3 URLs in 2 domains, \d+ lake files written \(3 rows\), \d+ in the lake \([\d.]+s\)$/);
  });

  it('otherwise writes pino JSON lines (phases, then the result) to the progress stream', async () => {
    const plain = fakeStream(false);
    await run(plain);
    const lines = plain.chunks.join('').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.filter((l) => l['msg'] === 'merge phase').map((l) => l['phase'])).toEqual([...MERGE_PHASES]);
    expect(lines.at(-1)).toMatchObject({ msg: 'merge done', service: 'merge', version: 'v000001', published: true, rowsIn: 3 });
  });

  it('with --metrics-port serves ccpipe_merge_* and process metrics while the one-off merge runs, and stops serving when it ends', async () => {
    const plain = fakeStream(false);
    const scrapes: string[] = [];
    let port = 0;
    let scraping: Promise<void> | undefined;
    plain.write = ((write) =>
      function (this: Writable, chunk: unknown, ...rest: unknown[]): boolean {
        const line = JSON.parse(String(chunk)) as Record<string, unknown>;
        if (line['msg'] === 'metrics listening' && scraping === undefined) {
          port = line['port'] as number;
          // scrape until the server goes away: the merge (DuckDB, lake files) runs meanwhile
          scraping = (async () => {
            for (;;) {
              const body = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => null);
              if (body === null) return;
              scrapes.push(body);
            }
          })();
        }
        return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
      })(plain.write);
    const out: string[] = [];
    const program = new Command('ccpipe').exitOverride();
    registerMergeCommand(program, { write: (l) => void out.push(l), progress: plain });
    await program.parseAsync(['node', 'ccpipe', 'merge', '--data', dir, '--metrics-port', '0', '--metrics-host', '127.0.0.1']);
    expect(JSON.parse(out[0]!)).toMatchObject({ version: 'v000001', published: true });
    expect(port).toBeGreaterThan(0);
    await scraping;
    expect(scrapes.length).toBeGreaterThan(0);
    expect(scrapes[0]).toMatch(/^ccpipe_merge_runs_total\{outcome="published"\} 0$/m);
    expect(scrapes[0]).toMatch(/^ccpipe_merge_phase_seconds_count\{phase="lake"\} \d+$/m);
    expect(scrapes[0]).toMatch(/^process_resident_memory_bytes \d+/m);
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow(); // closed once the merge is done
  });

  it('without --metrics-port serves nothing', async () => {
    const plain = fakeStream(false);
    await run(plain);
    expect(plain.chunks.join('')).not.toContain('metrics listening');
  });

  it('fails before merging when --metrics-port cannot be bound, naming the address', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const taken = (blocker.address() as AddressInfo).port;
    try {
      const out: string[] = [];
      const program = new Command('ccpipe').exitOverride();
      registerMergeCommand(program, { write: (l) => void out.push(l), progress: fakeStream(false) });
      await expect(program.parseAsync(['node', 'ccpipe', 'merge', '--data', dir, '--metrics-port', String(taken), '--metrics-host', '127.0.0.1'])).rejects.toMatchObject({
        code: 'CCP_ERR_CONFIG',
        message: expect.stringContaining(`127.0.0.1:${taken} (EADDRINUSE)`),
      });
      expect(out).toEqual([]);
      const written: string[] = [];
      for await (const o of new FsObjectStore({ root: dir }).list('index/')) written.push(o.key);
      expect(written).toEqual([]); // no lease, no version
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });
});

/** `ccpipe merge ARGS` as a child process, its JSON log lines collected. */
function startMerger(args: string[]) {
  const child = spawn(process.execPath, [CCPIPE_BIN, 'merge', ...args], { env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const logs: Record<string, unknown>[] = [];
  let buf = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    buf += c;
    for (let nl; (nl = buf.indexOf('\n')) >= 0; buf = buf.slice(nl + 1)) logs.push(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const waitLog = async (pred: (l: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>> => {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) {
      const l = logs.find(pred);
      if (l) return l;
      if (child.exitCode !== null) break;
    }
    throw new Error(`no log line ${what}; stderr: ${stderr}`);
  };
  return { child, exited, logs, waitLog };
}

describe('ccpipe merge --every (the merger service, as a process)', () => {
  it('merges on schedule, serves ccpipe_merge_* on /metrics, picks up new batches, and exits 0 on SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ccpipe-merger-'));
    const { child, exited, logs, waitLog } = startMerger(['--every', '0.2', '--data', dir, '--metrics-port', '0', '--metrics-host', '127.0.0.1']);
    try {
      const port = (await waitLog((l) => l['msg'] === 'metrics listening', 'metrics listening'))['port'] as number;
      await waitLog((l) => l['msg'] === 'merge done' && l['published'] === false, 'an empty merge');
      await storeWithBatch(dir, 'b1', ['https://a.example/', 'https://b.example/x']);
      const merged = await waitLog((l) => l['msg'] === 'merge done' && l['published'] === true, 'a published merge');
      expect(merged).toMatchObject({ version: 'v000001', batches: 1, rowsIn: 2, urls: 2, domains: 2 });
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(/^ccpipe_merge_runs_total\{outcome="published"\} 1$/m);
      expect(metrics).toMatch(/^ccpipe_merge_runs_total\{outcome="unchanged"\} [1-9]\d*$/m);
      expect(metrics).toMatch(/^ccpipe_merge_index_version 1$/m);
      expect(metrics).toMatch(/^ccpipe_merge_rows_in_total 2$/m);
      expect(metrics).toMatch(/^ccpipe_merge_lake_rows_written_total 2$/m);
      expect(metrics).toMatch(/^ccpipe_merge_lake_files [1-9]\d*$/m);
      expect(metrics).toMatch(/^ccpipe_merge_phase_seconds_count\{phase="lake"\} 1$/m);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(logs.at(-1)).toMatchObject({ msg: 'merger stopped', failed: 0 });
      // one JSON log line per line on stdout: no bare result lines in service mode
      expect(logs.every((l) => typeof l['msg'] === 'string')).toBe(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('with --min-new-ratio defers a small delta (logged, counted) until --max-wait, and merges a big one at once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ccpipe-merger-'));
    const { child, exited, logs, waitLog } = startMerger(['--every', '0.2', '--min-new-ratio', '1', '--max-wait', '2', '--data', dir, '--metrics-port', '0', '--metrics-host', '127.0.0.1']);
    const published = (v: string) => (l: Record<string, unknown>) => l['msg'] === 'merge done' && l['version'] === v && l['published'] === true;
    try {
      const port = (await waitLog((l) => l['msg'] === 'metrics listening', 'metrics listening'))['port'] as number;
      await storeWithBatch(dir, 'b1', ['https://a.example/', 'https://b.example/x']);
      await waitLog(published('v000001'), 'the first version (no lake yet: merged at once)');
      await storeWithBatch(dir, 'b2', ['https://c.example/']); // 1 new row < 1 × 2 merged URLs
      const first = await waitLog((l) => l['msg'] === 'merge deferred', 'a deferred merge');
      expect(first).toMatchObject({ pendingBatches: 1, pendingRows: 1, lakeUrls: 2, dueAtRows: 2, waitedMs: 0 });
      const v2 = await waitLog(published('v000002'), 'the small delta merged after --max-wait');
      const deferrals = logs.filter((l) => l['msg'] === 'merge deferred');
      expect(deferrals.length).toBeGreaterThanOrEqual(5); // 2 s of 0.2 s ticks
      expect(Math.max(...deferrals.map((l) => l['waitedMs'] as number))).toBeGreaterThanOrEqual(1500);
      expect(v2).toMatchObject({ batches: 1, urls: 3 });
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(new RegExp(`^ccpipe_merge_deferred_total ${deferrals.length}$`, 'm'));
      await storeWithBatch(dir, 'b3', ['https://d.example/', 'https://e.example/', 'https://f.example/']); // 3 ≥ 1 × 3
      await waitLog(published('v000003'), 'a big delta merged at once');
      expect(logs.filter((l) => l['msg'] === 'merge deferred')).toHaveLength(deferrals.length);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
