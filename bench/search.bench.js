'use strict';
// Full-text search engines compared on ≥ 200k documents made from the corpus (bench/lib/search-corpus.js says how the
// documents and the judged queries are made), sharded as the lake is: one shard per (dataset, domain_prefix), 256
// prefixes of one dataset. Every step runs in its own process:
//  - build: SQLite FTS5 (@ccpipe/search) and LanceDB 0.31.0 FTS, alternated, BENCH_BUILD_ROUNDS rounds (default 5) over
//    BENCH_BUILD_SHARDS of the shards (default 32, ~1/8 of the docs): docs/s wall and per CPU-second (medians); then one
//    full build each for sizes (bytes per doc, index/text ratio) and queries;
//  - queries: alternated, BENCH_ROUNDS rounds (default 5) of BENCH_QUERIES judged queries (default 30, a third of each
//    kind), each asked domain-scoped (the relevant page's domain: one shard, a domain filter) and global (every
//    shard); p50/p99 per round, medians over the rounds;
//  - ranking quality on the whole judged set (global search): nDCG@10 and MRR of the real page per query kind, for
//    FTS5 plain (unicode61 remove_diacritics 2), FTS5 with Porter stemming, title weight 1 against the default 2, one FTS5 index over all
//    docs (exact global BM25 statistics: how far per-shard scores are from it) and LanceDB;
//  - the time limit: how long a global search of a very common word takes to throw at 20 ms, and a phrase of common
//    words that matches nothing (no row reaches the limit check) on the largest shard.
// LanceDB 0.31.0's FTS index build deadlocks on this 2-core machine with its default CPU pool (one thread per core):
// createIndex never settles, at 0% CPU, for a table of a few MB of text (the largest shard, 7,855 docs / 13 MB here; or
// 2,000 docs with positions). With LANCE_CPU_THREADS=4 the same build takes ~2 s, so the bench sets it for LanceDB's
// processes (BENCH_LANCE_CPU_THREADS, default 4) and the probe at the end shows the deadlock with the default pool.
//   node bench/search.bench.js [docs=200000]      env: BENCH_ROUNDS, BENCH_BUILD_ROUNDS, BENCH_BUILD_SHARDS, BENCH_QUERIES,
//   BENCH_LANCE_CPU_THREADS, BENCH_LANCE_PROBE=0 (skip the deadlock probe)
const { spawnSync } = require('node:child_process');
const { mkdtempSync, rmSync, readdirSync, statSync, mkdirSync } = require('node:fs');
const { tmpdir, loadavg } = require('node:os');
const { join } = require('node:path');
const { makeCorpus, judge } = require('./lib/search-corpus');

const N = Number(process.argv[2] && process.argv[2] !== 'child' ? process.argv[2] : process.env.BENCH_DOCS ?? 200_000);
const PARTITIONS = 256;
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const BUILD_ROUNDS = Number(process.env.BENCH_BUILD_ROUNDS || 5);
const BUILD_SHARDS = Number(process.env.BENCH_BUILD_SHARDS || 32);
const QUERIES = Number(process.env.BENCH_QUERIES || 30);
const LANCE = '@lancedb/lancedb';

const corpus = () => makeCorpus({ n: N, partitions: PARTITIONS, queriesPerKind: 100 });

/** Shard p's docs in lake order (domain, then doc number): rowId = position in the shard. */
function shardDocs(c) {
  const by = new Map();
  for (let i = 0; i < c.n; i++) {
    const p = c.meta[i].prefix;
    if (!by.has(p)) by.set(p, []);
    by.get(p).push(i);
  }
  for (const list of by.values()) list.sort((a, b) => (c.meta[a].domain < c.meta[b].domain ? -1 : c.meta[a].domain > c.meta[b].domain ? 1 : a - b));
  return by;
}

function bytesUnder(p) {
  const st = statSync(p);
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const e of readdirSync(p)) n += bytesUnder(join(p, e));
  return n;
}

// ---------------------------------------------------------------- children

async function childBuild(engine, dir, maxShards, variant) {
  const c = corpus();
  const by = shardDocs(c);
  const prefixes = [...by.keys()].sort((a, b) => a - b).filter((p) => p < maxShards);
  const one = variant === 'one';
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let docs = 0;
  let textBytes = 0;
  let indexBytes = 0;
  if (engine === 'sqlite') {
    const { buildSearchShard } = require('../packages/search/dist');
    const gen = function* (lists) {
      let row = 0;
      for (const list of lists) {
        for (const i of list) {
          const d = c.doc(i);
          yield { rowId: row++, urlId: BigInt(i) * 2654435761n, url: d.url, domain: d.domain, datasetId: 1, ts: d.ts, title: d.title, text: d.text };
        }
      }
    };
    const jobs = one ? [['all', prefixes.map((p) => by.get(p))]] : prefixes.map((p) => [String(p).padStart(3, '0'), [by.get(p)]]);
    for (const [name, lists] of jobs) {
      const r = await buildSearchShard(join(dir, `shard-${name}.db`), gen(lists), { stem: variant === 'porter' });
      docs += r.docs;
      textBytes += r.textBytes;
      indexBytes += r.indexBytes;
    }
  } else {
    const lancedb = require(LANCE);
    const keep = setInterval(() => {}, 1000); // LanceDB's promises do not keep Node's event loop alive
    const db = await lancedb.connect(dir);
    for (const p of prefixes) {
      const rows = by.get(p).map((i, row) => {
        const d = c.doc(i);
        textBytes += Buffer.byteLength(d.title ?? '') + Buffer.byteLength(d.text);
        return { row_id: row, doc: i, url: d.url, domain: d.domain, ts: d.ts, title: d.title ?? '', body: `${d.title ?? ''}\n${d.text}` };
      });
      const t = await db.createTable(`p${p}`, rows);
      await t.createIndex('body', { config: lancedb.Index.fts({ withPosition: true, asciiFolding: true, lowercase: true, stem: false, removeStopWords: false }) });
      docs += rows.length;
    }
    clearInterval(keep);
    for (const e of readdirSync(dir)) if (e.endsWith('.lance')) indexBytes += bytesUnder(join(dir, e, '_indices'));
  }
  const cpu = process.cpuUsage(cpu0);
  return { docs, ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, bytes: bytesUnder(dir), textBytes, indexBytes, shards: one ? 1 : prefixes.length };
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};

async function childQuery(engine, dir, mode, round) {
  const c = corpus();
  const by = shardDocs(c);
  const prefixes = [...by.keys()].sort((a, b) => a - b);
  const { parseSearchQuery } = require('../packages/core/dist');
  let searchGlobal, searchDomain, close;
  if (engine === 'sqlite' || engine === 'sqlite-one') {
    const { openSearchShard, searchShards } = require('../packages/search/dist');
    const files = readdirSync(dir).filter((f) => f.endsWith('.db')).sort();
    const shards = files.map((f) => openSearchShard(join(dir, f)));
    const docOf = engine === 'sqlite-one' ? prefixes.flatMap((p) => by.get(p)) : null;
    const toDoc = (shardIdx, rowId) => (docOf ? docOf[rowId] : by.get(prefixes[shardIdx])[rowId]);
    const w = Number(process.env.TITLE_WEIGHT || 2);
    searchGlobal = async (q) => searchShards(shards, q, { limit: 10, timeLimitMs: 5000, titleWeight: w }).hits.map((h) => toDoc(h.shard, h.rowId));
    searchDomain = async (q, domain) => {
      const k = docOf ? 0 : prefixes.indexOf(c.prefixOf(domain));
      return shards[k].search(q, { limit: 10, domain, timeLimitMs: 5000, titleWeight: w }).hits.map((h) => toDoc(k, h.rowId));
    };
    close = () => shards.forEach((s) => s.close());
    if (mode === 'limit') {
      const out = { timeouts: [], nomatch: null };
      for (let r = 0; r < 5; r++) {
        const t = performance.now();
        try {
          searchShards(shards, parseSearchQuery('the'), { limit: 10, timeLimitMs: 20 });
          out.timeouts.push(-(performance.now() - t));
        } catch (e) {
          out.timeouts.push(e.code === 'CCP_ERR_SEARCH_TIMEOUT' ? performance.now() - t : NaN);
        }
      }
      const full = performance.now();
      const all = searchShards(shards, parseSearchQuery('the'), { limit: 10, timeLimitMs: 60_000 });
      out.theMs = performance.now() - full;
      out.theTotal = all.total;
      out.theExact = all.totalExact;
      const biggest = shards.reduce((a, s) => (s.docs > a.docs ? s : a));
      const t = performance.now();
      const r = biggest.search(parseSearchQuery('"the of and to in a is"'), { limit: 10, timeLimitMs: 60_000 });
      out.nomatch = { ms: performance.now() - t, total: r.total, docs: biggest.docs };
      close();
      return out;
    }
  } else {
    const lancedb = require(LANCE);
    const keep = setInterval(() => {}, 1000);
    const db = await lancedb.connect(dir);
    const tables = await Promise.all(prefixes.map((p) => db.openTable(`p${p}`)));
    const toLance = (p) => {
      const clause = (ph) => (ph.length === 1 ? new lancedb.MatchQuery(ph[0], 'body') : new lancedb.PhraseQuery(ph.join(' '), 'body'));
      return new lancedb.BooleanQuery([...p.must.map((ph) => [lancedb.Occur.Must, clause(ph)]), ...p.not.map((ph) => [lancedb.Occur.MustNot, clause(ph)])]);
    };
    const run = (t, q, where) => {
      let b = t.query().fullTextSearch(toLance(q));
      if (where) b = b.where(where);
      return b.select(['doc', 'url', 'title', 'ts']).limit(10).toArray();
    };
    searchGlobal = async (q) => {
      const per = await Promise.all(tables.map((t) => run(t, q)));
      return per.flat().sort((a, b) => b._score - a._score).slice(0, 10).map((r) => r.doc);
    };
    searchDomain = async (q, domain) => (await run(tables[prefixes.indexOf(c.prefixOf(domain))], q, `domain = '${domain.replace(/'/g, "''")}'`)).map((r) => r.doc);
    close = () => clearInterval(keep);
  }
  const out = {};
  if (mode === 'quality') {
    for (const kind of ['phrase', 'words', 'title']) {
      const qs = c.queries.filter((q) => q.kind === kind);
      let nd = 0, rr = 0;
      const tops = [];
      for (const q of qs) {
        const ranked = await searchGlobal(parseSearchQuery(q.q));
        tops.push(ranked);
        const j = judge(ranked, q.relevant);
        nd += j.ndcg;
        rr += j.rr;
      }
      out[kind] = { n: qs.length, ndcg: nd / qs.length, mrr: rr / qs.length, tops };
    }
  } else {
    const kinds = ['phrase', 'words', 'title'];
    const picked = kinds.flatMap((k) => c.queries.filter((q) => q.kind === k).slice(0, Math.ceil(QUERIES / 3)));
    for (const q of picked.slice(0, 6)) await searchGlobal(parseSearchQuery(q.q)); // warm the page cache and statements
    const dom = [], glob = [];
    for (const q of picked) {
      const p = parseSearchQuery(q.q);
      let t = performance.now();
      await searchDomain(p, q.domain);
      dom.push(performance.now() - t);
      t = performance.now();
      await searchGlobal(p);
      glob.push(performance.now() - t);
    }
    Object.assign(out, { round, domain: { p50: pct(dom, 50), p99: pct(dom, 99) }, global: { p50: pct(glob, 50), p99: pct(glob, 99) }, n: picked.length });
  }
  close();
  return out;
}

async function lanceProbe() {
  // LanceDB's FTS index of the largest shard with the default CPU pool (LANCE_CPU_THREADS unset): does it finish in 60 s?
  const lancedb = require(LANCE);
  const keep = setInterval(() => {}, 1000);
  const c = corpus();
  const largest = [...shardDocs(c).values()].reduce((a, l) => (l.length > a.length ? l : a));
  const dir = mkdtempSync(join(tmpdir(), 'ccpipe-lance-probe-'));
  const db = await lancedb.connect(dir);
  const rows = largest.map((i) => ({ id: i, body: c.doc(i).text }));
  const t = await db.createTable('t', rows);
  const t0 = performance.now();
  await t.createIndex('body', { config: lancedb.Index.fts({ withPosition: true }) });
  clearInterval(keep);
  rmSync(dir, { recursive: true, force: true });
  return { ms: performance.now() - t0 };
}

// ---------------------------------------------------------------- parent

function child(args, timeoutMs = 20 * 60_000) {
  const env = { ...process.env, BENCH_DOCS: String(N) };
  if (args[0] === 'lance-probe') delete env.LANCE_CPU_THREADS;
  else if (args[1] === 'lance' && env.LANCE_CPU_THREADS === undefined) env.LANCE_CPU_THREADS = process.env.BENCH_LANCE_CPU_THREADS || '4';
  const p = spawnSync(process.execPath, ['--max-old-space-size=4096', __filename, 'child', ...args], { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 256 << 20, env });
  if (p.status !== 0) return { error: p.error ? String(p.error.message) : (p.stderr || '').trim().split('\n').slice(-3).join(' | ') || `exit ${p.status}` };
  return JSON.parse(p.stdout.trim().split('\n').pop());
}

const med = (xs) => pct(xs.filter((x) => Number.isFinite(x)), 50);
const f = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const la = () => loadavg().map((x) => x.toFixed(2)).join(' ');

async function main() {
  let lanceOk = true;
  try {
    require.resolve(LANCE);
  } catch (e) {
    lanceOk = false;
    console.log(`LanceDB: not installed (${e.message.split('\n')[0]})`);
  }
  const c = corpus();
  const by = shardDocs(c);
  const sizes = [...by.values()].map((l) => l.length);
  console.log(`LanceDB processes run with LANCE_CPU_THREADS=${process.env.LANCE_CPU_THREADS ?? (process.env.BENCH_LANCE_CPU_THREADS || '4')}`);
  console.log(`search bench: ${N} docs (${c.sources} corpus pages + synthetic), ${by.size} shards (1 dataset × ${PARTITIONS} domain prefixes; docs per shard min ${Math.min(...sizes)}, median ${med(sizes)}, max ${Math.max(...sizes)}), ${c.queries.length} judged queries; load average ${la()}`);
  const root = mkdtempSync(join(tmpdir(), 'ccpipe-search-bench-'));
  const engines = lanceOk ? ['sqlite', 'lance'] : ['sqlite'];
  try {
    // build rounds on a subset, alternated (the order rotates every round)
    const builds = Object.fromEntries(engines.map((e) => [e, []]));
    for (let r = 0; r < BUILD_ROUNDS; r++) {
      for (const e of r % 2 ? [...engines].reverse() : engines) {
        const dir = join(root, `b-${e}-${r}`);
        mkdirSync(dir);
        const res = child(['build', e, dir, String(BUILD_SHARDS), 'plain']);
        rmSync(dir, { recursive: true, force: true });
        if (res.error) console.log(`build ${e} round ${r}: FAILED ${res.error}`);
        else builds[e].push(res);
      }
    }
    console.log(`\nbuild, ${BUILD_SHARDS} shards (${builds.sqlite[0]?.docs ?? '?'} docs), medians of ${BUILD_ROUNDS} alternated rounds:`);
    for (const e of engines) {
      const b = builds[e];
      console.log(`  ${e.padEnd(7)} ${f(med(b.map((x) => x.docs / (x.ms / 1000))))} docs/s wall, ${f(med(b.map((x) => x.docs / (x.cpuMs / 1000))))} docs per CPU-second (CPU/wall ${f(med(b.map((x) => x.cpuMs / x.ms)), 2)})`);
    }
    // full builds
    const full = {};
    for (const [name, e, variant] of [['sqlite', 'sqlite', 'plain'], ['sqlite-porter', 'sqlite', 'porter'], ['sqlite-one', 'sqlite', 'one'], ...(lanceOk ? [['lance', 'lance', 'plain']] : [])]) {
      const dir = join(root, name);
      mkdirSync(dir);
      full[name] = { dir, ...child(['build', e, dir, String(PARTITIONS), variant]) };
    }
    console.log(`\nfull builds (${N} docs), one run each:`);
    console.log('  engine          shards  build s  docs/CPU-s  bytes/doc  index/text  file/text');
    for (const [name, r] of Object.entries(full)) {
      if (r.error) {
        console.log(`  ${name.padEnd(15)} FAILED ${r.error}`);
        continue;
      }
      console.log(`  ${name.padEnd(15)} ${String(r.shards).padStart(6)}  ${f(r.ms / 1000, 1).padStart(7)}  ${f(r.docs / (r.cpuMs / 1000)).padStart(10)}  ${f(r.bytes / r.docs).padStart(9)}  ${f(r.indexBytes / r.textBytes, 3).padStart(10)}  ${f(r.bytes / r.textBytes, 3).padStart(9)}`);
    }
    console.log(`  text indexed: ${f(full.sqlite.textBytes / full.sqlite.docs)} B/doc (title + text, UTF-8); index = the FTS structures alone (SQLite: fts_* tables by dbstat; LanceDB: _indices), file = everything on disk (SQLite: + hit fields and the deflated text for snippets; LanceDB: + the Lance data files)`);

    // latency rounds, alternated
    const lat = Object.fromEntries(engines.map((e) => [e, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const e of r % 2 ? [...engines].reverse() : engines) {
        if (full[e === 'lance' ? 'lance' : 'sqlite'].error) continue;
        const res = child(['query', e, full[e].dir, 'latency', String(r)]);
        if (res.error) console.log(`query ${e} round ${r}: FAILED ${res.error}`);
        else lat[e].push(res);
      }
    }
    console.log(`\nquery latency, ${lat.sqlite[0]?.n ?? QUERIES} judged queries per round, warm, one at a time; medians over ${ROUNDS} rounds of each round's p50/p99 (ms):`);
    for (const e of engines) {
      const L = lat[e];
      console.log(`  ${e.padEnd(7)} domain-scoped (1 shard) p50 ${f(med(L.map((x) => x.domain.p50)), 2)} p99 ${f(med(L.map((x) => x.domain.p99)), 2)}   global (${by.size} shards) p50 ${f(med(L.map((x) => x.global.p50)), 1)} p99 ${f(med(L.map((x) => x.global.p99)), 1)}`);
    }

    // ranking quality
    console.log('\nranking quality over the whole judged set (global search, top 10): nDCG@10 / MRR of the real page');
    const q = {};
    const runs = [['sqlite', 'sqlite', {}], ['sqlite-porter', 'sqlite', {}], ['sqlite-one', 'sqlite-one', {}], ['sqlite w=1', 'sqlite', { TITLE_WEIGHT: '1' }], ...(lanceOk ? [['lance', 'lance', {}]] : [])];
    for (const [name, e, env] of runs) {
      const dirName = name.startsWith('sqlite w=') ? 'sqlite' : name;
      if (full[dirName]?.error) continue;
      Object.assign(process.env, env);
      q[name] = child(['query', e, full[dirName].dir, 'quality', '0']);
      for (const k of Object.keys(env)) delete process.env[k];
      const r = q[name];
      if (r.error) console.log(`  ${name.padEnd(14)} FAILED ${r.error}`);
      else console.log(`  ${name.padEnd(14)} ${['phrase', 'words', 'title'].map((k) => `${k} ${f(r[k].ndcg, 3)} / ${f(r[k].mrr, 3)}`).join('   ')}`);
    }
    if (q.sqlite && q['sqlite-one'] && !q.sqlite.error && !q['sqlite-one'].error) {
      let same = 0, n = 0, first = 0;
      for (const k of ['phrase', 'words', 'title']) {
        q.sqlite[k].tops.forEach((top, i) => {
          const other = new Set(q['sqlite-one'][k].tops[i]);
          same += top.filter((d) => other.has(d)).length / Math.max(1, Math.max(top.length, other.size));
          first += top[0] === q['sqlite-one'][k].tops[i][0] ? 1 : 0;
          n++;
        });
      }
      console.log(`  ${by.size} shards vs one index of all docs: top-10 overlap ${f((100 * same) / n, 1)}%, same first hit ${f((100 * first) / n, 1)}% of ${n} queries`);
    }

    // the time limit
    const lim = child(['query', 'sqlite', full.sqlite.dir, 'limit', '0']);
    if (lim.error) console.log(`\ntime limit: FAILED ${lim.error}`);
    else {
      console.log(`\ntime limit: global 'the' (${lim.theTotal}${lim.theExact ? '' : ' estimated'} matches) takes ${f(lim.theMs, 1)} ms unlimited; with a 20 ms limit it threw CCP_ERR_SEARCH_TIMEOUT after ${lim.timeouts.map((x) => f(x, 1)).join(', ')} ms`);
      console.log(`  a phrase of 7 common words matching ${lim.nomatch.total} docs on the largest shard (${lim.nomatch.docs} docs): ${f(lim.nomatch.ms, 1)} ms (no row reaches the limit check)`);
    }
    if (lanceOk && process.env.BENCH_LANCE_PROBE !== '0') {
      const p = child(['lance-probe'], 90_000);
      console.log(`\nLanceDB FTS index of the largest shard with its default CPU pool (LANCE_CPU_THREADS unset, ${require('node:os').cpus().length} cores): ${p.error ? `did not finish in 60 s (${p.error})` : `built in ${f(p.ms)} ms`}`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`\nload average after: ${la()}`);
}

if (process.argv[2] === 'child') {
  const [mode, ...args] = process.argv.slice(3);
  const run =
    mode === 'build'
      ? childBuild(args[0], args[1], Number(args[2]), args[3])
      : mode === 'query'
        ? childQuery(args[0], args[1], args[2], Number(args[3]))
        : lanceProbe();
  const killer = mode === 'lance-probe' ? setTimeout(() => process.exit(3), 60_000) : null;
  run.then(
    (r) => {
      if (killer) clearTimeout(killer);
      process.stdout.write(`${JSON.stringify(r)}\n`);
      process.exit(0);
    },
    (e) => {
      console.error(e && e.stack ? e.stack : e);
      process.exit(1);
    },
  );
} else {
  main().catch((e) => {
    console.error(e);
    process.exitCode = 1;
  });
}
