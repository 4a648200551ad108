import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ShardBuildPool, buildSearchShard, openSearchShard, parseSearchQuery, type SearchDoc } from './index';

const SH = resolve(__dirname, '../../../../shared/corpus/scrapinghub-article-extraction-benchmark/ground-truth.json');
const articles = Object.values(JSON.parse(readFileSync(SH, 'utf8')) as Record<string, { articleBody: string }>).slice(0, 120);
const docs = (from: number, to: number): SearchDoc[] =>
  articles.slice(from, to).map((a, i) => ({ rowId: from + i, urlId: BigInt(from + i) * 7919n, url: `https://s${(from + i) % 3}.example/${from + i}`, domain: `s${(from + i) % 3}.example`, datasetId: 1, ts: 1_700_000_000 + i, title: `Article ${from + i}`, text: a.articleBody }));

let dir: string;
let pool: ShardBuildPool;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ccpipe-build-pool-'));
  pool = new ShardBuildPool({ threads: 2, batch: 7 });
});
afterAll(async () => {
  await pool.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What a search answers from a shard file: hit rows and scores for a few queries. */
function answers(path: string): unknown[] {
  const s = openSearchShard(path);
  try {
    return ['the', '"in the"', 'government -the', 'article'].map((q) => s.search(parseSearchQuery(q), { limit: 20 }).hits.map((h) => [h.rowId, h.url, h.snippet, h.score.toFixed(9)]));
  } finally {
    s.close();
  }
}

describe('ShardBuildPool', () => {
  it('builds on worker threads the shard buildSearchShard builds, several at once, from an async stream', async () => {
    const inline = await buildSearchShard(join(dir, 'inline.db'), docs(0, 60));
    async function* stream(): AsyncGenerator<SearchDoc> {
      for (const d of docs(0, 60)) {
        await new Promise((r) => setImmediate(r));
        yield d;
      }
    }
    const [a, b, c] = await Promise.all([pool.build(join(dir, 'a.db'), stream()), pool.build(join(dir, 'b.db'), docs(60, 120)), pool.build(join(dir, 'c.db'), stream())]);
    expect({ ...a, ms: 0 }).toEqual({ ...inline, ms: 0 });
    expect(c.docs).toBe(60);
    expect(b.docs).toBe(60);
    expect(answers(join(dir, 'a.db'))).toEqual(answers(join(dir, 'inline.db')));
    expect((answers(join(dir, 'a.db'))[0] as unknown[]).length).toBeGreaterThan(0);
  });

  it('fails a build with a duplicate rowId or a failing stream without leaving a file; the pool builds on', async () => {
    const dup = [...docs(0, 10), ...docs(5, 6)];
    await expect(pool.build(join(dir, 'dup.db'), dup)).rejects.toThrow(/UNIQUE|constraint/i);
    async function* broken(): AsyncGenerator<SearchDoc> {
      yield* docs(0, 20);
      throw new Error('the reader failed');
    }
    await expect(pool.build(join(dir, 'broken.db'), broken())).rejects.toThrow('the reader failed');
    await new Promise((r) => setTimeout(r, 100)); // the abort message reaches the thread
    expect(readdirSync(dir).filter((f) => f.startsWith('dup') || f.startsWith('broken'))).toEqual([]);
    const ok = await pool.build(join(dir, 'after.db'), docs(0, 5));
    expect(ok.docs).toBe(5);
    expect(existsSync(join(dir, 'after.db'))).toBe(true);
  });
});
