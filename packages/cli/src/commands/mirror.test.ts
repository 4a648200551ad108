import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Command } from 'commander';
import { registerMirrorCommand, type MirrorCommandIo } from './mirror';

const REPO_ROOT = path.resolve(__dirname, '../../../..');
const CC_MIRROR_DEV = path.join(REPO_ROOT, '../shared/corpus/cc-mirror-dev');
const WARC = 'crawl-data/CC-MAIN-2030-40/segments/1700003000.00/warc/CC-MAIN-20301110120000-20301110150000-00001.warc.gz';

function harness(): { program: Command; out: string[]; errors: string[]; stop: () => void; io: MirrorCommandIo } {
  const out: string[] = [];
  const errors: string[] = [];
  let release: () => void = () => undefined;
  const stopped = new Promise<void>((r) => {
    release = r;
  });
  const io: MirrorCommandIo = { write: (l) => void out.push(l), error: (l) => void errors.push(l), waitForStop: () => stopped };
  const program = new Command('ccpipe').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  registerMirrorCommand(program, io);
  return { program, out, errors, stop: release, io };
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe('ccpipe mirror build', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'ccpipe-cli-mirror-'));
  });
  afterAll(() => fsp.rm(tmp, { recursive: true, force: true }));

  it('indexes a WARC and prints records, CDX lines and blocks', async () => {
    const { program, out } = harness();
    const dest = path.join(tmp, 'm');
    await program.parseAsync(['node', 'ccpipe', 'mirror', 'build', '--crawl', 'CC-MAIN-2030-40', '--out', dest, '--block-size', '100', '--no-languages', path.join(CC_MIRROR_DEV, WARC)]);
    const text = out.join('');
    const idx = await fsp.readFile(path.join(dest, 'cc-index/collections/CC-MAIN-2030-40/indexes/cluster.idx'), 'utf8');
    const blocks = idx.trim().split('\n').length;
    const lines = gunzipSync(await fsp.readFile(path.join(dest, 'cc-index/collections/CC-MAIN-2030-40/indexes/cdx-00000.gz'))).toString('utf8').trim().split('\n');
    const records = gunzipSync(await fsp.readFile(path.join(CC_MIRROR_DEV, WARC))).toString('latin1').split('\r\nWARC-Type: ').length - 1;
    expect(text).toContain(`records ${records}, CDX lines ${lines.length}, blocks ${blocks}, shards 1`);
    expect(blocks).toBe(Math.ceil(lines.length / 100));
    expect(lines.some((l) => l.includes('"languages"'))).toBe(false);
    await expect(fsp.stat(path.join(dest, WARC))).resolves.toBeTruthy();
  });

  it('leaves out records whose WARC-Date is no date (ClueWeb09: 2008-10-294T…) with a warning, never an impossible timestamp', async () => {
    const { program, out, errors } = harness();
    const dest = path.join(tmp, 'clueweb');
    await program.parseAsync(['node', 'ccpipe', 'mirror', 'build', '--crawl', 'CLUEWEB-QUIRK', '--out', dest, '--no-languages', path.join(REPO_ROOT, '../shared/corpus/chatnoir-resiliparse/clueweb-quirk.warc.gz')]);
    const skipped = Number(/bad_date=(\d+)/.exec(out.join(''))?.[1]);
    expect(skipped).toBeGreaterThan(0);
    expect(errors.join('')).toBe(`warning: ${skipped} record(s) left out: their WARC-Date is not a valid date and time (bad_date)\n`);
    // every CDX line that was written carries a real instant (in this file every capture has the bad date)
    const idx = path.join(dest, 'cc-index/collections/CLUEWEB-QUIRK/indexes');
    const written = Number(/CDX lines (\d+)/.exec(out.join(''))?.[1]);
    let checked = 0;
    for (const f of (await fsp.readdir(idx)).filter((n) => n.startsWith('cdx-'))) {
      const bytes = await fsp.readFile(path.join(idx, f));
      for (const line of (bytes.length === 0 ? '' : gunzipSync(bytes).toString('utf8')).split('\n').filter(Boolean)) {
        checked++;
        const ts = line.split(' ')[1]!;
        const iso = `${ts.slice(0, 4)}-${ts.slice(4, 6)}-${ts.slice(6, 8)}T${ts.slice(8, 10)}:${ts.slice(10, 12)}:${ts.slice(12, 14)}Z`;
        expect(new Date(iso).toISOString().replace('.000', '')).toBe(iso);
      }
    }
    expect(checked).toBe(written);
  });

  it('refuses a bad block size before doing anything', async () => {
    const { program } = harness();
    await expect(program.parseAsync(['node', 'ccpipe', 'mirror', 'build', '--crawl', 'X', '--out', tmp, '--block-size', '0', 'a.warc'])).rejects.toThrow(/positive integer/);
  });

  it('reports a missing WARC as an error line (stderr) naming it, and exit code 1, and writes nothing', async () => {
    const { program, out, errors } = harness();
    const before = process.exitCode;
    const present = path.join(CC_MIRROR_DEV, 'crawl-data');
    const missing = path.join(tmp, 'missing.warc.gz');
    await program.parseAsync(['node', 'ccpipe', 'mirror', 'build', '--crawl', 'CC-MAIN-2030-40', '--out', path.join(tmp, 'x'), missing]);
    expect(errors.join('')).toBe(`error: input WARC ${missing} does not exist\n`);
    errors.length = 0;
    await program.parseAsync(['node', 'ccpipe', 'mirror', 'build', '--crawl', 'CC-MAIN-2030-40', '--out', path.join(tmp, 'x'), present]);
    expect(errors.join('')).toBe(`error: input WARC ${present} is a directory\n`);
    expect(out).toEqual([]);
    expect(process.exitCode).toBe(1);
    await expect(fsp.stat(path.join(tmp, 'x'))).rejects.toMatchObject({ code: 'ENOENT' });
    process.exitCode = before;
  });
});

describe('ccpipe mirror serve', () => {
  it('prints its URL, serves byte ranges with SlowDown faults, and stops when told', async () => {
    const { program, out, stop } = harness();
    const done = program.parseAsync(['node', 'ccpipe', 'mirror', 'serve', CC_MIRROR_DEV, '--port', '0', '--slow-down-every', '2']);
    await until(() => out.length > 0);
    const url = /^serving (http:\/\/127\.0\.0\.1:\d+)\n$/.exec(out[0] ?? '')?.[1];
    expect(url).toBeDefined();
    const first = await fetch(`${url}/${WARC}`, { headers: { Range: 'bytes=0-99' } });
    expect(first.status).toBe(206);
    const want = (await fsp.readFile(path.join(CC_MIRROR_DEV, WARC))).subarray(0, 100);
    expect(Buffer.from(await first.arrayBuffer()).equals(want)).toBe(true);
    const second = await fetch(`${url}/${WARC}`, { headers: { Range: 'bytes=0-99' } });
    expect(second.status).toBe(503);
    expect(await second.text()).toContain('<Code>SlowDown</Code>');
    stop();
    await done;
    expect(out[out.length - 1]).toBe('stopped\n');
    await expect(fetch(`${url}/collinfo.json`)).rejects.toThrow();
  });
});
