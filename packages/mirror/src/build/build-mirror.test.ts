import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { parseCdxLine, parseClusterIdx, readWarcRecord, type CdxRecord } from '@ccpipe/core';
import { buildMirror, type BuildMirrorSummary } from './build-mirror';

const REPO_ROOT = path.resolve(__dirname, '../../../..');
const CORPUS = path.join(REPO_ROOT, '../shared/corpus');
const CC_MIRROR_DEV = path.join(CORPUS, 'cc-mirror-dev');
const CRAWLS = ['CC-MAIN-2030-40', 'CC-MAIN-2030-44'];

/** Every CDX line of a crawl in a mirror, read through its cluster.idx as a client would. */
async function readIndex(root: string, crawl: string): Promise<{ records: CdxRecord[]; lines: string[]; blocks: number }> {
  const dir = path.join(root, 'cc-index/collections', crawl, 'indexes');
  const entries = parseClusterIdx(await fsp.readFile(path.join(dir, 'cluster.idx'), 'utf8'));
  const lines: string[] = [];
  const shards = new Map<string, Buffer>();
  for (const e of entries) {
    if (!shards.has(e.shard)) shards.set(e.shard, await fsp.readFile(path.join(dir, e.shard)));
    const block = gunzipSync(shards.get(e.shard)!.subarray(e.offset, e.offset + e.length)).toString('utf8');
    const blockLines = block.split('\n').filter((l) => l !== '');
    // The layout contract: each entry's key is its block's first line's `SURT TIMESTAMP`.
    expect(blockLines[0]!.startsWith(`${e.surt} ${e.timestamp} `)).toBe(true);
    lines.push(...blockLines);
  }
  return { records: lines.map((l) => parseCdxLine(l)), lines, blocks: entries.length };
}

async function corpusWarcs(crawl: string): Promise<string[]> {
  const paths = gunzipSync(await fsp.readFile(path.join(CC_MIRROR_DEV, 'crawl-data', crawl, 'warc.paths.gz'))).toString('utf8');
  return paths.trim().split('\n').map((p) => path.join(CC_MIRROR_DEV, p));
}

const key = (r: CdxRecord): string => JSON.stringify([r.url, r.status, r.filename, r.offset, r.length]);
const at = (r: CdxRecord): string => `${r.filename}@${r.offset}`;

describe('buildMirror over cc-mirror-dev', () => {
  let out: string;
  const summaries: BuildMirrorSummary[] = [];

  beforeAll(async () => {
    out = await fsp.mkdtemp(path.join(os.tmpdir(), 'ccpipe-build-'));
    for (const crawl of CRAWLS) {
      summaries.push(await buildMirror({ crawl, out, warcs: await corpusWarcs(crawl), blockSize: 50, shards: 3 }));
    }
  }, 300_000);

  afterAll(async () => {
    await fsp.rm(out, { recursive: true, force: true });
  });

  it.each(CRAWLS)('%s: reproduces the (url, status, filename, offset, length) of every CDX line', async (crawl) => {
    const want = await readIndex(CC_MIRROR_DEV, crawl);
    const got = await readIndex(out, crawl);
    expect(got.records.length).toBe(want.records.length);
    expect(new Set(got.records.map(key))).toEqual(new Set(want.records.map(key)));
    // Sorted like CC (byte order of the whole line: SURT, then timestamp) and keyed identically.
    expect([...got.lines].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(got.lines);
    expect(new Set(got.records.map((r) => `${r.url} ${r.timestamp}`))).toEqual(new Set(want.records.map((r) => `${r.url} ${r.timestamp}`)));
    // SURT keys come from core's surtOf, which matches the real CC lines in the corpus (trailing slash and
    // `//` dropped, %-escapes normalised); cc-mirror-dev's generator keeps those, so ~18% of its keys
    // differ. Reported, not asserted: the key is the url engineer's contract.
    const wantSurt = new Map(want.records.map((r) => [at(r), r.surt]));
    const sameSurt = got.records.filter((r) => wantSurt.get(at(r)) === r.surt).length;
    console.log(`${crawl}: SURT key equal to cc-mirror-dev's on ${sameSurt}/${got.records.length}`);
    expect(got.blocks).toBe(want.blocks);
    // Same ZipNum layout: blocks spread evenly over 3 shards, numbered on across shards.
    const cols = async (root: string): Promise<string[]> =>
      (await fsp.readFile(path.join(root, 'cc-index/collections', crawl, 'indexes/cluster.idx'), 'utf8')).trim().split('\n').map((l) => l.split('\t').slice(1, 2).concat(l.split('\t').slice(4)).join(' '));
    expect(await cols(out)).toEqual(await cols(CC_MIRROR_DEV));
  });

  it.each(CRAWLS)('%s: derives mime, mime-detected, digest and redirect as CC does, and the same charset on nearly all', async (crawl) => {
    const want = new Map((await readIndex(CC_MIRROR_DEV, crawl)).records.map((r) => [at(r), r]));
    let sameCharset = 0;
    let n = 0;
    for (const g of (await readIndex(out, crawl)).records) {
      const w = want.get(at(g))!;
      expect([g.mime, g.mimeDetected, g.digest, g.redirect, g.truncated]).toEqual([w.mime, w.mimeDetected, w.digest, w.redirect, w.truncated]);
      // WHATWG decodes ISO-8859-1 as windows-1252, so decodeHtml names it that way.
      n += 1;
      if (g.charset === (w.charset === 'ISO-8859-1' ? 'WINDOWS-1252' : w.charset)) sameCharset += 1;
    }
    console.log(`${crawl}: charset agrees on ${sameCharset}/${n}`);
    // The only known differences: ASCII-only 404/301 bodies the corpus labels with their site's legacy charset.
    expect(sameCharset / n).toBeGreaterThanOrEqual(0.99);
  });

  it('detects the primary language labelled in cc-mirror-dev for most HTML 200s', async () => {
    let labelled = 0;
    let agree = 0;
    let realLabelled = 0;
    let realAgree = 0;
    for (const crawl of CRAWLS) {
      const want = new Map((await readIndex(CC_MIRROR_DEV, crawl)).records.map((r) => [at(r), r]));
      for (const g of (await readIndex(out, crawl)).records) {
        const w = want.get(at(g))!;
        if (w.status !== '200' || w.mime !== 'text/html' || w.languages.length === 0) continue;
        const ok = g.languages[0] === w.languages[0];
        labelled += 1;
        agree += ok ? 1 : 0;
        // The corpus's three synthetic bulk hosts wrap real (often German/Korean) pages but are all labelled `eng`.
        if (!/(^|\.)bulk-\d/.test(new URL(w.url).hostname)) {
          realLabelled += 1;
          realAgree += ok ? 1 : 0;
        }
      }
    }
    const pct = (100 * agree) / labelled;
    const realPct = (100 * realAgree) / realLabelled;
    console.log(`languages: primary agrees on ${agree}/${labelled} (${pct.toFixed(1)}%); real-page hosts ${realAgree}/${realLabelled} (${realPct.toFixed(1)}%)`);
    expect(pct).toBeGreaterThanOrEqual(80);
    expect(realPct).toBeGreaterThanOrEqual(95);
  });

  it('writes warc.paths.gz, cc-index.paths.gz and a merged collinfo.json', async () => {
    for (const crawl of CRAWLS) {
      const warcPaths = gunzipSync(await fsp.readFile(path.join(out, 'crawl-data', crawl, 'warc.paths.gz'))).toString('utf8');
      const wantPaths = gunzipSync(await fsp.readFile(path.join(CC_MIRROR_DEV, 'crawl-data', crawl, 'warc.paths.gz'))).toString('utf8');
      expect(warcPaths.trim().split('\n').sort()).toEqual(wantPaths.trim().split('\n').sort());
      for (const p of warcPaths.trim().split('\n')) {
        const [a, b] = await Promise.all([fsp.readFile(path.join(out, p)), fsp.readFile(path.join(CC_MIRROR_DEV, p))]);
        expect(a.equals(b)).toBe(true);
      }
      const idxPaths = gunzipSync(await fsp.readFile(path.join(out, 'crawl-data', crawl, 'cc-index.paths.gz'))).toString('utf8').trim().split('\n');
      for (const p of idxPaths) await expect(fsp.stat(path.join(out, p))).resolves.toBeTruthy();
      expect(idxPaths).toContain(`cc-index/collections/${crawl}/indexes/cluster.idx`);
    }
    const collinfo = JSON.parse(await fsp.readFile(path.join(out, 'collinfo.json'), 'utf8')) as Array<Record<string, string>>;
    expect(collinfo.map((c) => c.id)).toEqual([...CRAWLS].reverse());
    for (const c of collinfo) {
      expect(Object.keys(c)).toEqual(expect.arrayContaining(['id', 'name', 'cdx-api', 'from', 'to']));
      expect(c.from! <= c.to!).toBe(true);
    }
    for (const [i, crawl] of CRAWLS.entries()) {
      const want = await readIndex(CC_MIRROR_DEV, crawl);
      const s = summaries[i]!;
      expect([s.warcFiles, s.cdxLines, s.blocks, s.shards, s.rewrittenWarcs]).toEqual([3, want.records.length, want.blocks, 3, 0]);
      // Everything read is either indexed or counted: warcinfo/request/metadata are `not_capture`.
      expect(s.records).toBe(s.cdxLines + (s.skipped.not_capture ?? 0));
    }
  });
});

describe('buildMirror from other WARCs (one stream, uncompressed, wget, pywb, revisits)', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'ccpipe-build-stream-'));
  });
  afterAll(async () => {
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('rewrites a single-gzip-stream WARC and an uncompressed one so every CDX range is a standalone member', async () => {
    const src = (await corpusWarcs('CC-MAIN-2030-44'))[0]!;
    const plain = gunzipSync(await fsp.readFile(src));
    await fsp.writeFile(path.join(tmp, 'one-stream.warc.gz'), gzipSync(plain));
    await fsp.writeFile(path.join(tmp, 'uncompressed.warc'), plain);
    const out = path.join(tmp, 'out');
    const summary = await buildMirror({
      crawl: 'TEST-STREAMS', out, segment: '1700000000.00', languages: false,
      warcs: [path.join(tmp, 'one-stream.warc.gz'), path.join(tmp, 'uncompressed.warc'), path.join(CORPUS, 'allenai-dolma-wget-warc/sample-0000.warc.gz')],
    });
    expect(summary.rewrittenWarcs).toBe(2);
    expect(summary.warcPaths).toEqual([
      'crawl-data/TEST-STREAMS/segments/1700000000.00/warc/one-stream.warc.gz',
      'crawl-data/TEST-STREAMS/segments/1700000000.00/warc/sample-0000.warc.gz',
      'crawl-data/TEST-STREAMS/segments/1700000000.00/warc/uncompressed.warc.gz',
    ]);
    const { records } = await readIndex(out, 'TEST-STREAMS');
    expect(records.length).toBe(summary.cdxLines);
    const files = new Map<string, Buffer>();
    for (const r of records) {
      if (!files.has(r.filename)) files.set(r.filename, await fsp.readFile(path.join(out, r.filename)));
      const slice = files.get(r.filename)!.subarray(r.offset, r.offset + r.length);
      // A standalone member: gunzip of exactly this range succeeds and holds one whole record.
      expect(slice[0]).toBe(0x1f);
      const rec = readWarcRecord(slice);
      expect(['response', 'revisit']).toContain(rec.type);
      expect(rec.targetUri).toBe(r.url);
      expect(r.url.startsWith('<')).toBe(false);
    }
    // Both rewritten copies index the same captures as the corpus's own index of the original file.
    const byFile = (f: string): string[] => records.filter((r) => r.filename.endsWith(f)).map((r) => `${r.url} ${r.timestamp} ${r.digest}`).sort();
    const corpus = (await readIndex(CC_MIRROR_DEV, 'CC-MAIN-2030-44')).records.filter((r) => src.endsWith(r.filename));
    const want = corpus.map((r) => `${r.url} ${r.timestamp} ${r.digest}`).sort();
    expect(byFile('one-stream.warc.gz')).toEqual(want);
    expect(byFile('uncompressed.warc.gz')).toEqual(want);
    expect(byFile('sample-0000.warc.gz').length).toBe(22);
  });

  it('merges into an existing collinfo.json and rebuilding a crawl is idempotent', async () => {
    const out = path.join(tmp, 'merge');
    await fsp.mkdir(out, { recursive: true });
    await fsp.copyFile(path.join(CC_MIRROR_DEV, 'collinfo.json'), path.join(out, 'collinfo.json'));
    const warcs = [path.join(CORPUS, 'chatnoir-resiliparse/warcfile.warc.gz')];
    const first = await buildMirror({ crawl: 'CC-MAIN-2020-34', out, warcs, languages: false });
    const idx1 = await fsp.readFile(path.join(out, 'cc-index/collections/CC-MAIN-2020-34/indexes/cdx-00000.gz'));
    const second = await buildMirror({ crawl: 'CC-MAIN-2020-34', out, warcs, languages: false });
    const idx2 = await fsp.readFile(path.join(out, 'cc-index/collections/CC-MAIN-2020-34/indexes/cdx-00000.gz'));
    expect(second).toEqual(first);
    expect(idx2.equals(idx1)).toBe(true);
    const ids = (JSON.parse(await fsp.readFile(path.join(out, 'collinfo.json'), 'utf8')) as Array<{ id: string }>).map((c) => c.id);
    expect(ids).toEqual(['CC-MAIN-2030-44', 'CC-MAIN-2030-40', 'CC-MAIN-2020-34']);
  });

  it('indexes revisit records as pywb does (mime warc/revisit) and agrees with pywb on every capture', async () => {
    const pywb = path.join(CORPUS, 'webrecorder-pywb-sample_archive');
    const out = path.join(tmp, 'pywb');
    const summary = await buildMirror({
      crawl: 'PYWB-SAMPLE', out, segment: '1390000000.00', languages: false,
      warcs: ['iana.warc.gz', 'dupes.warc.gz'].map((f) => path.join(pywb, 'warcs', f)),
    });
    expect(summary.rewrittenWarcs).toBe(0);
    const got = (await readIndex(out, 'PYWB-SAMPLE')).records;
    const want: CdxRecord[] = [];
    for (const f of ['iana.cdxj', 'dupes.cdxj']) {
      const text = await fsp.readFile(path.join(pywb, 'cdxj', f), 'utf8');
      want.push(...text.trim().split('\n').map((l) => parseCdxLine(l)));
    }
    const fields = (r: CdxRecord): string =>
      JSON.stringify([r.url, r.timestamp, path.basename(r.filename), r.offset, r.length, r.mime, r.digest, r.mime === 'warc/revisit' ? '-' : r.status]);
    expect(new Set(got.map(fields))).toEqual(new Set(want.map(fields)));
    expect(got.filter((r) => r.mime === 'warc/revisit').length).toBe(want.filter((r) => r.mime === 'warc/revisit').length);
  });

  it('refuses bad options and two inputs with one mirror path with stable error codes', async () => {
    const out = path.join(tmp, 'bad');
    const warc = path.join(CORPUS, 'allenai-dolma-wget-warc/sample-0001.warc.gz');
    await expect(buildMirror({ crawl: '../x', out, warcs: [warc] })).rejects.toMatchObject({ code: 'CCP_ERR_MIRROR_OPTION' });
    await expect(buildMirror({ crawl: 'X', out, warcs: [warc], blockSize: 0 })).rejects.toMatchObject({ code: 'CCP_ERR_MIRROR_OPTION' });
    await expect(buildMirror({ crawl: 'X', out, warcs: [warc], segment: 'a/b' })).rejects.toMatchObject({ code: 'CCP_ERR_MIRROR_OPTION' });
    await expect(buildMirror({ crawl: 'X', out, warcs: [warc], shards: 2, blocksPerShard: 2 })).rejects.toMatchObject({ code: 'CCP_ERR_MIRROR_OPTION' });
    await expect(buildMirror({ crawl: 'X', out, warcs: [warc, warc], languages: false })).rejects.toMatchObject({ code: 'CCP_ERR_MIRROR_PATH_CLASH' });
  });
});
