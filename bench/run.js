#!/usr/bin/env node
'use strict';
// `npm run bench [-- name...]`: runs each bench/*.bench.js in its own process, one after another,
// so one benchmark's heap and JIT state never colour another's figures. Benchmarks report ratios
// measured in the same run (e.g. parse+filter vs inflate-only); absolute figures vary with the machine.
const { readdirSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');

const only = process.argv.slice(2);
const files = readdirSync(__dirname)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
let failed = 0;
for (const f of files) {
  console.log(`\n### ${f}`);
  const r = spawnSync(process.execPath, ['--expose-gc', join(__dirname, f)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
if (files.length === 0) console.log('no benchmarks matched');
process.exitCode = failed ? 1 : 0;
