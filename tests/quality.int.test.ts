/**
 * The quality step end to end (#22): `ccpipe run` over a mirror of cc-mirror-dev with a quality filter, as a separate
 * process — every extracted text gets its language and signals in the lake, the filter's drops are counted by name in
 * `ccpipe status`, kept as rows with `dropped_by` under --keep-dropped and left out otherwise, and /v1/url answers the
 * text's language.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { CC_MIRROR_DEV, DEV_CRAWLS } from './support/corpus';
import { killAll, logLine, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';
import { tempDirEach } from './support/temp-dir';

let dir = '';
tempDirEach('ccpipe-quality-', (d) => (dir = d));
let mirror: MirrorServer | null = null;
const procs: CcpipeProcess[] = [];
beforeAll(async () => {
  mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
});
afterEach(async () => killAll(procs.splice(0)));
afterAll(async () => mirror?.close());

async function run(args: string[]): Promise<{ code: number | null; stdout: string; text: string }> {
  const p = spawnCcpipe(args);
  procs.push(p);
  const { code } = await p.exited;
  return { code, stdout: p.stdout, text: p.text.join('') };
}

/** Every row of the lake's files (read by hyparquet). */
async function lakeRows(data: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(d, e.name));
      else if (e.name.endsWith('.parquet')) {
        const b = await readFile(join(d, e.name));
        out.push(...(await parquetReadObjects({ file: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer, compressors })));
      }
    }
  };
  await walk(join(data, 'urls'));
  return out;
}

it('measures every text, drops by --min-words (kept with dropped_by under --keep-dropped), counts drops by filter, answers text_language', async () => {
  const crawl = DEV_CRAWLS[0];
  const common = ['run', '--crawl', crawl, '--base-url', mirror!.url, '--max-blocks', '3', '--port', '0', '--exit-after-merge', '--min-words', '150'];
  const kept = join(dir, 'kept');
  const a = await run([...common, '--keep-dropped', 'true', '--data', kept]);
  expect([a.code, a.text.slice(-2000)]).toEqual([0, expect.any(String)]);
  const rowsA = await lakeRows(kept);
  const withText = rowsA.filter((r) => r['word_count'] !== null);
  expect(withText.length).toBeGreaterThan(20);
  // the filter's rule, row by row: dropped exactly when the text has fewer than 150 words
  for (const r of withText) expect([r['url'], r['dropped_by']]).toEqual([r['url'], Number(r['word_count']) < 150 ? 'min-words' : null]);
  const droppedA = withText.filter((r) => r['dropped_by'] === 'min-words');
  expect(droppedA.length).toBeGreaterThan(0);
  expect(droppedA.length).toBeLessThan(withText.length);
  // rows without text (error pages, non-HTML) are not documents: no signals, no filter
  for (const r of rowsA.filter((x) => x['word_count'] === null)) expect([r['dropped_by'], r['text_language']]).toEqual([null, null]);
  // the texts' languages: mostly English in this crawl, each with a confidence
  const langs = withText.filter((r) => r['text_language'] !== null);
  expect(langs.filter((r) => r['text_language'] === 'eng').length).toBeGreaterThan(langs.length / 2);
  for (const r of langs) expect(Number(r['text_language_confidence'])).toBeGreaterThan(0);

  const status = await run(['status', '--data', kept, '--queue-prefix', `ccpipe-quality-${process.pid}`]);
  const ds = Object.values((JSON.parse(status.stdout) as any).batches.datasets) as Record<string, any>[];
  expect(ds[0]!['droppedByFilter']).toEqual({ 'min-words': droppedA.length });

  // without --keep-dropped the same documents have no row, and nothing else changes
  const lean = join(dir, 'lean');
  expect((await run([...common, '--data', lean])).code).toBe(0);
  const rowsB = await lakeRows(lean);
  const urls = (rows: Record<string, unknown>[]) => rows.map((r) => r['url'] as string).sort();
  expect(urls(rowsB)).toEqual(urls(rowsA.filter((r) => r['dropped_by'] === null)));

  // /v1/url answers the text's language (a kept-dropped row, served from the first lake)
  const api = spawnCcpipe(['api', '--data', kept, '--api-port', '0', '--api-host', '127.0.0.1']);
  procs.push(api);
  const listening = (await waitFor('api listening', () => logLine(api, 'api listening'), 60_000))!;
  const probe = langs.find((r) => r['dropped_by'] === 'min-words') ?? langs[0]!;
  const res = (await (await fetch(`http://127.0.0.1:${String(listening['port'])}/v1/url?url=${encodeURIComponent(probe['url'] as string)}`)).json()) as any;
  expect(res.captures[0]).toMatchObject({ text_language: probe['text_language'], text_language_confidence: expect.any(Number) });
}, 300_000);

it('refuses a quality setting that cannot work, naming it', async () => {
  const r = await run(['worker', '--quality-filters', 'min-words,no-such-filter', '--text-languages', 'xx']);
  expect(r.code).toBe(1);
  expect(r.text).toContain('unknown quality filter "no-such-filter"');
  expect(r.text).toContain('"xx" is not an ISO 639-3 code');
});
