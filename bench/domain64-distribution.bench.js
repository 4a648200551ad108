'use strict';
// Domain64 at Common Crawl's real distribution (#23): every registered domain of one crawl through the merger's real
// domain allocator (DomainIds.assignSorted over the previous version's domains.bin, as runMerge does), in several
// successive merges, and what comes out: no two domains share a block, which domains needed an overflow slot (a
// continuation slot of their suffix, or a shared slot), per suffix, and the allocator's time and memory.
//
// Distribution: bench/data/cc-main-2024-42-tlds.csv (Common Crawl's published statistics of CC-MAIN-2024-42: the 89
// TLDs with >= 0.05 % of the URLs, and the crawl's 38,304,026 distinct registered domains under 4,886 public
// suffixes). Published per-TLD counts sum per-host counts (45.3 M in all), so by default each is scaled by
// 38.3 / 45.3 to keep the crawl's distinct total (`--counts raw`: as published, .com 21.7 M). Each listed TLD is one
// suffix (co.uk is counted under uk: the biggest owner is what fills a slot). The rest of the total is spread over
// the other 4,886 - 89 suffixes along a Zipf curve fitted to the listed ranks (log count on log rank), at least one
// domain each. Names: a seeded label of 3-10 letters, '-', the domain's ordinal in base 36 (unique per suffix), '.',
// the suffix; a domain first appears in a uniformly drawn merge and each later merge sees it again with probability
// `--reseen` (a known domain must keep its key).
//
// Size: the default runs 1/8 of the crawl (`--shift 3`) with the domain field 3 bits narrower (2^21 ids per tld slot),
// so .com overflows its slot by the same ratio as at full size; `--full` runs the real layout (tld 8 : domain 24) at
// 38.3 M domains (≈ 1 h at load average 5-10, peak RSS 5.8 GiB; docs/keys.md has the figures). Usage:
//   node bench/domain64-distribution.bench.js [--full | --shift k] [--merges 10] [--reseen 0.2] [--counts scaled|raw] [--seed n]
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { spawnSync } = require('node:child_process');
const { RoaringBitmap32 } = require('roaring');
const { DEFAULT_DOMAIN64_LAYOUT } = require('@ccpipe/core');
const { DomainIds } = require('@ccpipe/index');
const { IndexWriter, DomainIndex } = require('@ccpipe/index/dist/format');
const { rng } = require('./lib/search-corpus');
const { loadAvg } = require('./lib/proc');

const HEAP_MB = 12288;
// names of a whole merge are held as JS strings (≈ 10 M in the last merges at full size): re-run with a larger heap
if (!process.execArgv.some((a) => a.startsWith('--max-old-space-size'))) {
  const r = spawnSync(process.execPath, [`--max-old-space-size=${HEAP_MB}`, __filename, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

function argOf(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : process.argv[i + 1];
}
const shift = process.argv.includes('--full') ? 0 : Number(argOf('shift', 3));
if (!(Number.isInteger(shift) && shift >= 0 && shift <= 7)) throw new RangeError('--shift is 0..7 (the path field takes the bits, at most 31)');
const MERGES = Number(argOf('merges', 10));
const RESEEN = Number(argOf('reseen', 0.2));
const COUNTS = argOf('counts', 'scaled');
const SEED = Number(argOf('seed', 20241042));
const layout = { ...DEFAULT_DOMAIN64_LAYOUT, domain: DEFAULT_DOMAIN64_LAYOUT.domain - shift, path: DEFAULT_DOMAIN64_LAYOUT.path + shift };
const idsPerSlot = 2 ** layout.domain;
const LOW = BigInt(layout.sub + layout.path); // a block key: tld:domain above LOW zero bits
const LOW_MASK = (1n << LOW) - 1n;

/** The published table and totals: [{tld, domains}], crawlDomains, crawlSuffixes. */
function loadTable() {
  const lines = readFileSync(join(__dirname, 'data', 'cc-main-2024-42-tlds.csv'), 'utf8').split('\n');
  const meta = {};
  for (const l of lines) if (l.startsWith('#crawl_')) meta[l.slice(1).split(',')[0]] = Number(l.split(',')[1]);
  const rows = lines.filter((l) => l && !l.startsWith('#')).slice(1).map((l) => {
    const [tld, domains, pct] = l.split(',');
    return { tld, domains: Number(domains), pct: Number(pct) };
  });
  return { rows, crawlDomains: meta.crawl_domains, crawlSuffixes: meta.crawl_suffixes };
}

/** Domains per suffix at full size: the listed TLDs, then the Zipf tail, summing to the crawl's total. */
function distribution() {
  const { rows, crawlDomains, crawlSuffixes } = loadTable();
  const published = rows.reduce((a, r) => a + r.domains, 0) / (rows.reduce((a, r) => a + r.pct, 0) / 100);
  const total = COUNTS === 'raw' ? Math.round(published) : crawlDomains;
  const scale = total / published;
  const listed = rows.map((r) => ({ suffix: r.tld, n: Math.round(r.domains * scale) })).sort((a, b) => b.n - a.n);
  // Zipf exponent: least squares of log(count) on log(rank) over the listed ranks
  let sx = 0, sy = 0, sxx = 0, sxy = 0;
  listed.forEach((r, i) => {
    const x = Math.log(i + 1), y = Math.log(r.n);
    sx += x; sy += y; sxx += x * x; sxy += x * y;
  });
  const k = listed.length;
  const slope = (k * sxy - sx * sy) / (k * sxx - sx * sx);
  const tailCount = crawlSuffixes - listed.length;
  const tailTotal = total - listed.reduce((a, r) => a + r.n, 0);
  const w = Array.from({ length: tailCount }, (_, j) => (k + 1 + j) ** slope);
  const wsum = w.reduce((a, b) => a + b, 0);
  const tail = w.map((x, j) => ({ suffix: `t${j.toString(36)}`, n: Math.max(1, Math.floor((x / wsum) * tailTotal)) }));
  // the rounding remainder goes to the first tail suffixes, one each
  let rest = tailTotal - tail.reduce((a, r) => a + r.n, 0);
  for (let j = 0; rest > 0; j = (j + 1) % tailCount, rest--) tail[j].n++;
  return { suffixes: [...listed, ...tail], total, slope, tailTotal, listedCount: listed.length };
}

function hash32(x) {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** A label of 3-10 seeded letters, '-', the ordinal in base 36: unique within its suffix. */
function labelOf(seed, ordinal) {
  let x = seed;
  let s = '';
  const len = 3 + (x & 7);
  for (let k = 0; k < len; k++) {
    x = hash32(x + k);
    s += String.fromCharCode(97 + (x % 26));
  }
  return `${s}-${ordinal.toString(36)}`;
}

const POSTINGS = [{ datasetId: 1, file: 0, first: 0, rows: 1 }];
const mb = (b) => (b / 2 ** 20).toFixed(0);
const secs = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;

function main() {
  const t00 = process.hrtime.bigint();
  const dist = distribution();
  const suffixes = dist.suffixes.map((s) => ({ suffix: s.suffix, n: shift === 0 ? s.n : Math.max(1, Math.round(s.n / 2 ** shift)) }));
  const N = suffixes.reduce((a, s) => a + s.n, 0);
  const base = new Float64Array(suffixes.length + 1);
  suffixes.forEach((s, i) => (base[i + 1] = base[i] + s.n));
  console.log(`load average ${loadAvg()}; ${N.toLocaleString('en')} domains under ${suffixes.length} suffixes (1/${2 ** shift} of CC-MAIN-2024-42, counts ${COUNTS}; ` +
    `top ${dist.listedCount} published, tail ${(dist.tailTotal / dist.total * 100).toFixed(2)} % on Zipf slope ${dist.slope.toFixed(2)}); ` +
    `layout tld ${layout.tld} : domain ${layout.domain} (${idsPerSlot.toLocaleString('en')} ids a slot); ${MERGES} merges, re-seen ${RESEEN}`);
  console.log(`largest: ${suffixes.slice(0, 5).map((s) => `${s.suffix} ${s.n.toLocaleString('en')} (${(s.n / idsPerSlot).toFixed(3)} slots)`).join(', ')}`);

  // each domain: the merge it first appears in and its label seed, from the project's seeded PRNG
  const r = rng(SEED);
  const first = new Uint8Array(N);
  const seeds = new Uint32Array(N);
  for (let j = 0; j < N; j++) {
    first[j] = Math.floor(r() * MERGES);
    seeds[j] = Math.floor(r() * 2 ** 32);
  }
  const reseen = (j, m) => hash32(seeds[j] ^ Math.imul(m + 1, 0x9e3779b1)) / 2 ** 32 < RESEEN;

  let snap = null;
  let index = null;
  let assignS = 0, restoreS = 0, assigned = 0, knownSeen = 0, unstable = 0, badKeys = 0;
  let peakHeap = 0;
  for (let m = 0; m < MERGES; m++) {
    const tg = process.hrtime.bigint();
    const names = [];
    for (let s = 0; s < suffixes.length; s++) {
      const suffix = suffixes[s].suffix;
      for (let j = base[s], i = 0; j < base[s + 1]; j++, i++) {
        if (first[j] === m || (first[j] < m && reseen(j, m))) names.push(`${labelOf(seeds[j], i)}.${suffix}`);
      }
    }
    names.sort(); // ASCII names: UTF-16 order is UTF-8 byte order, the merger's
    const genS = secs(tg);

    // the merge: the previous version's allocator and dictionary (every key checked, as openIndexOnDemand does), then
    // the merge's distinct domains in byte order
    let t = process.hrtime.bigint();
    const ids = snap === null ? DomainIds.empty(layout) : DomainIds.fromSnapshot(snap, index);
    const rs = secs(t);
    restoreS += rs;
    const keys = new Float64Array(names.length); // each key's block, tld:domain
    t = process.hrtime.bigint();
    for (let i = 0; i < names.length; i++) {
      const k = ids.assignSorted(names[i]);
      if ((k & LOW_MASK) !== 0n) badKeys++; // a domain's key is its block: sub and path zero
      keys[i] = Number(k >> LOW);
    }
    const as = secs(t);
    assignS += as;
    assigned += names.length;
    snap = JSON.parse(JSON.stringify(ids.snapshot())); // persisted with the version

    // the new version's domains.bin: the previous entries and the new names merged in order; a known name must have
    // kept its key
    t = process.hrtime.bigint();
    const w = new IndexWriter((set) => new RoaringBitmap32(set).serialize('portable'));
    let a = 0;
    const oldN = index === null ? 0 : index.size;
    let added = 0;
    for (let i = 0; i < names.length; i++) {
      const nb = Buffer.from(names[i]);
      while (a < oldN && Buffer.compare(index.nameBytes(a), nb) < 0) {
        w.add(index.nameBytes(a), index.d64(a), POSTINGS);
        a++;
      }
      if (a < oldN && Buffer.compare(index.nameBytes(a), nb) === 0) {
        knownSeen++;
        if (Number(index.d64(a) >> LOW) !== keys[i]) unstable++;
        w.add(nb, index.d64(a), POSTINGS);
        a++;
      } else {
        w.add(nb, BigInt(keys[i]) << LOW, POSTINGS);
        added++;
      }
    }
    for (; a < oldN; a++) w.add(index.nameBytes(a), index.d64(a), POSTINGS);
    index = null;
    index = new DomainIndex(w.finish());
    const ws = secs(t);
    const mem = process.memoryUsage();
    peakHeap = Math.max(peakHeap, mem.heapUsed);
    console.log(`merge ${m + 1}: ${names.length.toLocaleString('en')} domains (${added.toLocaleString('en')} new), ` +
      `assign ${as.toFixed(2)} s (${(names.length / as / 1e6).toFixed(2)} M/s), restore+check ${rs.toFixed(2)} s, names ${genS.toFixed(1)} s, ` +
      `dictionary ${ws.toFixed(1)} s → ${index.size.toLocaleString('en')} entries ${mb(index.bytes)} MiB; rss ${mb(mem.rss)} MiB heap ${mb(mem.heapUsed)} MiB`);
  }

  // every block once: the dictionary's blocks (tld:domain) sorted, no two equal
  const highs = new Uint32Array(index.size);
  for (let i = 0; i < index.size; i++) highs[i] = Number(index.d64(i) >> LOW);
  const sorted = highs.slice().sort();
  let collisions = 0;
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) collisions++;

  // where each domain landed: its suffix's first slot (home), a later slot of its own (continued), a shared slot, or
  // a slot of another suffix (would be a bug)
  const owners = snap.tlds.owners;
  const home = new Map();
  owners.forEach((o, slot) => {
    if (o !== null && !home.has(o)) home.set(o, slot);
  });
  const per = new Map(suffixes.map((s) => [s.suffix, { home: 0, continued: 0, shared: 0 }]));
  let wrong = 0;
  for (let i = 0; i < index.size; i++) {
    const name = index.name(i);
    const suffix = name.slice(name.indexOf('.') + 1);
    const slot = highs[i] >>> layout.domain;
    const o = owners[slot];
    const c = per.get(suffix);
    if (o === null) c.shared++;
    else if (o !== suffix) wrong++;
    else if (slot === home.get(suffix)) c.home++;
    else c.continued++;
  }
  let continued = 0, shared = 0;
  for (const c of per.values()) {
    continued += c.continued;
    shared += c.shared;
  }
  const dedicated = owners.filter((o) => o !== null).length;
  const sharedSlots = owners.length - dedicated;
  const ownersWithSlot = home.size;
  const sharedOwners = [...per.values()].filter((c) => c.shared > 0 && c.home + c.continued === 0).length;
  console.log(`tld slots: ${dedicated} dedicated (${ownersWithSlot} suffixes), ${sharedSlots} shared, ${256 - owners.length} free; ` +
    `${sharedOwners} suffixes live only in shared slots`);
  // slots go to the first suffixes seen (merge order, then byte order of the names), not to the biggest
  const listedWithSlot = suffixes.slice(0, dist.listedCount).filter((s) => home.has(s.suffix)).length;
  const biggestWithout = suffixes.find((s) => !home.has(s.suffix));
  const smallestWith = [...suffixes].reverse().find((s) => home.has(s.suffix));
  console.log(`published TLDs with a slot of their own: ${listedWithSlot} of ${dist.listedCount}; biggest suffix without one: ` +
    `${biggestWithout.suffix} (${biggestWithout.n.toLocaleString('en')} domains); smallest with one: ${smallestWith.suffix} (${smallestWith.n.toLocaleString('en')})`);
  console.log('suffix        domains   home slot   continued      shared   overflow');
  for (const s of suffixes.slice(0, 12)) {
    const c = per.get(s.suffix);
    console.log(`${s.suffix.padEnd(8)} ${String(s.n).padStart(12)} ${String(c.home).padStart(11)} ${String(c.continued).padStart(11)} ${String(c.shared).padStart(11)} ${((c.continued + c.shared) / s.n * 100).toFixed(2).padStart(9)} %`);
  }
  const overflow = continued + shared;
  console.log(`domains ${index.size.toLocaleString('en')} (expected ${N.toLocaleString('en')}); collisions ${collisions}; keys outside their suffix's or a shared slot ${wrong}; ` +
    `known domains re-seen ${knownSeen.toLocaleString('en')}, changed key ${unstable}; non-block keys ${badKeys}`);
  console.log(`overflow: ${overflow.toLocaleString('en')} domains = ${(overflow / index.size * 100).toFixed(2)} % ` +
    `(continuation slots ${continued.toLocaleString('en')}, shared slots ${shared.toLocaleString('en')} = ${(shared / index.size * 100).toFixed(2)} %)`);
  const snapBytes = JSON.stringify(snap).length;
  console.log(`allocator: ${(assigned / assignS / 1e6).toFixed(2)} M assignSorted/s over ${assigned.toLocaleString('en')} calls (${assignS.toFixed(1)} s), ` +
    `restore + key check ${restoreS.toFixed(1)} s; snapshot ${snapBytes} B; peak RSS ${mb(process.resourceUsage().maxRSS * 1024)} MiB, ` +
    `peak heap ${mb(peakHeap)} MiB (the bench's names and its resident dictionary of ${mb(index.bytes)} MiB, not the allocator); wall ${secs(t00).toFixed(0)} s; ` +
    `load average ${loadAvg()}`);
  const ok = collisions === 0 && wrong === 0 && unstable === 0 && badKeys === 0 && index.size === N;
  console.log(JSON.stringify({
    domains: index.size, suffixes: suffixes.length, shift, collisions, wrong, unstable, badKeys, overflow, continued, shared,
    overflowFraction: overflow / index.size, assignPerS: assigned / assignS, snapBytes, maxRssKiB: process.resourceUsage().maxRSS, ok,
  }));
  if (!ok) process.exitCode = 1;
}

main();
