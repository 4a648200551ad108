'use strict';
// How a merge finds the batches it has not folded in, on a lake that has merged many: the inbox alone (the default
// once merges have read it for an hour) against a listing of every batch marker (`--rescan`, and what every merge did
// before the inbox). Same store copied twice, one merge of the same new batches each, ratio of the `load` phase (where
// the batches are found; pendingMerge, the merger service's tick, makes the same listing) and of the whole merge.
// Usage: node bench/markers.bench.js [mergedBatches=100000] [newBatches=100]. Each merged batch has three files in its
// own folder (part, marker, and the postings.json workers wrote until they stopped: the figures in
// docs/index-format.md were measured with it), as on a real lake; they are written directly (no fsync).
const { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const HOUR = 3_600_000;

async function main() {
  const merged = Number(process.argv[2] ?? 100_000);
  const fresh = Number(process.argv[3] ?? 100);
  const { layout, batchId } = require('@ccpipe/core');
  const { FsObjectStore, writeParquetPart, closeDuckDbParquetEngine } = require('@ccpipe/adapters');
  const { runMerge } = require('@ccpipe/index');
  const root = mkdtempSync(join(tmpdir(), 'ccpipe-markers-bench-'));
  try {
    const base = join(root, 'base');
    const file = (key, bytes) => {
      const path = join(base, ...key.split('/'));
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, bytes);
    };
    const marker = (id, part, rows) => Buffer.from(JSON.stringify({ v: 1, batchId: id, datasetId: 1, rows, part }));
    // merged batches: their markers name no part (nothing for the merge to read), but their folders hold what a
    // worker's do, so a listing of batches/ pays for three keys per batch
    let t = Date.now();
    for (let i = 0; i < merged; i++) {
      const id = batchId('CC-MAIN-2030-40', Math.floor(i / 4), i % 4);
      file(layout.batchPart(1, id), Buffer.from('x'));
      file(`${layout.batchDir(1, id)}/postings.json`, Buffer.from('{}'));
      file(layout.batchMarker(1, id), marker(id, null, 0));
      file(layout.inboxEntry(1, id), marker(id, null, 0));
    }
    const store = new FsObjectStore({ root: base });
    const opts = (dir, over = {}) => ({ store: new FsObjectStore({ root: dir }), dataDir: dir, rowGroupSize: 8192, keepVersions: 2, graceMs: 0, ...over });
    // the first merge, three hours ago, folds them in (and lists every marker: there is no version yet)
    const first = await runMerge(opts(base, { now: () => new Date(Date.now() - 3 * HOUR) }));
    console.log(`setup: ${merged} merged batches written and merged in ${((Date.now() - t) / 1000).toFixed(1)} s (version ${first.version}, ${first.batches} batches)`);
    const rows = Array.from({ length: 50 }, (_, i) => ({
      datasetId: 1, urlId: 0n, url: '', rawUrl: '', host: '', domain: '', privateDomain: null, surt: '', timestamp: '20300101000000', status: 200, mime: 'text/html',
      charset: null, languages: null, title: 't', text: null, contentLength: 1, outlinks: [], warcFilename: 'w.warc.gz', warcOffset: i, warcLength: 1, digest: 'A',
    }));
    const { canonicalizeUrl, urlId } = require('@ccpipe/core');
    /** Part rows of `urls`, as a worker writes them. */
    const rowsOf = (urls) => urls.map((u, i) => {
      const c = canonicalizeUrl(u);
      return { ...rows[i % rows.length], urlId: urlId(c.url), url: c.url, rawUrl: c.url, host: c.host, domain: c.domain ?? c.host, surt: c.surt };
    });
    // a second merge an hour and more after the first, whose full listing finds every batch through the inbox: the
    // merges after it read the inbox alone (merge-inbox.ts)
    const settle = batchId('CC-MAIN-2030-40', 999_999, 0);
    await store.put(layout.batchPart(1, settle), await writeParquetPart(rowsOf(['https://settle.example/']), { engine: 'duckdb' }));
    file(layout.batchMarker(1, settle), marker(settle, layout.batchPart(1, settle), 1));
    file(layout.inboxEntry(1, settle), marker(settle, layout.batchPart(1, settle), 1));
    await runMerge(opts(base, { now: () => new Date(Date.now() - 1.5 * HOUR) }));
    for (let b = 0; b < fresh; b++) {
      const id = batchId('CC-MAIN-2030-40', 1_000_000 + b, 0);
      const part = layout.batchPart(1, id);
      const partRows = rowsOf(rows.map((_, i) => `https://site${b % 37}.example/${b}/${i}`));
      await store.put(part, await writeParquetPart(partRows, { engine: 'duckdb' }));
      file(layout.batchMarker(1, id), marker(id, part, partRows.length));
      file(layout.inboxEntry(1, id), marker(id, part, partRows.length));
    }
    await closeDuckDbParquetEngine();
    const copies = { inbox: join(root, 'inbox'), rescan: join(root, 'rescan') };
    for (const dir of Object.values(copies)) cpSync(base, dir, { recursive: true });

    const timed = async (f) => {
      const c0 = process.cpuUsage();
      const w0 = process.hrtime.bigint();
      const r = await f();
      const cpu = process.cpuUsage(c0);
      return { r, wallMs: Number(process.hrtime.bigint() - w0) / 1e6, cpuMs: (cpu.user + cpu.system) / 1000 };
    };
    const res = {};
    for (const [mode, dir] of Object.entries(copies)) {
      const phases = {};
      const m = await timed(() => runMerge(opts(dir, { rescan: mode === 'rescan', onPhase: (p, ms) => (phases[p] = ms) })));
      res[mode] = { ...m, load: phases.load };
      if (m.r.batches !== fresh || m.r.scan !== (mode === 'rescan' ? 'full' : 'inbox')) throw new Error(`${mode}: merged ${m.r.batches} batches by a ${m.r.scan} scan, expected ${fresh}`);
    }
    const f = (x) => x.toFixed(0);
    console.log(`${fresh} new batches on a lake of ${merged} merged (${merged * 3} keys under batches/):`);
    for (const mode of ['inbox', 'rescan']) {
      console.log(`  ${mode.padEnd(6)} find (load phase) ${f(res[mode].load)} ms, whole merge ${f(res[mode].wallMs)} ms wall / ${f(res[mode].cpuMs)} ms CPU`);
    }
    console.log(`  ratio rescan / inbox: find ${(res.rescan.load / res.inbox.load).toFixed(1)}×, merge ${(res.rescan.wallMs / res.inbox.wallMs).toFixed(1)}× wall`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
