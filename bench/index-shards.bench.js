'use strict';
// Peak RSS of building the domain index (IndexWriter) for N domains, written the way the merger writes it: each
// shard's three files put to disk when the next shard starts (takeClosed), the last at the end. Compares one
// unsharded index (every file held until the end, as before shards) with the default shard size and a small one,
// each in its own process so peaks do not mix; reports the growth over the process's starting RSS and its ratio to
// the unsharded build in the same run. Usage: node bench/index-shards.bench.js [domains] (default 2000000).
const { spawnSync } = require('node:child_process');
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

function build(n, maxDomains) {
  const { IndexWriter } = require('../packages/index/dist/format');
  const { RoaringBitmap32 } = require('roaring');
  const dir = mkdtempSync(join(tmpdir(), 'ccpipe-shards-bench-'));
  const w = new IndexWriter((ids) => new RoaringBitmap32(ids).serialize('portable'), maxDomains > 0 ? { maxDomains } : {});
  let k = 0;
  const write = (b) => {
    for (const f of ['domains', 'bitmaps', 'postings']) writeFileSync(join(dir, `${f}-${k}.bin`), b[f]());
    k++;
  };
  const start = process.resourceUsage().maxRSS;
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    w.add(Buffer.from(`site${String(i).padStart(9, '0')}.example.com`), BigInt(i + 1) << 32n, [{ datasetId: 1, file: i % 256, first: i * 20, rows: 20 }]);
    if (w.closedPending) for (const b of w.takeClosed()) write(b);
  }
  for (const b of w.shards()) write(b);
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  rmSync(dir, { recursive: true, force: true });
  return { shards: k, growthMiB: (process.resourceUsage().maxRSS - start) / 1024, ms };
}

if (process.argv[2] === 'child') {
  console.log(JSON.stringify(build(Number(process.argv[3]), Number(process.argv[4]))));
} else {
  const n = Number(process.argv[2] ?? 2_000_000);
  const variants = [['unsharded (one file each)', 2 ** 31], ['default (2^20 domains)', 0], ['2^18 domains', 2 ** 18]];
  const got = variants.map(([name, max]) => {
    const p = spawnSync(process.execPath, [__filename, 'child', String(n), String(max)], { encoding: 'utf8' });
    if (p.status !== 0) throw new Error(p.stderr);
    return { name, ...JSON.parse(p.stdout.trim()) };
  });
  console.log(`index build of ${n} domains (1 posting each), files written to disk as the merger writes them:`);
  for (const g of got) {
    console.log(`  ${g.name.padEnd(28)} ${String(g.shards).padStart(3)} shards  peak RSS +${g.growthMiB.toFixed(0).padStart(4)} MiB (×${(g.growthMiB / got[0].growthMiB).toFixed(2)})  ${(g.ms / 1000).toFixed(2)} s (×${(g.ms / got[0].ms).toFixed(2)})`);
  }
}
