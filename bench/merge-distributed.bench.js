'use strict';
// Merge across machines (issue #23, docs/merge-tasks.md): one merge of a delta of synthetic captures (bench/merge.bench.js's
// generator: the worker's schema and order), three ways, each round on a fresh copy of the same parts, sides alternated:
//   single  the one-process merge (`runMerge`, no tasks)
//   dist-1  the coordinator (`runMerge` with the queue task runner of `ccpipe merge --distribute`) + 1 `ccpipe merge-worker`
//   dist-2  the same with 2 merge-workers
// Every DuckDB runs one thread. Reported: medians of wall seconds (the coordinator's, start to published) and CPU
// seconds (coordinator + merge-workers, from /proc), load average. Goals: dist-2 wall ≤ 0.6 × dist-1 wall; the
// distributed CPU ≤ 1.1 × single's. Needs RabbitMQ on 127.0.0.1:5672.
//   node bench/merge-distributed.bench.js [rows=1000000] [--rounds 3] [--pass-rows 250000] [--search false] [--kinds single,dist-1,dist-2]
//     [--worker-memory SIZE] [--pair-floor]  each round also measures the machine's own floor: task-sized DuckDB work
//     alone and in two processes at once (--kinds none: that alone)
const { cpSync, mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { childOf, median, loadAvg } = require('./lib/proc');

const RABBITMQ = 'amqp://guest:guest@127.0.0.1:5672';
const { MERGE_WORKER_MEMORY_LIMIT } = require('../packages/cli/dist/commands/merge-worker');
const CCPIPE = join(__dirname, '..', 'packages', 'cli', 'bin', 'ccpipe.js');
const TICKS = 100; // USER_HZ

/** CPU seconds of a live process so far (utime + stime, /proc/<pid>/stat). */
function cpuOf(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / TICKS;
}

async function coordinate(dir, prefix, passRows, search) {
  const { runMerge } = require('@ccpipe/index');
  const { FsObjectStore, createLogger } = require('@ccpipe/adapters');
  const { loadConfig } = require('@ccpipe/core');
  const { distributedTaskRunner } = require('../packages/cli/dist/commands/merge-worker');
  const store = new FsObjectStore({ root: dir });
  const phases = {};
  const phaseCpu = {};
  let cpuAt = process.cpuUsage();
  // each phase's wall time (the merge's own report) and the coordinator's CPU seconds since the previous report
  const onPhase = (name, ms) => {
    phases[name] = (phases[name] ?? 0) + ms / 1000;
    const c = process.cpuUsage(cpuAt);
    cpuAt = process.cpuUsage();
    phaseCpu[name] = (phaseCpu[name] ?? 0) + (c.user + c.system) / 1e6;
  };
  const opts = { store, dataDir: dir, rowGroupSize: 8192, keepVersions: 2, graceMs: 0, passRows: Number(passRows), search: search !== 'false', onPhase };
  if (prefix !== '-') {
    const config = loadConfig({}, { rabbitmqUrl: RABBITMQ, queuePrefix: prefix, logLevel: 'silent' });
    opts.tasks = distributedTaskRunner(config, store, createLogger({ service: 'bench', level: 'silent' }));
  }
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const r = await runMerge(opts);
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ wall: Number(process.hrtime.bigint() - t0) / 1e9, cpu: (cpu.user + cpu.system) / 1e6, rowsIn: r.rowsIn, files: r.rewrittenFiles, phases, phaseCpu }));
}

function startWorkers(n, dir, prefix, workerMemory) {
  return Array.from({ length: n }, () => {
    const p = spawn(process.execPath, [CCPIPE, 'merge-worker', '--data', dir, '--queue-prefix', prefix, '--metrics-port', '0', '--log-level', 'warn', '--rabbitmq', RABBITMQ, ...(workerMemory === '' ? [] : ['--memory-limit', workerMemory])], { stdio: ['ignore', 'ignore', 'inherit'] });
    return p;
  });
}

async function mainParent() {
  const args = process.argv.slice(2);
  const flag = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
  const rows = Number(args.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
  const rounds = Number(flag('--rounds', 3));
  const passRows = Number(flag('--pass-rows', 250_000));
  // --search false: no search shards (a merge-worker then runs one thread, DuckDB's; with them, a shard-build thread too)
  const search = flag('--search', 'true');
  // --worker-memory 256MB: the merge-workers' --memory-limit (default: theirs)
  const workerMemory = flag('--worker-memory', '');
  const root = mkdtempSync(join(tmpdir(), 'ccpipe-bench-mdist-'));
  const child = childOf(__filename);
  try {
    const parts = join(root, 'parts');
    const gen = spawnSync(process.execPath, [join(__dirname, 'merge.bench.js'), 'gen', parts, String(rows), '0', '1'], { stdio: 'inherit' });
    if (gen.status !== 0) throw new Error('generating the parts failed');
    console.log(`${rows} rows of synthetic captures, ${rounds} rounds, groups of ${passRows} rows, search shards ${search === 'false' ? 'off' : 'on'}; load before: ${loadAvg()}`);
    // --kinds dist-1,dist-2: a subset of the sides (the ratios need the sides they divide)
    // --kinds none: the pair floor only
    const kinds = flag('--kinds', 'single,dist-1,dist-2').split(',').filter((k) => k !== 'none');
    if (kinds.some((k) => !['single', 'dist-1', 'dist-2'].includes(k))) throw new Error('--kinds: a list of single, dist-1, dist-2');
    const got = Object.fromEntries(kinds.map((k) => [k, []]));
    const pair = args.includes('--pair-floor') ? { alone: [], paired: [] } : null;
    for (let r = 0; r < rounds; r++) {
      if (pair !== null) await pairRound(parts, r % 2 === 0 ? [1, 2] : [2, 1], workerMemory === '' ? MERGE_WORKER_MEMORY_LIMIT : workerMemory, pair);
      for (const kind of r % 2 === 0 ? kinds : [...kinds].reverse()) {
        const dir = join(root, `run-${r}-${kind}`);
        cpSync(parts, dir, { recursive: true });
        if (kind === 'single') {
          got[kind].push(child(['--coord', dir, '-', String(passRows), search]));
        } else {
          const prefix = `ccpipe-bench-${randomBytes(3).toString('hex')}`;
          const workers = startWorkers(kind === 'dist-1' ? 1 : 2, dir, prefix, workerMemory);
          await new Promise((res) => setTimeout(res, 1500)); // subscribed
          const before = workers.map((w) => cpuOf(w.pid));
          const c = await new Promise((resolve, reject) => {
            const p = spawn(process.execPath, [__filename, '--coord', dir, prefix, String(passRows), search], { stdio: ['ignore', 'pipe', 'inherit'] });
            let out = '';
            p.stdout.on('data', (d) => (out += d));
            p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`coordinator exited ${code}`))));
          });
          const workerCpu = workers.reduce((s, w, i) => s + cpuOf(w.pid) - before[i], 0);
          for (const w of workers) w.kill('SIGTERM');
          await Promise.all(workers.map((w) => new Promise((res) => w.on('exit', res))));
          got[kind].push({ ...c, coordinatorCpu: c.cpu, cpu: c.cpu + workerCpu });
        }
        rmSync(dir, { recursive: true, force: true });
      }
    }
    const m = (k, f) => median(got[k].map(f));
    if (pair !== null) {
      const pm = (xs, f) => median(xs.map(f));
      console.log(`  pair floor: task-sized DuckDB work alone wall ${pm(pair.alone, (x) => x.wall).toFixed(2)} s (cpu ${pm(pair.alone, (x) => x.cpu).toFixed(2)}); two processes at once, each ${pm(pair.paired, (x) => x.wall).toFixed(2)} s (cpu ${pm(pair.paired, (x) => x.cpu).toFixed(2)})`);
      console.log(`  → two merge-workers' tasks can take no less than ${(pm(pair.paired, (x) => x.wall) / (2 * pm(pair.alone, (x) => x.wall))).toFixed(3)} of one's on this machine in these rounds`);
    }
    for (const k of kinds) {
      console.log(`  ${k.padEnd(7)} wall ${m(k, (x) => x.wall).toFixed(2)} s  cpu ${m(k, (x) => x.cpu).toFixed(2)} s${k === 'single' ? '' : `  (coordinator ${m(k, (x) => x.coordinatorCpu).toFixed(2)} s)`}  rows ${got[k][0].rowsIn}  files ${got[k][0].files}`);
    }
    const names = [...new Set(kinds.flatMap((k) => got[k].flatMap((x) => Object.keys(x.phases))))];
    console.log(`  coordinator's phases, median wall seconds: ${names.join(', ')}`);
    for (const k of kinds) console.log(`  ${k.padEnd(7)} ${names.map((n) => m(k, (x) => x.phases[n] ?? 0).toFixed(2)).join('  ')}`);
    console.log(`  the coordinator's CPU seconds in each phase (median; orderings, links and search run inside index):`);
    for (const k of kinds) console.log(`  ${k.padEnd(7)} ${names.map((n) => m(k, (x) => x.phaseCpu?.[n] ?? 0).toFixed(2)).join('  ')}`);
    if (got['dist-1'] && got['dist-2']) console.log(`dist-2 / dist-1 wall: ${(m('dist-2', (x) => x.wall) / m('dist-1', (x) => x.wall)).toFixed(3)}  (goal ≤ 0.6)`);
    if (got['dist-1'] && got.single) console.log(`dist-1 CPU / single CPU: ${(m('dist-1', (x) => x.cpu) / m('single', (x) => x.cpu)).toFixed(3)}  (goal ≤ 1.1)`);
    console.log(`load after: ${loadAvg()}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * One process's share of the pair floor (--pair-floor): in a DuckDB opened as a merge task opens its own (openDuck: one
 * thread, the merge-workers' memory limit, spill in `dir`), the rows of `files` read, sorted by domain and URL and
 * written as zstd Parquet — a lake task's kind of work. Prints its wall and CPU seconds.
 */
async function pairChild(dir, memoryLimit, files) {
  const { openDuck, sqlList, sqlString } = require('../packages/index/dist/duck');
  const db = await openDuck({ memoryLimit, tempDir: join(dir, 'spill') });
  const conn = await db.connect();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await conn.run(`COPY (SELECT * FROM read_parquet(${sqlList(files)}) ORDER BY domain, url) TO ${sqlString(join(dir, 'out.parquet'))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 8192)`);
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ wall: Number(process.hrtime.bigint() - t0) / 1e9, cpu: (cpu.user + cpu.system) / 1e6 }));
  conn.closeSync();
  db.closeSync();
}

/**
 * One round of the machine's own floor for two merge-workers: the same task-sized DuckDB work (pairChild over 500k of
 * the parts' rows) in one process alone, and in two processes at once, in the order `order`. Two merge-workers can
 * finish their tasks in no less than `paired / (2 × alone)` of one merge-worker's time, whatever the coordinator does;
 * measured in every round beside the merges, since it moves with the machine's neighbours.
 */
async function pairRound(parts, order, memoryLimit, into) {
  const { readdirSync } = require('node:fs');
  const files = readdirSync(join(parts, 'batches', 'dataset_id=1')).sort().map((d) => join(parts, 'batches', 'dataset_id=1', d, 'part.parquet'));
  const per = 10; // the generator's parts hold 50k rows each
  const run = (n) => Promise.all(Array.from({ length: n }, (_, i) => new Promise((resolve, reject) => {
    const dir = mkdtempSync(join(tmpdir(), 'ccpipe-bench-pair-'));
    const p = spawn(process.execPath, [__filename, '--pair-child', dir, memoryLimit, ...files.slice(i * per, (i + 1) * per)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('exit', (code) => {
      rmSync(dir, { recursive: true, force: true });
      if (code === 0) resolve(JSON.parse(out.trim().split('\n').pop()));
      else reject(new Error(`pair child exited ${code}`));
    });
  })));
  for (const n of order) {
    const got = await run(n);
    into[n === 1 ? 'alone' : 'paired'].push(...got);
  }
}

if (process.argv[2] === '--pair-child') pairChild(process.argv[3], process.argv[4], process.argv.slice(5)).catch((e) => { console.error(e); process.exit(1); });
else if (process.argv[2] === '--coord') coordinate(process.argv[3], process.argv[4], process.argv[5], process.argv[6]).catch((e) => { console.error(e); process.exit(1); });
else mainParent().catch((e) => { console.error(e); process.exitCode = 1; });
