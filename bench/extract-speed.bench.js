'use strict';
// Extraction speed as #25 asks it to be measured: ccpipe's extractDocument against stock Readability.js on linkedom
// (the same DOM library, Readability as published, `textContent`), on both page sets of ../shared/corpus:
//  - the 181 pages of the scrapinghub article-extraction benchmark;
//  - the trafilatura evaluation pages, the first BENCH_TRAF_PAGES (default 200) by file name.
// Each pass is a process of its own (no JIT or heap state shared), the two sides alternated (A B, then B A, ...),
// BENCH_ROUNDS rounds (default 5); per side and set the median of docs per CPU-second and of docs/s wall, and the
// ratio of the medians. Every pass extracts 20 pages first, untimed (warm-up), then all of its set. ccpipe's passes
// also count pages that went to jsdom (no explicit html/body, or linkedom threw). The load average is printed before
// and after. Needs `npx tsc -b` first.
//   node bench/extract-speed.bench.js            env: BENCH_ROUNDS, BENCH_TRAF_PAGES
const { readFileSync, readdirSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { gunzipSync } = require('node:zlib');
const { spawnSync } = require('node:child_process');
const { loadavg } = require('node:os');
const { median, loadAvg: la } = require('./lib/proc');

const CORPUS = resolve(__dirname, '../../shared/corpus');
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const TRAF_PAGES = Number(process.env.BENCH_TRAF_PAGES || 200);
const SETS = ['articles', 'trafilatura'];
const SIDES = ['ccpipe', 'stock'];

/** A page set: [{url, html}]. */
function pagesOf(set) {
  if (set === 'articles') {
    const dir = join(CORPUS, 'scrapinghub-article-extraction-benchmark');
    const gt = JSON.parse(readFileSync(join(dir, 'ground-truth.json'), 'utf8'));
    return Object.keys(gt).sort().map((id) => ({ url: gt[id].url, html: gunzipSync(readFileSync(join(dir, 'html', `${id}.html.gz`))).toString('utf8') }));
  }
  const dir = join(CORPUS, 'adbar-trafilatura-eval');
  const urlOf = new Map(
    readFileSync(join(dir, 'source_paths.tsv'), 'utf8').split('\n').slice(1).filter(Boolean).map((l) => l.split('\t')).map(([u, f]) => [f.replace(/^eval\//, ''), u]),
  );
  return readdirSync(join(dir, 'eval')).sort().slice(0, TRAF_PAGES).map((f) => ({
    url: /^https?:/.test(urlOf.get(f) ?? '') ? urlOf.get(f) : 'https://example.com/page.html',
    html: gunzipSync(readFileSync(join(dir, 'eval', f))).toString('utf8'),
  }));
}

/** One timed pass in this process: `side` over `set`. */
function pass(side, set) {
  const pages = pagesOf(set);
  let run;
  let fellBack = 0;
  if (side === 'ccpipe') {
    const { extractDocument } = require('@ccpipe/core');
    run = (p) => {
      const r = extractDocument(p.html, { url: p.url });
      if (r.dom !== 'linkedom') fellBack++;
    };
  } else {
    const { Readability } = require('@mozilla/readability');
    const { parseHTML } = require('linkedom');
    run = (p) => {
      try {
        new Readability(parseHTML(p.html).document).parse();
      } catch {
        // counted as done: the work was spent
      }
    };
  }
  for (const p of pages.slice(0, 20)) run(p);
  fellBack = 0;
  global.gc?.();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const p of pages) run(p);
  const wallS = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { docs: pages.length, cpuS: (c.user + c.system) / 1e6, wallS, fellBack };
}


function main() {
  console.log(`extraction speed, ccpipe vs stock Readability.js on linkedom: ${ROUNDS} rounds, sides alternated, a process per pass; load average ${la()}`);
  const runs = {};
  for (const set of SETS) for (const side of SIDES) runs[`${side}/${set}`] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const set of SETS) {
      for (const side of round % 2 === 0 ? SIDES : [...SIDES].reverse()) {
        const p = spawnSync(process.execPath, ['--expose-gc', __filename, '--pass', side, set], { encoding: 'utf8', maxBuffer: 1 << 24 });
        if (p.status !== 0) throw new Error(`pass ${side}/${set} failed: ${p.stderr}`);
        const r = JSON.parse(p.stdout.trim().split('\n').pop());
        runs[`${side}/${set}`].push(r);
        console.log(`round ${round + 1} ${side.padEnd(6)} ${set.padEnd(11)} ${r.docs} docs: ${(r.docs / r.cpuS).toFixed(1)} docs/CPU-s, ${(r.docs / r.wallS).toFixed(1)} docs/s wall${side === 'ccpipe' ? `, ${r.fellBack} to jsdom` : ''}; load ${loadavg()[0].toFixed(2)}`);
      }
    }
  }
  for (const set of SETS) {
    const m = (side, f) => median(runs[`${side}/${set}`].map(f));
    const [oc, sc] = [m('ccpipe', (r) => r.docs / r.cpuS), m('stock', (r) => r.docs / r.cpuS)];
    const [ow, sw] = [m('ccpipe', (r) => r.docs / r.wallS), m('stock', (r) => r.docs / r.wallS)];
    console.log(`${set}: ccpipe ${oc.toFixed(1)} docs/CPU-s (${ow.toFixed(1)} wall), stock ${sc.toFixed(1)} (${sw.toFixed(1)} wall): ${(oc / sc).toFixed(2)}× per CPU-s, ${(ow / sw).toFixed(2)}× wall (goal ≥ 2×); pages to jsdom per pass ${median(runs[`ccpipe/${set}`].map((r) => r.fellBack))}`);
  }
  console.log(`load average after: ${la()}`);
}

if (process.argv[2] === '--pass') console.log(JSON.stringify(pass(process.argv[3], process.argv[4])));
else main();
