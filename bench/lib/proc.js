'use strict';
// What the benchmarks share: a benchmark re-running its own file as a child process (one measurement per process, so
// no heap or JIT state carries over), an API over a lake in a child process, and the statistics they report.
const { spawnSync } = require('node:child_process');
const { readdirSync, readFileSync } = require('node:fs');
const { loadavg } = require('node:os');

/**
 * `child(args)` runs `file` again with `args` in a process of its own and returns the JSON of its last stdout line
 * (null when it printed nothing). @throws when the child exits non-zero (its stderr in the message)
 */
function childOf(file, opts = {}) {
  return (args) => {
    const p = spawnSync(process.execPath, [file, ...args], { encoding: 'utf8', maxBuffer: 1 << 26, ...opts });
    if (p.status !== 0) throw new Error(`child ${args[0]} failed: ${p.stderr}`);
    return p.stdout.trim() ? JSON.parse(p.stdout.trim().split('\n').pop()) : null;
  };
}

/**
 * In a forked child: serves the lake at `dir` over HTTP (a warmed-up index source, as `ccpipe api` opens it), sends
 * `{url}` to the parent, and closes when the parent sends any message.
 */
async function serveLake(dir) {
  const { openIndexSource } = require('@ccpipe/index');
  const { startApi } = require('@ccpipe/api');
  const { FsObjectStore } = require('@ccpipe/adapters');
  const source = await openIndexSource({ store: new FsObjectStore({ root: dir }), pollMs: 0, warmUp: true });
  const api = await startApi({ source, port: 0 });
  process.send({ url: api.url });
  process.on('message', async () => {
    await api.close();
    await source.close();
    process.exit(0);
  });
}

/** The p-th percentile (nearest rank) of `xs`; NaN for none. */
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)];
};
const median = (xs) => pct(xs, 50);
/** Latencies in ms as `p50 …, p99 … (n=…)`. */
const latencies = (xs) => `p50 ${pct(xs, 50).toFixed(2)} ms, p99 ${pct(xs, 99).toFixed(2)} ms (n=${xs.length})`;
/** The load average, three figures. */
const loadAvg = () => loadavg().map((x) => x.toFixed(2)).join(' ');

/** One GET of a JSON answer: its time in ms and body. @throws on a status other than 200 */
async function timed(url) {
  const t = process.hrtime.bigint();
  const res = await fetch(url);
  const body = await res.json();
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body).slice(0, 200)} for ${url}`);
  return { ms: Number(process.hrtime.bigint() - t) / 1e6, body };
}

/**
 * CPU seconds (user + system) so far of each live thread of process `pid` (Linux /proc; clock ticks at 100 Hz), split
 * into its main thread (tid = pid) and the others (worker threads, V8's and libuv's pools). Threads that have ended are
 * in neither (their time is in the process's total). Null where /proc is missing.
 */
function threadCpu(pid) {
  let tids;
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const threads = [];
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      threads.push({ tid: Number(tid), cpu: (Number(f[11]) + Number(f[12])) / 100 });
    } catch {
      // the thread ended meanwhile
    }
  }
  const main = threads.find((t) => t.tid === Number(pid))?.cpu ?? 0;
  return { main, others: threads.reduce((s, t) => s + t.cpu, 0) - main, threads: threads.sort((a, b) => b.cpu - a.cpu) };
}

module.exports = { childOf, serveLake, pct, median, latencies, loadAvg, timed, threadCpu };
