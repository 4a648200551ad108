'use strict';
// Memory of extraction threads (#25 goal 5: ≤ 256 MiB RSS per extraction thread on the corpus pages). RSS belongs to
// a process, not a thread, so each run is a process of its own that holds only the pages (gzipped) and an
// ExtractionPool of SIZE threads, extracts all 1,171 corpus pages (the 181 of the scrapinghub benchmark and the 990
// of trafilatura's evaluation, 2 × SIZE in flight as a batch worker keeps them), and samples its RSS every 10 ms.
// Printed per run: RSS before the pool starts (Node, the modules, the pages), the peak, and the peak above the
// baseline per thread; the thread's share is that increase. Sizes 1 and 2 alternate, BENCH_ROUNDS rounds (default 3),
// medians; the load average with each figure. Needs `npx tsc -b` first.
//   node bench/extract-memory.bench.js            env: BENCH_ROUNDS
const { readFileSync, readdirSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { gunzipSync } = require('node:zlib');
const { spawnSync } = require('node:child_process');
const { median, loadAvg } = require('./lib/proc');

const CORPUS = resolve(__dirname, '../../shared/corpus');
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const SIZES = [1, 2];
const MIB = 1024 * 1024;

/** Every corpus page, gzipped as stored: [{url, gz}]. */
function pages() {
  const sh = join(CORPUS, 'scrapinghub-article-extraction-benchmark');
  const gt = JSON.parse(readFileSync(join(sh, 'ground-truth.json'), 'utf8'));
  const te = join(CORPUS, 'adbar-trafilatura-eval');
  return [
    ...Object.keys(gt).sort().map((id) => ({ url: gt[id].url, gz: readFileSync(join(sh, 'html', `${id}.html.gz`)) })),
    ...readdirSync(join(te, 'eval')).sort().map((f) => ({ url: 'https://example.com/page.html', gz: readFileSync(join(te, 'eval', f)) })),
  ];
}

async function run(size) {
  const { ExtractionPool } = require('@ccpipe/adapters/dist/extract-pool.js');
  const all = pages();
  global.gc?.();
  const baseRss = process.memoryUsage().rss;
  let peakRss = baseRss;
  const timer = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 10);
  const pool = new ExtractionPool({ size, timeoutMs: 60_000 });
  await pool.start();
  let failed = 0;
  const t0 = performance.now();
  try {
    let next = 0;
    const lane = async () => {
      while (next < all.length) {
        const p = all[next++];
        try {
          await pool.extract(gunzipSync(p.gz).toString('utf8'), p.url);
        } catch {
          failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: 2 * size }, lane));
  } finally {
    await pool.close();
    clearInterval(timer);
  }
  return { size, docs: all.length, failed, wallS: (performance.now() - t0) / 1000, baseRss, peakRss };
}

function main() {
  console.log(`extraction memory: all corpus pages through an ExtractionPool, a process per run, ${ROUNDS} rounds; load average ${loadAvg()}`);
  const runs = Object.fromEntries(SIZES.map((s) => [s, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const size of round % 2 === 0 ? SIZES : [...SIZES].reverse()) {
      const p = spawnSync(process.execPath, ['--expose-gc', __filename, '--run', String(size)], { encoding: 'utf8', maxBuffer: 1 << 24 });
      if (p.status !== 0) throw new Error(`run of ${size} failed: ${p.stderr}`);
      const r = JSON.parse(p.stdout.trim().split('\n').pop());
      runs[size].push(r);
      const perThread = (r.peakRss - r.baseRss) / size / MIB;
      console.log(`round ${round + 1} ${size} thread(s): ${r.docs} docs (${r.failed} failed) in ${r.wallS.toFixed(1)} s; RSS before the pool ${(r.baseRss / MIB).toFixed(0)} MiB, peak ${(r.peakRss / MIB).toFixed(0)} MiB, ${perThread.toFixed(0)} MiB per thread above it; load ${loadAvg()}`);
    }
  }
  for (const size of SIZES) {
    const rs = runs[size];
    const per = median(rs.map((r) => (r.peakRss - r.baseRss) / size / MIB));
    console.log(`${size} thread(s): peak RSS ${median(rs.map((r) => r.peakRss / MIB)).toFixed(0)} MiB (process), ${per.toFixed(0)} MiB per extraction thread above the process before the pool (goal ≤ 256 MiB)`);
  }
  console.log(`load average after: ${loadAvg()}`);
}

if (process.argv[2] === '--run') {
  run(Number(process.argv[3])).then((r) => console.log(JSON.stringify(r)), (err) => {
    console.error(err);
    process.exitCode = 1;
  });
} else main();
