'use strict';
// Preloaded into a benchmark's child (`node -r bench/lib/exit-usage.js prog …`): when the process exits, writes its
// own CPU (user, system: every thread, DuckDB's too), wall since process start and peak RSS (getrusage maxrss, as
// /proc VmHWM and /usr/bin/time %M say it) as JSON to $BENCH_USAGE_FILE. The program runs unchanged — a real CLI
// measured as a whole process without /usr/bin/time, which not every machine has. With $BENCH_MEM_SAMPLE_MS it also
// samples process.memoryUsage() that often ([ms, rss, heapTotal, heapUsed, external, arrayBuffers], bytes), to tell
// the V8 heap from native memory; the interval is unref'd and costs microseconds a sample.
const { writeFileSync } = require('node:fs');

const file = process.env.BENCH_USAGE_FILE;
const every = Number(process.env.BENCH_MEM_SAMPLE_MS || 0);
const samples = [];
if (file) {
  if (every > 0) {
    setInterval(() => {
      const m = process.memoryUsage();
      samples.push([Math.round(performance.now()), m.rss, m.heapTotal, m.heapUsed, m.external, m.arrayBuffers]);
    }, every).unref();
  }
  process.on('exit', (code) => {
    const u = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ code, wallS: performance.now() / 1000, userS: u.userCPUTime / 1e6, sysS: u.systemCPUTime / 1e6, maxRssKiB: u.maxRSS, samples }));
  });
}
