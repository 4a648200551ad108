#!/usr/bin/env node
'use strict';
/**
 * Writes the bundled sample crawl: `node samples/generate-sample.js [OUT]` (default ./sample-mirror) builds both
 * sample crawls (SAMPLE-2030-01, SAMPLE-2030-02) in Common Crawl's layout under OUT; `--warcs-only DIR` writes just
 * the WARC files. Deterministic: the same bytes on every run. `ccpipe run` does the same into <data>/sample-mirror.
 * Needs the build (`npx tsc -b`). The pages are synthetic text written for ccpipe (see docs/embedded.md).
 */
const path = require('node:path');
const { ensureSampleMirror, writeSampleWarcs } = require('../packages/cli/dist/run/sample/sample-mirror.js');

async function main(argv) {
  if (argv[0] === '--warcs-only') {
    const out = path.resolve(argv[1] ?? 'sample-warcs');
    for (const { crawl, warcs } of await writeSampleWarcs(out)) console.log(`${crawl}: ${warcs.map((w) => path.relative(out, w)).join(' ')}`);
    return;
  }
  const out = path.resolve(argv[0] ?? 'sample-mirror');
  const m = await ensureSampleMirror(out);
  if (!m.built) console.log(`${out} already holds the current sample`);
  for (const s of m.summaries) console.log(`${s.crawl}: ${s.records} WARC records, ${s.cdxLines} CDX lines, ${s.blocks} blocks, ${s.shards} shards`);
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err && err.stack ? err.stack : err);
  process.exitCode = 1;
});
