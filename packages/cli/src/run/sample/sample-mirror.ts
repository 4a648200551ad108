import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { buildMirror, type BuildMirrorSummary } from '@ccpipe/mirror';
import { SAMPLE_CRAWLS, sampleCaptures } from './sample-sites';
import { warcFile } from './warc-records';

/** Bump when the generated pages or the mirror layout change: an existing mirror with another version is rebuilt. */
export const SAMPLE_VERSION = 1;
/** CDX lines per ZipNum block in the sample (small, so a crawl has several blocks and shards like a real one). */
export const SAMPLE_BLOCK_SIZE = 20;
const STAMP = 'SAMPLE.json';

/** What {@link ensureSampleMirror} found or built. */
export interface SampleMirror {
  dir: string;
  crawls: string[];
  /** False when an up-to-date mirror was already there. */
  built: boolean;
  summaries: BuildMirrorSummary[];
}

/**
 * Writes the sample crawls' WARC files (two per crawl, one gzip member per record) under `srcDir` in Common Crawl's
 * `segments/SEG/warc/` layout. Deterministic: the same bytes on every run. Returns the files per crawl.
 */
export async function writeSampleWarcs(srcDir: string): Promise<{ crawl: string; warcs: string[] }[]> {
  const out: { crawl: string; warcs: string[] }[] = [];
  for (const [i, c] of SAMPLE_CRAWLS.entries()) {
    const captures = sampleCaptures(i as 0 | 1);
    const dir = path.join(srcDir, c.name, 'segments', c.segment, 'warc');
    await fsp.mkdir(dir, { recursive: true });
    const half = Math.ceil(captures.length / 2);
    const stamp = new Date(c.start).toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const warcs: string[] = [];
    for (const [n, part] of [captures.slice(0, half), captures.slice(half)].entries()) {
      const name = `${c.name}-${stamp}-${String(n).padStart(5, '0')}.warc.gz`;
      const file = path.join(dir, name);
      await fsp.writeFile(file, warcFile(name, new Date(c.start), part));
      warcs.push(file);
    }
    out.push({ crawl: c.name, warcs });
  }
  return out;
}

/**
 * Makes sure `dir` holds the sample mirror (both crawls, Common Crawl's layout, via buildMirror) and returns it.
 * Idempotent: a mirror stamped with the current {@link SAMPLE_VERSION} is reused; otherwise it is (re)built and
 * the stamp written last, so an interrupted build is redone. Throws on fs errors.
 */
export async function ensureSampleMirror(dir: string): Promise<SampleMirror> {
  const crawls = SAMPLE_CRAWLS.map((c) => c.name);
  const stamp = await fsp.readFile(path.join(dir, STAMP), 'utf8').then((s) => JSON.parse(s) as { version?: number }, () => null);
  if (stamp?.version === SAMPLE_VERSION) return { dir, crawls, built: false, summaries: [] };
  await fsp.mkdir(dir, { recursive: true });
  await fsp.rm(path.join(dir, STAMP), { force: true });
  const src = await fsp.mkdtemp(path.join(dir, '.src-'));
  try {
    const summaries: BuildMirrorSummary[] = [];
    for (const { crawl, warcs } of await writeSampleWarcs(src)) {
      summaries.push(await buildMirror({ crawl, out: dir, warcs, blockSize: SAMPLE_BLOCK_SIZE, shards: 2, displayName: `ccpipe sample crawl ${crawl}` }));
    }
    await fsp.writeFile(path.join(dir, STAMP), JSON.stringify({ version: SAMPLE_VERSION, crawls }) + '\n');
    return { dir, crawls, built: true, summaries };
  } finally {
    await fsp.rm(src, { recursive: true, force: true });
  }
}
