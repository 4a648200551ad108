'use strict';
// Peak RSS of the merger's walk over the previous version's domain index: every entry's name, key and postings in
// dictionary order, the way a merge reads them (assigning ids, then building the next index). Compares reading every
// shard file at once (a resident DomainIndex, as the merger did before) with reading one shard at a time
// (OnDemandDomainIndex, as it does now), each in its own process over the same files, so peaks do not mix; reports
// the growth over the process's starting RSS and the ratios to the resident walk in the same run.
// Usage: node bench/index-walk.bench.js [domains] (default 4000000; shards of the default 2^20 domains).
const { spawnSync } = require('node:child_process');
const { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const FILES = ['domains', 'bitmaps', 'postings'];

function write(dir, n) {
  const { IndexWriter } = require('../packages/index/dist/format');
  const { RoaringBitmap32 } = require('roaring');
  const w = new IndexWriter((ids) => new RoaringBitmap32(ids).serialize('portable'));
  let k = 0;
  const put = (b) => {
    for (const f of FILES) writeFileSync(join(dir, `${f}-${k}.bin`), b[f]());
    k++;
  };
  for (let i = 0; i < n; i++) {
    const postings = [{ datasetId: 1, file: i % 256, first: i * 20, rows: 20 }, ...(i % 4 === 0 ? [{ datasetId: 2, file: 256 + (i % 256), first: i * 5, rows: 5 }] : [])];
    w.add(Buffer.from(`site${String(i).padStart(9, '0')}.example.com`), BigInt(i + 1) << 32n, postings);
    if (w.closedPending) for (const b of w.takeClosed()) put(b);
  }
  for (const b of w.shards()) put(b);
  return k;
}

function walk(dir, mode) {
  const { DomainDictionary, DomainIndex, OnDemandDomainIndex } = require('../packages/index/dist/format');
  const shards = readdirSync(dir).filter((f) => f.startsWith('domains-')).length;
  const read = (k) => Object.fromEntries(FILES.map((f) => [f, readFileSync(join(dir, `${f}-${k}.bin`))]));
  const start = process.resourceUsage().maxRSS;
  const t = process.hrtime.bigint();
  let index;
  if (mode === 'resident') {
    index = new DomainIndex(Array.from({ length: shards }, (_, k) => read(k)));
  } else {
    const sizes = Array.from({ length: shards }, (_, k) => new DomainDictionary(readFileSync(join(dir, `domains-${k}.bin`))).size);
    index = new OnDemandDomainIndex({ sizes, read });
  }
  let rows = 0;
  let bytes = 0;
  for (let i = 0; i < index.size; i++) {
    bytes += index.nameBytes(i).length;
    if (index.d64(i) === 0n) throw new Error('no key');
    for (const p of index.postings(i)) rows += p.rows;
  }
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  return { domains: index.size, rows, bytes, growthMiB: (process.resourceUsage().maxRSS - start) / 1024, ms };
}

if (process.argv[2] === 'child') {
  console.log(JSON.stringify(walk(process.argv[3], process.argv[4])));
} else {
  const n = Number(process.argv[2] ?? 4_000_000);
  const dir = mkdtempSync(join(tmpdir(), 'ccpipe-walk-bench-'));
  try {
    const shards = write(dir, n);
    const got = ['resident', 'on demand'].map((mode) => {
      const p = spawnSync(process.execPath, [__filename, 'child', dir, mode], { encoding: 'utf8' });
      if (p.status !== 0) throw new Error(p.stderr);
      return { mode, ...JSON.parse(p.stdout.trim()) };
    });
    if (got[0].rows !== got[1].rows || got[0].bytes !== got[1].bytes) throw new Error('the two walks read different entries');
    console.log(`merger walk over a previous index of ${n} domains in ${shards} shards (names, keys, postings of every entry):`);
    for (const g of got) {
      console.log(`  ${g.mode.padEnd(10)} peak RSS +${g.growthMiB.toFixed(0).padStart(4)} MiB (×${(g.growthMiB / got[0].growthMiB).toFixed(2)})  ${(g.ms / 1000).toFixed(2)} s (×${(g.ms / got[0].ms).toFixed(2)})`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
