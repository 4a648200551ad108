'use strict';
// CDX hot path as #25 asks it to be measured: inflate + parse + filter + the copy into batch records, against inflate
// alone, on the SAME 3,000-line ZipNum blocks.
//
// Input: the real CDX lines of ../shared/corpus (cdx_toolkit's 1,140-line cdx-00187 excerpt of CC-MAIN-2024-30,
// preciz's 100 + 1,285 CC-MAIN-2021-43 lines), sorted, then REPEATED in that order to fill the blocks: block k holds
// lines k·3000 … k·3000+2999 of the endless cycle, so no line repeats within deflate's 32 KB window and a block
// compresses like a real one (≈8:1). Each block is one gzip member (writeZipNumShard, level 6), built at each run
// and written to a temp file the processes read; nothing is copied into the repo.
//
// Sides, each pass a process of its own (no heap or JIT state carried over), alternated (A B C D E, then E D C B A, …):
//  A  inflate: inflateCdxBlock on each block (the library's inflate, faster than gunzipSync's defaults);
//  B  batcher: the batcher's own per-block step, keptRecords (packages/batcher, both its modes call it: inflate,
//     parse, targets, filter, copy into batch records; the filter's line gate drops most lines before their record is
//     made), with the filter built as the batcher builds it
//     (compileFilter(filterSpecOf(loadConfig({}))) with registeredDomainOf: status 200, English);
//  C  json: the obvious alternative to the scanner: inflate, decode, JSON.parse per line into the same record, the
//     same filter and the same copy, in a plain loop;
//  D  floor: inflate (as B does, E), the same line gate on value positions found before timing, the same records for the lines it
//     lets through, the same filter and copy: what the batcher's way must still spend with no scan at all (see below).
//  E  inflate the batcher's way: each block inflated straight into the line scan's WebAssembly memory, as B's
//     parseCdxBlock does (BlockLineScan.inflate, no Buffer made per block, no copy), and nothing else. A makes a new
//     Buffer per block, and that allocation costs A more than the parse costs B (docs/cdx.md, Figures): B/E is what
//     the parse, filter and copy cost over the same inflate.
// An untimed check first makes sure C and D hand over exactly B's batch records.
// In each process: one warm-up pass over the blocks, then `--reps` timed passes; CPU (user + system, every thread:
// GC helpers count) and wall seconds of the timed passes only. Medians over `--rounds` rounds; the ratio is
// records/s of B over records/s of A, on CPU time and on wall time. Goal (#25): ≥ 0.7.
//   node bench/cdx.bench.js [--rounds N (5)] [--reps N (10)] [--blocks N (10)]
//   node bench/cdx.bench.js --child A|B|C|D [--reps N] [--blocks N]   one process's passes, JSON out (for node --cpu-prof)
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { gunzipSync } = require('node:zlib');
const { childOf, median, loadAvg } = require('./lib/proc');

const CORPUS = join(__dirname, '..', '..', 'shared', 'corpus');
const SOURCES = ['cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187', 'preciz-common_crawl/index_snippet', 'preciz-common_crawl/api_response'];
const BLOCK_LINES = 3000;

function opts(argv) {
  const o = { rounds: 5, reps: 10, blocks: 10, shard: '' };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i].replace(/^--/, '');
    if (!(k in o)) throw new Error(`unknown flag ${argv[i]}`);
    if (k === 'shard') {
      o.shard = argv[++i];
      continue;
    }
    o[k] = Number(argv[++i]);
    if (!Number.isSafeInteger(o[k]) || o[k] < 1) throw new Error(`bad value for --${k}`);
  }
  return o;
}

/**
 * The blocks: `n` gzip members of 3,000 real lines each, cut from the sorted corpus lines repeated end to end; read
 * from `shardFile` when given (the parent writes it once: compressing them took ≈0.4 s in every process).
 */
function buildBlocks(n, shardFile = '') {
  const core = require('@ccpipe/core');
  if (shardFile) {
    const data = readFileSync(shardFile);
    const ends = JSON.parse(readFileSync(`${shardFile}.json`, 'utf8'));
    return { blocks: ends.map((e, i) => data.subarray(i === 0 ? 0 : ends[i - 1], e)) };
  }
  const lines = SOURCES.flatMap((p) => readFileSync(join(CORPUS, p), 'utf8').split('\n').filter((l) => l.length > 0)).sort();
  const cycled = Array.from({ length: n * BLOCK_LINES }, (_, i) => lines[i % lines.length]);
  const shard = core.writeZipNumShard(cycled, { shard: 'cdx-00000.gz', blockSize: BLOCK_LINES });
  return { distinct: lines.length, shard, blocks: shard.entries.map((e) => shard.data.subarray(e.offset, e.offset + e.length)) };
}

/** The filter exactly as the batcher's main builds it from the default config. */
function batcherFilter() {
  const core = require('@ccpipe/core');
  const { filterSpecOf } = require('@ccpipe/batcher');
  return core.compileFilter(filterSpecOf(core.loadConfig({})), { registeredDomainOf: core.registeredDomainOf });
}

/** Side C's parser: JSON.parse on the JSON part, the same record shape as parseCdxLine's. */
function parseLineJson(t, s, e) {
  const sp1 = t.indexOf(' ', s);
  const sp2 = t.indexOf(' ', sp1 + 1);
  const j = JSON.parse(t.slice(sp2 + 1, e));
  return {
    surt: t.slice(s, sp1), timestamp: t.slice(sp1 + 1, sp2), url: j.url, mime: j.mime, mimeDetected: j['mime-detected'],
    status: j.status, digest: j.digest, length: Number(j.length), offset: Number(j.offset), filename: j.filename,
    charset: j.charset, languages: j.languages ? j.languages.split(',') : [], redirect: j.redirect, encoding: j.encoding,
    truncated: j.truncated, extra: undefined, keyOrder: undefined,
  };
}

/** Sides C and D's copy: the batcher's own toBatchRecord. */
const { toBatchRecord } = require('@ccpipe/batcher');

// Side D, the floor of the batcher's way (#25): what any parser must still do once it knows where each value of a line
// is, when it makes records only for the lines the filter's line gate does not drop. Where is found before timing (2 +
// 2·13 numbers a line, offsets in the block: the line's end and first space, then start and end of each key's value or
// -1, as the WebAssembly scan gives them); the timed pass inflates, puts each line to the same gate, and for the lines
// it does not drop decodes the line, builds the same record, filters and copies it (and copies each row's 26 numbers
// into the array the gate reads, ≈10 ns a line). B − D is what finding the values costs (the scan).
const KEYS = ['url', 'mime', 'mime-detected', 'status', 'digest', 'length', 'offset', 'filename', 'redirect', 'charset', 'languages', 'encoding', 'truncated'];
const ROW = 2 + 2 * KEYS.length;

/** Per line of the block, a row of ROW numbers (see above), in one array. */
function valuePositions(core, block) {
  const bytes = core.inflateCdxBlock(block);
  const t = bytes.toString('latin1');
  const rows = [];
  for (let s = 0; s < t.length; ) {
    let nl = t.indexOf('\n', s);
    if (nl < 0) nl = t.length;
    const line = t.slice(s, nl);
    const sp1 = line.indexOf(' ');
    rows.push(nl, s + sp1);
    for (const k of KEYS) {
      const at = line.indexOf(`"${k}": "`, sp1);
      const vs = at >= 0 ? at + k.length + 5 : -1;
      rows.push(vs < 0 ? -1 : s + vs, vs < 0 ? -1 : s + line.indexOf('"', vs));
    }
    s = nl + 1;
  }
  return Int32Array.from(rows);
}

const valueAt = (t, vs, ve, s) => (vs < 0 ? undefined : t.slice(vs - s, ve - s));
const numberAt = (u8, vs, ve) => {
  let v = 0;
  for (let i = vs; i < ve; i++) v = v * 10 + u8[i] - 48;
  return v;
};
const LANGUAGES = new Map();
const languagesAt = (t, vs, ve, s) => {
  if (vs < 0 || vs === ve) return [];
  const v = t.slice(vs - s, ve - s);
  let list = LANGUAGES.get(v);
  if (list === undefined) LANGUAGES.set(v, (list = v.split(',')));
  return list.slice();
};

/** A block inflated as B's parseCdxBlock inflates it: into the line scan's memory (side E alone). */
let lineScan;
const inflateAsB = (block) => (lineScan ??= require('@ccpipe/core/dist/cdx/line-scan').BlockLineScan).inflate(block).bytes;

/** Side D's records of one block from its value positions (see valuePositions): only the lines the gate keeps. */
function recordsAt(core, block, r, gate, dropped) {
  const bytes = inflateAsB(block);
  const records = [];
  const at = new Int32Array(ROW - 2);
  for (let o = 0, s = 0; o < r.length; o += ROW) {
    const nl = r[o];
    for (let j = 0; j < ROW - 2; j++) at[j] = r[o + 2 + j];
    const d = gate.drop(bytes, at);
    if (d >= 0) dropped[d]++;
    else {
      const t = bytes.toString('latin1', s, nl);
      records.push({
        surt: t.slice(0, r[o + 1] - s), timestamp: t.slice(r[o + 1] + 1 - s, r[o + 1] + 15 - s), url: valueAt(t, r[o + 2], r[o + 3], s),
        mime: valueAt(t, r[o + 4], r[o + 5], s), mimeDetected: valueAt(t, r[o + 6], r[o + 7], s), status: valueAt(t, r[o + 8], r[o + 9], s),
        digest: valueAt(t, r[o + 10], r[o + 11], s), length: numberAt(bytes, r[o + 12], r[o + 13]), offset: numberAt(bytes, r[o + 14], r[o + 15]),
        filename: valueAt(t, r[o + 16], r[o + 17], s), charset: valueAt(t, r[o + 20], r[o + 21], s), languages: languagesAt(t, r[o + 22], r[o + 23], s),
        redirect: valueAt(t, r[o + 18], r[o + 19], s), encoding: valueAt(t, r[o + 24], r[o + 25], s), truncated: valueAt(t, r[o + 26], r[o + 27], s),
        extra: undefined, keyOrder: undefined,
      });
    }
    s = nl + 1;
  }
  return records;
}

/** One side's work over the blocks, as an async function of one pass returning [records, kept]. */
function sideOf(side, blocks) {
  const core = require('@ccpipe/core');
  if (side === 'A') {
    return async () => {
      for (const b of blocks) core.inflateCdxBlock(b);
      return [blocks.length * BLOCK_LINES, 0];
    };
  }
  if (side === 'E') {
    return async () => {
      for (const b of blocks) inflateAsB(b);
      return [blocks.length * BLOCK_LINES, 0];
    };
  }
  const filter = batcherFilter();
  if (side === 'C') {
    return async (sink) => {
      let records = 0;
      let kept = 0;
      for (const b of blocks) {
        const t = core.decodeCdxText(core.inflateCdxBlock(b));
        const out = [];
        for (let s = 0; s < t.length; ) {
          let e = t.indexOf('\n', s);
          if (e < 0) e = t.length;
          const rec = parseLineJson(t, s, e);
          records++;
          if (filter(rec).keep) out.push(toBatchRecord(rec));
          s = e + 1;
        }
        kept += out.length;
        sink?.push(...out);
      }
      return [records, kept];
    };
  }
  if (side === 'D') {
    const positions = blocks.map((b) => valuePositions(core, b));
    const gate = filter.lineGate;
    return async (out) => {
      let records = 0;
      let kept = 0;
      blocks.forEach((b, i) => {
        const batch = [];
        const dropped = gate.reasons.map(() => 0);
        for (const rec of recordsAt(core, b, positions[i], gate, dropped)) {
          if (filter(rec).keep) batch.push(toBatchRecord(rec));
        }
        records += positions[i].length / ROW;
        kept += batch.length;
        out?.push(...batch);
      });
      return [records, kept];
    };
  }
  // the batcher's own per-block step (both of its modes call it): parse, targets, filter, copy into batch records
  const { keptRecords, emptySummary } = require('@ccpipe/batcher');
  return async (out) => {
    const summary = emptySummary();
    let kept = 0;
    for (const b of blocks) {
      const batch = keptRecords({ targets: null, filter }, b, summary, {});
      kept += batch.length;
      out?.push(...batch);
    }
    return [summary.records, kept];
  };
}

async function child(side, o) {
  const { blocks } = buildBlocks(o.blocks, o.shard);
  const pass = sideOf(side, blocks);
  await pass(); // warm-up
  let records = 0;
  let kept = 0;
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let r = 0; r < o.reps; r++) {
    const [n, k] = await pass();
    records += n;
    kept += k;
  }
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  const c = process.cpuUsage(c0);
  return { side, records, kept, cpuS: (c.user + c.system) / 1e6, wallS, load1: require('node:os').loadavg()[0] };
}

/** Untimed: B, C and D must hand over the same batch records (C and D do the same work as the batcher). */
async function check(o) {
  const { blocks } = buildBlocks(o.blocks, o.shard);
  const out = {};
  for (const side of ['B', 'C', 'D']) await sideOf(side, blocks)((out[side] = []));
  const b = JSON.stringify(out.B);
  return { kept: out.B.length, same: { C: JSON.stringify(out.C) === b, D: JSON.stringify(out.D) === b } };
}

function main(o) {
  const { distinct, shard, blocks } = buildBlocks(o.blocks);
  const dir = mkdtempSync(join(tmpdir(), 'ccpipe-cdx-bench-'));
  const shardFile = join(dir, 'cdx-00000.gz');
  writeFileSync(shardFile, shard.data);
  writeFileSync(`${shardFile}.json`, JSON.stringify(shard.entries.map((e) => e.offset + e.length)));
  try {
    report(o, distinct, blocks, ['--blocks', String(o.blocks), '--shard', shardFile]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(o, distinct, blocks, input) {
  const gz = blocks.reduce((n, b) => n + b.length, 0);
  const raw = blocks.reduce((n, b) => n + gunzipSync(b).length, 0);
  console.log(`cdx bench (#25): ${o.blocks} blocks of ${BLOCK_LINES} lines cut from ${distinct} real corpus lines repeated in sorted order, one gzip member each: ${(gz / 1e6).toFixed(2)} MB gz → ${(raw / 1e6).toFixed(2)} MB (${(raw / gz).toFixed(1)}:1, ${Math.round(gz / o.blocks / 1000)} KB a block); ${o.reps} timed passes per process after one warm-up; ${o.rounds} rounds of A B C D E alternated; load average ${loadAvg()}`);
  const run = childOf(__filename);
  const checked = run(['--child', 'check', ...input]);
  if (!checked.same.C || !checked.same.D) throw new Error(`C or D does not give the batcher's batch records: ${JSON.stringify(checked)}`);
  const sides = ['A', 'B', 'C', 'D', 'E'];
  const names = { A: 'A inflate only', B: 'B batcher: inflate+parse+filter+copy', C: 'C JSON.parse per line', D: 'D floor: positions known, gate', E: 'E inflate into the scan\'s memory' };
  const runs = { A: [], B: [], C: [], D: [], E: [] };
  for (let round = 0; round < o.rounds; round++) {
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      const r = run(['--child', side, '--reps', String(o.reps), ...input]);
      runs[side].push(r);
      console.log(`round ${round + 1} ${side}: ${r.cpuS.toFixed(3)} CPU-s, ${r.wallS.toFixed(3)} s wall, ${(r.records / r.cpuS / 1e6).toFixed(2)} M rec/CPU-s, ${(r.records / r.wallS / 1e6).toFixed(2)} M rec/s wall${r.side !== 'A' && r.side !== 'E' ? `, kept ${r.kept}/${r.records}` : ''}; load ${r.load1.toFixed(2)}`);
    }
  }
  const m = (side, f) => median(runs[side].map(f));
  const cpuRate = (side) => m(side, (r) => r.records / r.cpuS);
  const wallRate = (side) => m(side, (r) => r.records / r.wallS);
  for (const side of sides) {
    console.log(`${names[side].padEnd(38)} median ${m(side, (r) => r.cpuS).toFixed(3)} CPU-s, ${m(side, (r) => r.wallS).toFixed(3)} s wall: ${(cpuRate(side) / 1e6).toFixed(2)} M records/CPU-s, ${(wallRate(side) / 1e6).toFixed(2)} M records/s wall`);
  }
  const keep = runs.B[0] ? runs.B[0].kept / runs.B[0].records : NaN;
  const ratio = (side) => `${(cpuRate(side) / cpuRate('A')).toFixed(2)} on CPU time, ${(wallRate(side) / wallRate('A')).toFixed(2)} on wall time`;
  // rounds run their sides back to back, so a round's own ratio shows how much the load moved the figures
  const perRound = (side, base = 'A') => runs[side].map((r, i) => runs[base][i].cpuS / r.cpuS).sort((x, y) => x - y);
  const spread = (side, base = 'A') => `${perRound(side, base)[0].toFixed(2)}–${perRound(side, base).at(-1).toFixed(2)}`;
  console.log(`ratio B/A (goal ≥ 0.7): ${ratio('B')} (rounds' own CPU ratios ${spread('B')}); the filter kept ${(100 * keep).toFixed(1)}% of the records`);
  console.log(`JSON.parse alternative C/A: ${ratio('C')}; floor D/A (no scan can do better: positions known, records only past the gate): ${ratio('D')} (rounds ${spread('D')})`);
  console.log(`B over the same inflate, B/E: ${(cpuRate('B') / cpuRate('E')).toFixed(2)} on CPU time, ${(wallRate('B') / wallRate('E')).toFixed(2)} on wall time (rounds ${spread('B', 'E')}); E/A ${ratio('E')}`);
  console.log(`load average after: ${loadAvg()}`);
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') {
  const side = argv[1];
  if (!['A', 'B', 'C', 'D', 'E', 'check'].includes(side)) throw new Error(`bad side ${side}`);
  const o = opts(argv.slice(2));
  (side === 'check' ? check(o) : child(side, o)).then((r) => console.log(JSON.stringify(r)), (err) => {
    console.error(err);
    process.exitCode = 1;
  });
} else {
  main(opts(argv));
}
