// Needs the compiled worker: run `npx tsc -b packages/search` before jest.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  buildSearchShard,
  defaultSearchWorkerPath,
  openSearchShard,
  parseSearchQuery,
  searchShards,
  SearchError,
  SearchRunner,
  type SearchDoc,
  type SearchRunOptions,
  type SearchShard,
} from './index';

const SH = resolve(__dirname, '../../../../shared/corpus/scrapinghub-article-extraction-benchmark');
const truth = JSON.parse(readFileSync(join(SH, 'ground-truth.json'), 'utf8')) as Record<string, { url: string; articleBody: string }>;
const articles = Object.values(truth).slice(0, 90);
const T0 = 1_700_000_000;
const SLOW = 10_000; // a time limit no search here reaches, for tests of answers

let dir: string;
let paths: string[];
let shards: SearchShard[];
/** The real worker, except that a query with the word `spinforever` never returns and one with `exitnow` kills the thread. */
let testWorker: string;

function doc(rowId: number, i: number): SearchDoc {
  const a = articles[i]!;
  return { rowId, urlId: BigInt(i) * 1_000_000_007n, url: `https://site${i % 7}.example/p/${i}`, domain: `site${i % 7}.example`, datasetId: 1, ts: T0 + i, title: null, text: a.articleBody };
}

/** What searchShards answers in this thread over the same shards. */
const inProcess = (q: string, opts: SearchRunOptions) => searchShards(shards, parseSearchQuery(q), { ...opts, timeLimitMs: SLOW });

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return undefined;
}

/** A phrase of six words from the middle of article `i`. */
function phraseOf(i: number): string {
  const words = articles[i]!.articleBody.split(/\s+/);
  const mid = Math.floor(words.length / 2);
  return `"${words.slice(mid, mid + 6).join(' ').replace(/["“”«»„]/g, '')}"`;
}

beforeAll(async () => {
  if (!existsSync(defaultSearchWorkerPath())) throw new Error('build first: npx tsc -b packages/search');
  dir = mkdtempSync(join(tmpdir(), 'ccpipe-search-runner-'));
  paths = [0, 1, 2].map((k) => join(dir, `s${k}.db`));
  // three shards, articles dealt round-robin: rowIds 0.. in each
  for (const [k, p] of paths.entries()) {
    await buildSearchShard(p, articles.map((_, i) => i).filter((i) => i % 3 === k).map((i, row) => doc(row, i)));
  }
  shards = paths.map(openSearchShard);
  testWorker = join(dir, 'test-worker.js');
  writeFileSync(
    testWorker,
    `const { parentPort } = require('node:worker_threads');
const on = parentPort.on.bind(parentPort);
parentPort.on = (ev, fn) => on(ev, ev !== 'message' ? fn : (m) => {
  const words = m.query.normalized.split(' ');
  if (words.includes('spinforever')) for (;;) {}
  if (words.includes('exitnow')) process.exit(3);
  fn(m);
});
require(${JSON.stringify(defaultSearchWorkerPath())});
`,
  );
});

afterAll(() => {
  for (const s of shards) s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SearchRunner', () => {
  it('answers as searchShards does in this thread (same hits, order, totals)', async () => {
    const runner = new SearchRunner({ timeLimitMs: SLOW });
    try {
      const cases: [string, SearchRunOptions][] = [
        ['people', { limit: 10 }],
        ['government', { limit: 20, offset: 5 }],
        ['"in the world"', { limit: 10 }],
        ['the -people', { limit: 100 }],
        ['the', { limit: 10, domain: 'site3.example' }],
        ['said', { limit: 10, from: T0 + 10, to: T0 + 60 }],
      ];
      for (const [q, o] of cases) {
        const got = await runner.run(paths, q, o);
        expect([q, got.hits.length > 0]).toEqual([q, true]);
        expect(got).toEqual(inProcess(q, o));
      }
      expect(runner.stats()).toEqual({ completed: cases.length, failed: 0, timeouts: 0, restarts: 0, queued: 0, busy: 0 });
    } finally {
      await runner.close();
    }
  });

  it('finds an article by a phrase from its middle, first', async () => {
    const runner = new SearchRunner({ timeLimitMs: SLOW });
    try {
      for (const i of [4, 17, 50]) {
        const r = await runner.run(paths, phraseOf(i), { limit: 5 });
        // article i is row ⌊i/3⌋ of shard i % 3
        expect([r.hits[0]?.shard, r.hits[0]?.rowId]).toEqual([i % 3, Math.floor(i / 3)]);
        expect(r.hits[0]?.snippet).toContain('<mark>');
      }
    } finally {
      await runner.close();
    }
  });

  it('refuses a bad query or option before any worker is involved', async () => {
    // no worker could start from this path: a refusal that reached one would be CCP_ERR_SEARCH_WORKER
    const runner = new SearchRunner({ workerPath: join(dir, 'no-such-worker.js') });
    try {
      for (const q of ['', '   ', '"', '*', '-people', 'x'.repeat(1001)]) {
        const err = await runner.run(paths, q, { limit: 10 }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(SearchError);
        expect((err as SearchError).code).toBe('CCP_ERR_SEARCH_QUERY');
      }
      for (const o of [{ limit: 0 }, { limit: 10, offset: 995 }, { limit: 10, timeLimitMs: 0 }, { limit: 10, from: Number.NaN }]) {
        expect(await codeOf(runner.run(paths, 'people', o))).toBe('CCP_ERR_SEARCH_QUERY');
      }
      expect(runner.stats()).toEqual({ completed: 0, failed: 0, timeouts: 0, restarts: 0, queued: 0, busy: 0 });
      // the same runner does reach for a worker with a good query
      expect(await codeOf(runner.run(paths, 'people', { limit: 10 }))).toBe('CCP_ERR_SEARCH_WORKER');
    } finally {
      await runner.close();
    }
  });

  it('runs concurrent searches on two threads, each answered right', async () => {
    const runner = new SearchRunner({ threads: 2, timeLimitMs: SLOW });
    try {
      const qs = ['people', 'government', 'the', 'year', 'said', 'city', phraseOf(7), phraseOf(33), 'police', 'music'];
      const got = await Promise.all(qs.map((q) => runner.run(paths, q, { limit: 10 })));
      got.forEach((r, i) => expect(r).toEqual(inProcess(qs[i]!, { limit: 10 })));
      expect(runner.stats()).toMatchObject({ completed: qs.length, failed: 0, restarts: 0, queued: 0, busy: 0 });
    } finally {
      await runner.close();
    }
  });

  it('fails a missing or foreign shard file with CCP_ERR_SEARCH_SHARD and searches on', async () => {
    const runner = new SearchRunner({ timeLimitMs: SLOW });
    const junk = join(dir, 'junk.db');
    writeFileSync(junk, 'not a database');
    try {
      const err = await runner.run([paths[0]!, join(dir, 'missing.db')], 'people', { limit: 10 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SearchError);
      expect((err as SearchError).code).toBe('CCP_ERR_SEARCH_SHARD');
      expect(await codeOf(runner.run([junk], 'people', { limit: 10 }))).toBe('CCP_ERR_SEARCH_SHARD');
      expect(await runner.run(paths, 'people', { limit: 10 })).toEqual(inProcess('people', { limit: 10 }));
      expect(runner.stats()).toMatchObject({ completed: 1, failed: 2, timeouts: 0, restarts: 0 });
    } finally {
      await runner.close();
    }
  });

  it('keeps at most maxOpenShards open and opens a replaced shard file afresh', async () => {
    const runner = new SearchRunner({ timeLimitMs: SLOW, maxOpenShards: 1 });
    const p = join(dir, 'replaced.db');
    try {
      for (const q of ['people', 'government', 'people']) expect(await runner.run(paths, q, { limit: 10 })).toEqual(inProcess(q, { limit: 10 }));
      await buildSearchShard(p, [doc(0, 4)]);
      const before = await runner.run([p], phraseOf(5), { limit: 10 });
      expect(before.total).toBe(0);
      await buildSearchShard(p, [doc(0, 5)]); // a new file at the same path
      const after = await runner.run([p], phraseOf(5), { limit: 10 });
      expect(after.hits.map((h) => h.url)).toEqual(['https://site5.example/p/5']);
    } finally {
      await runner.close();
    }
  });

  it('fails a search past a short time limit with CCP_ERR_SEARCH_TIMEOUT, retryable', async () => {
    const runner = new SearchRunner();
    try {
      await runner.start();
      const err = await runner.run(paths, 'the', { limit: 10, timeLimitMs: 0.01 }).catch((e: unknown) => e);
      expect((err as SearchError).code).toBe('CCP_ERR_SEARCH_TIMEOUT');
      expect((err as SearchError).retryable).toBe(true);
      expect(runner.stats()).toMatchObject({ failed: 1, timeouts: 1, restarts: 0 });
    } finally {
      await runner.close();
    }
  });

  it('gives up on a worker that does not answer within the grace, replaces it and searches on', async () => {
    const timeLimitMs = 300;
    const graceMs = 200;
    const runner = new SearchRunner({ workerPath: testWorker, timeLimitMs, graceMs });
    try {
      await runner.start();
      const t = performance.now();
      const hung = runner.run(paths, 'people spinforever', { limit: 10 });
      // queued behind it: its time runs out while it waits, before the hung one's grace does
      const waiting = runner.run(paths, 'people', { limit: 10 });
      expect(runner.stats()).toMatchObject({ busy: 1, queued: 1 });
      const waitErr = await waiting.catch((e: unknown) => e);
      expect((waitErr as SearchError).code).toBe('CCP_ERR_SEARCH_TIMEOUT');
      expect(performance.now() - t).toBeLessThan(timeLimitMs + graceMs);
      const err = await hung.catch((e: unknown) => e);
      const took = performance.now() - t;
      expect(err).toBeInstanceOf(SearchError);
      expect((err as SearchError).code).toBe('CCP_ERR_SEARCH_TIMEOUT');
      expect(took).toBeGreaterThanOrEqual(timeLimitMs + graceMs - 5);
      expect(took).toBeLessThan(timeLimitMs + graceMs + 500);
      expect(runner.stats()).toMatchObject({ timeouts: 2, failed: 2, restarts: 1, busy: 0, queued: 0 });
      // the replacement answers (its start counts against this search's limit: give it room)
      expect(await runner.run(paths, 'people', { limit: 10, timeLimitMs: SLOW })).toEqual(inProcess('people', { limit: 10 }));
      expect(runner.stats()).toMatchObject({ completed: 1, restarts: 1 });
    } finally {
      await runner.close();
    }
  });

  it('fails the search of a worker that dies with CCP_ERR_SEARCH_WORKER and replaces it', async () => {
    const runner = new SearchRunner({ workerPath: testWorker, timeLimitMs: SLOW });
    try {
      const err = await runner.run(paths, 'people exitnow', { limit: 10 }).catch((e: unknown) => e);
      expect(err).not.toBeInstanceOf(SearchError);
      expect((err as { code: string }).code).toBe('CCP_ERR_SEARCH_WORKER');
      expect(await runner.run(paths, 'people', { limit: 10 })).toEqual(inProcess('people', { limit: 10 }));
      expect(runner.stats()).toMatchObject({ completed: 1, failed: 1, timeouts: 0, restarts: 1 });
    } finally {
      await runner.close();
    }
  });

  it('fails every search when no worker can start (no build)', async () => {
    const runner = new SearchRunner({ workerPath: join(dir, 'no-such-worker.js') });
    try {
      await expect(runner.start()).rejects.toMatchObject({ code: 'CCP_ERR_SEARCH_WORKER' });
      expect(await codeOf(runner.run(paths, 'people', { limit: 10 }))).toBe('CCP_ERR_SEARCH_WORKER');
    } finally {
      await runner.close();
    }
  });

  it('close() fails running and queued searches, and is idempotent', async () => {
    const runner = new SearchRunner({ workerPath: testWorker, timeLimitMs: SLOW });
    await runner.start();
    const running = runner.run(paths, 'people spinforever', { limit: 10 });
    const queued = runner.run(paths, 'people', { limit: 10 });
    expect(runner.stats()).toMatchObject({ busy: 1, queued: 1 });
    const closed = runner.close();
    expect(runner.close()).toBe(closed);
    await closed;
    expect(await codeOf(running)).toBe('CCP_ERR_SEARCH_CLOSED');
    expect(await codeOf(queued)).toBe('CCP_ERR_SEARCH_CLOSED');
    expect(await codeOf(runner.run(paths, 'people', { limit: 10 }))).toBe('CCP_ERR_SEARCH_CLOSED');
    await runner.close();
    expect(runner.stats()).toEqual({ completed: 0, failed: 0, timeouts: 0, restarts: 0, queued: 0, busy: 0 });
  });
});
