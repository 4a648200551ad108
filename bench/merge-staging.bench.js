'use strict';
// The merge's staging of wide new rows (docs/index-format.md, stop 29): the same parts — BENCH_ROWS pages (default
// 200,000) with six real paragraphs of text and ≈ 28 outlinks each, made by bench/links.bench.js --generate — merged
// at --memory-limit 256MB (staged in passes of partitions: one sort of them all fails there) and at 1GB (one sort),
// alternated, BENCH_ROUNDS rounds (default 3), each merge a process of its own: wall, CPU and peak RSS medians, the
// load average before and after. Link graph and search shards off: the staging is what differs.
//   node bench/merge-staging.bench.js [rows]
const { spawnSync } = require('node:child_process');
const { cpSync, mkdtempSync, rmSync } = require('node:fs');
const { tmpdir, loadavg } = require('node:os');
const { join } = require('node:path');
const { median, loadAvg: la } = require('./lib/proc');

const ROWS = Number(process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : (process.env.BENCH_ROWS ?? 200_000));
const ROUNDS = Number(process.env.BENCH_ROUNDS || 3);
const LIMITS = ['256MB', '1GB'];

async function merge(dir, memoryLimit) {
  const { runMerge } = require('@ccpipe/index');
  const { FsObjectStore } = require('@ccpipe/adapters');
  const phases = {};
  const c0 = process.cpuUsage();
  const t0 = Date.now();
  await runMerge({
    store: new FsObjectStore({ root: dir }), dataDir: dir, rowGroupSize: 8192, keepVersions: 2, graceMs: 0, memoryLimit, links: false, search: false,
    onPhase: (p, ms) => (phases[p] = ms),
  });
  const c = process.cpuUsage(c0);
  return { wallS: (Date.now() - t0) / 1000, cpuS: (c.user + c.system) / 1e6, domainsS: phases.domains / 1000 };
}

function main() {
  console.log(`merge staging bench: ${ROWS} pages, ${ROUNDS} rounds of ${LIMITS.join(' / ')} alternated; load average ${la()}`);
  const root = mkdtempSync(join(tmpdir(), 'ccpipe-staging-bench-'));
  try {
    const parts = join(root, 'parts');
    const g = spawnSync(process.execPath, [join(__dirname, 'links.bench.js'), '--generate', parts], { encoding: 'utf8', env: { ...process.env, BENCH_ROWS: String(ROWS) } });
    if (g.status !== 0) throw new Error(`generate failed: ${g.stderr}`);
    const runs = Object.fromEntries(LIMITS.map((l) => [l, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const limit of round % 2 === 0 ? LIMITS : [...LIMITS].reverse()) {
        const d = join(root, `m-${limit}-${round}`);
        cpSync(parts, d, { recursive: true });
        // /usr/bin/time would need a package: the child reports its own peak RSS (maxRSS, KiB)
        const p = spawnSync(process.execPath, [__filename, '--merge', d, limit], { encoding: 'utf8', maxBuffer: 1 << 24 });
        rmSync(d, { recursive: true, force: true });
        if (p.status !== 0) throw new Error(`merge at ${limit} failed: ${p.stderr.slice(-2000)}`);
        const r = JSON.parse(p.stdout.trim().split('\n').pop());
        runs[limit].push(r);
        console.log(`round ${round + 1} ${limit.padEnd(5)}: wall ${r.wallS.toFixed(1)} s, CPU ${r.cpuS.toFixed(1)} s, staging phase ${r.domainsS.toFixed(1)} s, peak RSS ${r.rssMiB} MiB; load ${loadavg()[0].toFixed(2)}`);
      }
    }
    for (const l of LIMITS) {
      const rs = runs[l];
      console.log(`${l}: medians wall ${median(rs.map((r) => r.wallS)).toFixed(1)} s, CPU ${median(rs.map((r) => r.cpuS)).toFixed(1)} s, staging ${median(rs.map((r) => r.domainsS)).toFixed(1)} s, peak RSS ${median(rs.map((r) => r.rssMiB))} MiB`);
    }
    const ratio = (f) => (median(runs['256MB'].map(f)) / median(runs['1GB'].map(f))).toFixed(2);
    console.log(`256MB in passes / 1GB in one sort: wall ${ratio((r) => r.wallS)}×, CPU ${ratio((r) => r.cpuS)}×, peak RSS ${ratio((r) => r.rssMiB)}×; load average after ${la()}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--merge') {
  merge(process.argv[3], process.argv[4]).then((r) => console.log(JSON.stringify({ ...r, rssMiB: Math.round(process.resourceUsage().maxRSS / 1024) })), (err) => {
    console.error(err);
    process.exit(1);
  });
} else main();
