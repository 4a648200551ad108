import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { canonicalizeUrl, layout, urlId } from '@ccpipe/core';
import { FsObjectStore, closeDuckDbParquetEngine, writeParquetPart, type PartRow } from '@ccpipe/adapters';
import { runMerge } from '@ccpipe/index';
import { partRow, putBatch } from '../../../../tests/support/batches';
import { registerMergeCommand } from './merge';

afterAll(() => closeDuckDbParquetEngine());

function row(raw: string): PartRow {
  const c = canonicalizeUrl(raw);
  return {
    datasetId: 3, urlId: urlId(c.url), url: c.url, rawUrl: raw, host: c.host, domain: c.domain ?? c.host, privateDomain: null, surt: c.surt,
    timestamp: '20300101000000', status: 200, mime: 'text/html', charset: null, languages: 'eng', title: null, text: null, contentLength: 1,
    outlinks: [], outlinkDomains: [], warcFilename: 'w.warc.gz', warcOffset: 0, warcLength: 1, digest: 'A',
  };
}

/** `ccpipe merge --data dir …flags`, its result lines pushed to `out`. */
function mergeIn(dir: string, out: string[] = []): (...flags: string[]) => Promise<void> {
  return async (...flags) => {
    const program = new Command('ccpipe').exitOverride();
    registerMergeCommand(program, { write: (l) => void out.push(l) });
    await program.parseAsync(['node', 'ccpipe', 'merge', '--data', dir, ...flags]);
  };
}

describe('ccpipe merge', () => {
  it('merges the completed batches of --data and prints the result; a second run has nothing to do', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ccpipe-cli-merge-'));
    try {
      const store = new FsObjectStore({ root: dir });
      const part = layout.batchPart(3, 'b1');
      await store.put(part, await writeParquetPart([row('https://a.example/'), row('https://b.example/x')], { engine: 'duckdb' }));
      await store.put(layout.batchMarker(3, 'b1'), Buffer.from(JSON.stringify({ v: 1, batchId: 'b1', datasetId: 3, part })));
      const out: string[] = [];
      const run = async () => {
        const program = new Command('ccpipe').exitOverride();
        registerMergeCommand(program, { write: (l) => void out.push(l) });
        await program.parseAsync(['node', 'ccpipe', 'merge', '--data', dir, '--keep-versions', '2']);
      };
      await run();
      await run();
      const [first, second] = out.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(first).toMatchObject({ version: 'v000001', published: true, batches: 1, rowsIn: 2, urls: 2, domains: 2 });
      expect(second).toMatchObject({ version: 'v000001', published: false, batches: 0, urls: 2 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a --data directory that does not exist is refused, and not created', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'ccpipe-cli-merge-')), 'mistyped');
    try {
      const program = new Command('ccpipe').exitOverride();
      registerMergeCommand(program, { write: () => undefined });
      await expect(program.parseAsync(['node', 'ccpipe', 'merge', '--data', dir])).rejects.toMatchObject({ code: 'CCP_ERR_CONFIG', message: `there is no data store at ${dir}: check --data (CCPIPE_DATA)` });
      await expect(stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await rm(join(dir, '..'), { recursive: true, force: true });
    }
  });

  it('--text-versions sets the lake\'s content-versions policy: the result counts the texts dropped; bad values are refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ccpipe-cli-merge-'));
    try {
      const store = new FsObjectStore({ root: dir });
      const out: string[] = [];
      const merge = mergeIn(dir, out);
      for (const d of [1, 2]) await putBatch(store, d, `b${d}`, [partRow(d, 'https://www.example.com/', `2030010${d}000000`, { text: `t${d}` })]);
      await expect(merge('--text-versions', '0')).rejects.toMatchObject({ code: 'CCP_ERR_CONFIG', message: "--text-versions must be a whole number ≥ 1 or 'all'" });
      await expect(merge('--text-versions', 'three')).rejects.toMatchObject({ code: 'CCP_ERR_CONFIG' });
      await merge('--text-versions', '1');
      expect(JSON.parse(out[0]!)).toMatchObject({ published: true, urls: 2, textDropped: 1 });
      await merge('--text-versions', 'all');
      expect(JSON.parse(out[1]!)).toMatchObject({ published: false, textDropped: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('writes search shards by default and none with --no-search', async () => {
    for (const flags of [[], ['--no-search']]) {
      const dir = await mkdtemp(join(tmpdir(), 'ccpipe-cli-merge-'));
      try {
        await putBatch(new FsObjectStore({ root: dir }), 1, 'b1', [partRow(1, 'https://www.example.com/', '20300101000000', { text: 'words to find' })]);
        await mergeIn(dir)(...flags);
        const m = JSON.parse(await readFile(join(dir, 'index', 'manifest.json'), 'utf8')) as { current: string };
        const toc = JSON.parse(await readFile(join(dir, 'index', m.current, 'version.json'), 'utf8')) as { files: Record<string, unknown> };
        expect('search.json' in toc.files).toBe(flags.length === 0);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
  });

  it('--min-new-ratio, --max-wait and --rescan-every belong to the merger service (--every) and take numbers', async () => {
    const merge = async (...args: string[]) => {
      const program = new Command('ccpipe').exitOverride();
      registerMergeCommand(program, { write: () => undefined });
      await program.parseAsync(['node', 'ccpipe', 'merge', '--data', '/nonexistent-ccpipe-dir', ...args]);
    };
    await expect(merge('--min-new-ratio', '0.25')).rejects.toThrow(/add --every/);
    await expect(merge('--max-wait', '60')).rejects.toThrow(/add --every/);
    await expect(merge('--every', '5', '--min-new-ratio', '-1')).rejects.toThrow(/--min-new-ratio must be a number ≥ 0/);
    await expect(merge('--every', '5', '--min-new-ratio', '0.5', '--max-wait', '0')).rejects.toThrow(/--max-wait must be a number of seconds > 0/);
    await expect(merge('--rescan-every', '3600')).rejects.toThrow(/add --every/);
    await expect(merge('--every', '5', '--rescan-every', 'daily')).rejects.toThrow(/--rescan-every must be a number of seconds > 0/);
  });

  it('--compact folds a partition\'s runs into one file even with no new batch; it and --rescan are refused with --every', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ccpipe-cli-merge-'));
    try {
      const store = new FsObjectStore({ root: dir });
      const out: string[] = [];
      const merge = mergeIn(dir, out);
      // a smaller second batch of the same domain: a run of its own (runs no bigger than the new rows are folded)
      for (const [id, n] of [['b1', 2], ['b2', 1]] as const) {
        const part = layout.batchPart(3, id);
        await store.put(part, await writeParquetPart(Array.from({ length: n }, (_, i) => row(`https://a.example/${id}/${i}`)), { engine: 'duckdb' }));
        await store.put(layout.batchMarker(3, id), Buffer.from(JSON.stringify({ v: 1, batchId: id, datasetId: 3, part })));
        await merge();
      }
      await expect(merge('--compact', '--every', '60')).rejects.toThrow(/--compact is a one-off/);
      await expect(merge('--rescan', '--every', '60')).rejects.toThrow(/--rescan is a one-off merge: run it without --every/);
      await merge('--compact');
      const [, second, compacted] = out.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(second).toMatchObject({ version: 'v000002', lakeFiles: 2 });
      expect(compacted).toMatchObject({ version: 'v000003', published: true, batches: 0, urls: 3, rewrittenFiles: 1, rowsWritten: 3, lakeFiles: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--rescan lists every marker: it finds a batch completed without an inbox entry, which a merge reading the inbox alone does not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ccpipe-cli-rescan-'));
    try {
      const store = new FsObjectStore({ root: dir });
      // two merges an hour apart whose full listings find every batch through the inbox: merges then read it alone
      let clock = Date.parse('2030-01-01T00:00:00Z');
      for (const id of ['b1', 'b2']) {
        await putBatch(store, 3, id, [partRow(3, `https://${id}.example/`, '20300101000000')]);
        await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 3, graceMs: 0, now: () => new Date(clock) });
        clock += 61 * 60_000;
      }
      await putBatch(store, 3, 'old-worker', [partRow(3, 'https://old.example/', '20300101000000')], { inbox: false });
      const out: string[] = [];
      const merge = mergeIn(dir, out);
      await merge();
      await merge('--rescan');
      const [inbox, rescan] = out.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(inbox).toMatchObject({ published: false, batches: 0, scan: 'inbox' });
      expect(rescan).toMatchObject({ published: true, batches: 1, urls: 3, scan: 'full', withoutInbox: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--lake-zstd-level sets the level of the lake files written (19 writes a smaller lake than 1 from the same batch); a bad level is refused', async () => {
    const dirs = [await mkdtemp(join(tmpdir(), 'ccpipe-cli-zstd-')), await mkdtemp(join(tmpdir(), 'ccpipe-cli-zstd-'))];
    try {
      const lakeBytes: number[] = [];
      for (const [dir, level] of [[dirs[0]!, '1'], [dirs[1]!, '19']] as const) {
        const store = new FsObjectStore({ root: dir });
        const part = layout.batchPart(3, 'b1');
        const urls = Array.from({ length: 4000 }, (_, i) => `https://news${i % 7}.example/${['world', 'sport', 'tech'][i % 3]}/2030/${(i * 7919) % 100000}-story-about-${i % 13}`);
        await store.put(part, await writeParquetPart(urls.map(row), { engine: 'duckdb' }));
        await store.put(layout.batchMarker(3, 'b1'), Buffer.from(JSON.stringify({ v: 1, batchId: 'b1', datasetId: 3, part })));
        const merge = mergeIn(dir);
        for (const bad of ['0', '23', '1.5', 'max', '1e1', '0x9']) await expect(merge('--lake-zstd-level', bad)).rejects.toMatchObject({ code: 'CCP_ERR_CONFIG', message: expect.stringMatching(/--lake-zstd-level must be an integer from 1 to 22/) });
        // a memory limit DuckDB cannot read is refused before the merge starts (it used to fail after opening the store)
        for (const bad of ['banana', '-5MB', '0MB', '5 parsecs']) await expect(merge('--memory-limit', bad)).rejects.toMatchObject({ code: 'CCP_ERR_CONFIG', message: expect.stringMatching(/--memory-limit must be a size/) });
        expect(await store.get('index/manifest.json')).toBeNull();
        await merge('--lake-zstd-level', level, '--lake-columns', 'api', '--memory-limit', '300MiB');
        const status = JSON.parse(Buffer.from((await store.get('index/v000001/status.json'))!).toString('utf8')) as { lakeBytes: number; urls: number };
        expect(status.urls).toBe(4000);
        lakeBytes.push(status.lakeBytes);
      }
      expect(lakeBytes[1]!).toBeLessThan(lakeBytes[0]!);
    } finally {
      for (const d of dirs) await rm(d, { recursive: true, force: true });
    }
  });

  it('--lake-columns picks the lake column set, which a later merge cannot change; a bad value is refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ccpipe-cli-merge-'));
    try {
      const store = new FsObjectStore({ root: dir });
      const addBatch = async (id: string, urls: string[]) => {
        const part = layout.batchPart(3, id);
        await store.put(part, await writeParquetPart(urls.map(row), { engine: 'duckdb' }));
        await store.put(layout.batchMarker(3, id), Buffer.from(JSON.stringify({ v: 1, batchId: id, datasetId: 3, part })));
      };
      const merge = mergeIn(dir);
      await addBatch('b1', ['https://a.example/']);
      await expect(merge('--lake-columns', 'narrow')).rejects.toThrow(/--lake-columns must be/);
      await merge('--lake-columns', 'api');
      const status = JSON.parse(Buffer.from((await store.get('index/v000001/status.json'))!).toString('utf8')) as { lakeColumns?: string };
      expect(status.lakeColumns).toBe('api');
      await addBatch('b2', ['https://b.example/']);
      await expect(merge('--lake-columns', 'lean')).rejects.toThrow(/lakeColumns|lake columns/i);
      await merge(); // unset: keeps the lake's set
      const next = JSON.parse(Buffer.from((await store.get('index/v000002/status.json'))!).toString('utf8')) as { lakeColumns?: string; urls: number };
      expect(next).toMatchObject({ lakeColumns: 'api', urls: 2 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
