/**
 * `--mode auto` on a crawl large enough for its CDX sample to be a small part of the plan (docs/bulk.md, "Choosing the
 * mode"): a synthetic mirror of 60 WARC files and 8 CDX files, the built `ccpipe batcher` as a process against it over
 * HTTP, the real RabbitMQ. What auto estimates is checked against what the generator wrote, not against itself.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { chooseMode, type ModeChoice, type ModeEstimate } from '@ccpipe/batcher';
import { ownRuns } from './support/own-run';
import { logLine, spawnCcpipe } from './support/processes';
import { buildSyntheticMirror, type SyntheticCapture, type SyntheticMirror } from './support/synthetic-mirror';

const newRun = ownRuns('auto-mode');

/** What one `ccpipe batcher --mode auto` run chose, counted and kept in its checkpoint. */
interface AutoRun {
  chosen: ModeChoice;
  done: { records: number; kept: number };
  checkpoint: { mode?: string; modeChoice?: ModeChoice };
}

/** The truth of a filter over the generated records: how many it keeps and their bytes. */
function truth(m: SyntheticMirror, keep: (c: SyntheticCapture) => boolean): { kept: number; share: number; keptBytes: number } {
  const kept = m.captures.filter(keep);
  return { kept: kept.length, share: kept.length / m.captures.length, keptBytes: kept.reduce((n, c) => n + c.length, 0) };
}

/** The estimate auto would have made from a perfect sample: the plan's true records, kept records and their bytes. */
function exact(m: SyntheticMirror, est: ModeEstimate, keep: (c: SyntheticCapture) => boolean): ModeEstimate {
  const t = truth(m, keep);
  const allBytes = m.captures.reduce((n, c) => n + c.length, 0);
  return { ...est, records: m.captures.length, kept: t.kept, ranges: { requests: t.kept + est.plannedBlocks, bytes: t.keptBytes }, bulk: { ...est.bulk, bytes: Math.round(allBytes * 1.1) } };
}

/** Three standard errors of a share estimated from `n` records drawn independently (the generator draws kinds per page). */
const threeSe = (share: number, n: number): number => 3 * Math.sqrt((share * (1 - share)) / n);

let dir = '';
let mirror: SyntheticMirror;
let server: MirrorServer;
let domain = '';
let runs: Record<'whole' | 'domains' | 'selective', AutoRun>;

async function auto(extra: string[]): Promise<AutoRun> {
  const run = await newRun();
  const b = spawnCcpipe([
    'batcher', '--crawl', mirror.crawl, '--data', run.data, '--base-url', server.url, '--queue-prefix', run.prefix, '--metrics-port', '0', ...extra,
  ]);
  run.procs.push(b);
  const { code } = await b.exited;
  expect({ code, out: b.text.join('') }).toMatchObject({ code: 0 });
  const checkpoint = JSON.parse(await readFile(join(run.data, 'batcher', mirror.crawl, 'checkpoint.json'), 'utf8')) as AutoRun['checkpoint'];
  return { chosen: logLine(b, 'read mode chosen') as unknown as ModeChoice, done: logLine(b, 'batcher done') as unknown as AutoRun['done'], checkpoint };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-auto-mode-'));
  mirror = await buildSyntheticMirror(join(dir, 'mirror'), { warcFiles: 60, recordsPerFile: 120, blockSize: 30, shards: 8 });
  server = await serveMirror({ dir: mirror.dir, port: 0 });
  // a mid-sized site: the 10th by pages
  const pages = new Map<string, number>();
  for (const c of mirror.captures) pages.set(c.domain, (pages.get(c.domain) ?? 0) + 1);
  domain = [...pages].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[9]![0];
  const domainsFile = join(dir, 'domains.txt');
  await writeFile(domainsFile, `${domain}\n`);
  const [whole, domains, selective] = await Promise.all([auto([]), auto(['--domains', domainsFile]), auto(['--languages', 'deu'])]);
  runs = { whole, domains, selective };
}, 180_000);

afterAll(async () => {
  await server?.close();
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('--mode auto on a 60-file synthetic crawl', () => {
  it('the mirror is large next to the sample: 240 blocks over 8 CDX files, of which auto reads 24', () => {
    expect(mirror.summary).toMatchObject({ warcFiles: 60, cdxLines: 7200, blocks: 240, shards: 8 });
    const est = runs.whole.chosen.estimate!;
    expect(est).toMatchObject({ plannedBlocks: 240, cdxFiles: 8, warcFiles: 60, sampledBlocks: 24 });
    expect(est.sampledRecords / mirror.captures.length).toBeLessThan(0.15);
  });

  it('the whole default filter (200, English) reads whole WARC files, from an estimate close to the truth', () => {
    const t = truth(mirror, (c) => c.status === 200 && c.language === 'eng');
    const { chosen, done, checkpoint } = runs.whole;
    // what the batcher kept is what the generator wrote: the truth below is the run's
    expect(done.kept).toBe(t.kept);
    expect(chosen).toMatchObject({ mode: 'bulk', asked: 'auto', reason: expect.stringMatching(/^the filter keeps ≈ [\d.]+% of the records: reading whole WARC files moves/) as string });
    expect([checkpoint.mode, checkpoint.modeChoice?.mode]).toEqual(['bulk', 'bulk']);
    const est = chosen.estimate!;
    expect(Math.abs(est.kept / est.records - t.share)).toBeLessThan(threeSe(t.share, est.sampledRecords));
    // planned blocks × records per sampled block (a CDX file's last block may be short: a little over, never under)
    expect(est.records / mirror.captures.length).toBeGreaterThan(0.95);
    expect(est.records / mirror.captures.length).toBeLessThan(1.1);
    // a range request per kept record and per CDX block
    expect(est.ranges).toEqual({ requests: est.kept + est.plannedBlocks, bytes: expect.any(Number) as number });
    expect(est.ranges.bytes / t.keptBytes).toBeGreaterThan(0.85);
    expect(est.ranges.bytes / t.keptBytes).toBeLessThan(1.15);
    // bulk reads every WARC byte: the estimate adds 10 % to the responses for request and metadata records; this
    // mirror's warcinfo and request records add ≈ 4 %
    expect(est.bulk.requests).toBe(60 + 8);
    expect(est.bulk.bytes / mirror.warcBytes).toBeGreaterThan(0.9);
    expect(est.bulk.bytes / mirror.warcBytes).toBeLessThan(1.2);
    // not an accident of the sample: from the true counts, the same choice
    expect(chooseMode(exact(mirror, est, (c) => c.status === 200 && c.language === 'eng')).mode).toBe('bulk');
  });

  it('a --domains run of one site reads in ranges', () => {
    const t = truth(mirror, (c) => c.domain === domain && c.status === 200 && c.language === 'eng');
    const { chosen, done, checkpoint } = runs.domains;
    expect(t.kept).toBeGreaterThan(20);
    expect(done.kept).toBe(t.kept);
    expect(chosen).toMatchObject({ mode: 'ranges', asked: 'auto', reason: expect.stringMatching(/^a --domains run reads only the blocks of its domains/) as string });
    expect([checkpoint.mode ?? 'ranges', checkpoint.modeChoice?.mode]).toEqual(['ranges', 'ranges']);
  });

  it('a filter keeping ≈ 1 % of the records (German pages) reads in ranges: the range requests cost less', () => {
    const t = truth(mirror, (c) => c.status === 200 && c.language === 'deu');
    const { chosen, done, checkpoint } = runs.selective;
    expect(t.share).toBeGreaterThan(0.005);
    expect(t.share).toBeLessThan(0.02);
    expect(done.kept).toBe(t.kept);
    expect(chosen).toMatchObject({
      mode: 'ranges', asked: 'auto',
      reason: expect.stringMatching(/^the filter keeps ≈ [\d.]+% of the records: \d+ range requests \([\d.]+ [kMG]B\) cost less than reading 60 whole WARC files/) as string,
    });
    expect([checkpoint.mode ?? 'ranges', checkpoint.modeChoice?.mode]).toEqual(['ranges', 'ranges']);
    const est = chosen.estimate!;
    // the sample found German pages (a 0 % estimate would choose ranges for no reason of its own)
    expect(est.sampledKept).toBeGreaterThan(0);
    expect(Math.abs(est.kept / est.records - t.share)).toBeLessThan(threeSe(t.share, est.sampledRecords));
    expect(chooseMode(exact(mirror, est, (c) => c.status === 200 && c.language === 'deu')).mode).toBe('ranges');
  });
});
