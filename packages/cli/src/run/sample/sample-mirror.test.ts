import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { canonicalizeUrl, parseCdxLine, parseClusterIdx, readWarcRecord, registeredDomainOf, type CdxRecord } from '@ccpipe/core';
import { ensureSampleMirror, writeSampleWarcs } from './sample-mirror';
import { IDN_HOST, SAMPLE_CRAWLS } from './sample-sites';

async function filesOf(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const e of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) out.set(path.relative(dir, path.join(e.parentPath, e.name)), await fsp.readFile(path.join(e.parentPath, e.name)));
  }
  return out;
}

/** Every CDX line of a crawl, read through cluster.idx as the batcher does. */
async function cdxOf(root: string, crawl: string): Promise<CdxRecord[]> {
  const dir = path.join(root, 'cc-index/collections', crawl, 'indexes');
  const out: CdxRecord[] = [];
  for (const e of parseClusterIdx(await fsp.readFile(path.join(dir, 'cluster.idx'), 'utf8'))) {
    const shard = await fsp.readFile(path.join(dir, e.shard));
    for (const l of gunzipSync(shard.subarray(e.offset, e.offset + e.length)).toString('utf8').split('\n')) if (l) out.push(parseCdxLine(l));
  }
  return out;
}

describe('the bundled sample crawl', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'ccpipe-sample-'));
  });
  afterAll(async () => {
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('writes byte-identical WARC files on every run', async () => {
    await writeSampleWarcs(path.join(tmp, 'a'));
    await writeSampleWarcs(path.join(tmp, 'b'));
    const a = await filesOf(path.join(tmp, 'a'));
    const b = await filesOf(path.join(tmp, 'b'));
    expect(a.size).toBe(4);
    expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
    for (const [k, v] of a) expect(v.equals(b.get(k)!)).toBe(true);
  });

  it('is a Common Crawl layout with the quirks the pipeline must handle', async () => {
    const dir = path.join(tmp, 'mirror');
    const first = await ensureSampleMirror(dir);
    expect(first.built).toBe(true);
    expect((await ensureSampleMirror(dir)).built).toBe(false);
    const coll = JSON.parse(await fsp.readFile(path.join(dir, 'collinfo.json'), 'utf8')) as { id: string }[];
    expect(coll.map((c) => c.id).sort()).toEqual(SAMPLE_CRAWLS.map((c) => c.name));

    const per = await Promise.all(SAMPLE_CRAWLS.map((c) => cdxOf(dir, c.name)));
    for (const records of per) {
      expect(records.length).toBeGreaterThan(100);
      const statuses = new Set(records.map((r) => r.status));
      expect([...statuses].sort()).toEqual(['200', '301', '404']);
      expect(records.filter((r) => r.status === '301').every((r) => r.redirect?.startsWith('https://'))).toBe(true);
      expect(records.some((r) => r.url.endsWith('/robots.txt') && r.mime === 'text/plain' && r.languages.length === 0)).toBe(true);
      const langs = new Set(records.flatMap((r) => r.languages.slice(0, 1)));
      for (const l of ['eng', 'deu', 'fra', 'spa', 'ita']) expect(langs).toContain(l);
      const domains = new Set(records.map((r) => registeredDomainOf(new URL(r.url).hostname)));
      for (const d of ['maple-street-books.com', 'harbourside-gazette.co.uk', 'github.io', canonicalizeUrl(`https://${IDN_HOST}/`).domain]) expect(domains).toContain(d);
      // Pagination: many pages of one path that differ only in the query.
      expect(records.filter((r) => r.url.includes('/archive?')).length).toBeGreaterThanOrEqual(25);
    }
    // The two crawls overlap but differ (new pages, pages gone).
    const urls = per.map((rs) => new Set(rs.filter((r) => r.status === '200').map((r) => r.url)));
    const both = [...urls[0]!].filter((u) => urls[1]!.has(u)).length;
    expect(both).toBeGreaterThan(50);
    expect(urls[1]!.size).toBeGreaterThan(both);
    expect(urls[0]!.size).toBeGreaterThan(both);

    // Each CDX line points at a gzip member holding its response record.
    const r = per[0]!.find((x) => x.status === '200' && x.languages[0] === 'eng')!;
    const warc = await fsp.readFile(path.join(dir, r.filename));
    const rec = readWarcRecord(warc.subarray(r.offset, r.offset + r.length));
    expect([rec.type, rec.targetUri]).toEqual(['response', r.url]);
  }, 60_000);
});
