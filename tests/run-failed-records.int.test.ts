/**
 * Records the filter kept but that could not be indexed are not hidden: `ccpipe run` (the built CLI) over a mirror
 * one of whose WARC files is gone says how many failed and why, in its summary and at warn level in its log, and so
 * does `ccpipe worker` (over the real RabbitMQ, fed by `ccpipe batcher`); a batcher that had to skip a CDX block ends
 * at warn saying why. The mirror is a copy of one cc-mirror-dev crawl without that file (and, for the last test, with
 * one CDX block overwritten), served by the real mirror server.
 */
import { randomBytes } from 'node:crypto';
import { AmqpConnection, deleteTopology, topologyNames } from '@ccpipe/adapters';
import { cp, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { CC_MIRROR_DEV, DEV_CRAWLS } from './support/corpus';
import { killAll, logLine, markersIn, spawnCcpipe, waitFor, type CcpipeProcess } from './support/processes';

const crawl = DEV_CRAWLS[0];
const GONE = `crawl-data/${crawl}/segments/1700003000.00/warc/CC-MAIN-20301110120000-20301110150000-00001.warc.gz`;
const procs: CcpipeProcess[] = [];
let root: string;
let mirror: MirrorServer;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ccpipe-failed-'));
  const dir = join(root, 'mirror');
  for (const p of ['collinfo.json', `cc-index/collections/${crawl}`, `crawl-data/${crawl}`]) await cp(join(CC_MIRROR_DEV, p), join(dir, p), { recursive: true });
  await rm(join(dir, GONE));
  mirror = await serveMirror({ dir, port: 0 });
});
const prefix = `ccpipe-failed-${randomBytes(4).toString('hex')}`;
afterAll(async () => {
  await killAll(procs);
  const conn = new AmqpConnection({ url: 'amqp://guest:guest@127.0.0.1:5672', reconnect: { maxAttempts: 3 } });
  await conn.start();
  const ch = await conn.createChannel();
  await deleteTopology(ch, topologyNames(prefix)).catch(() => undefined);
  await ch.close().catch(() => undefined);
  await conn.close();
  await mirror.close();
  await rm(root, { recursive: true, force: true });
});

it('says how many kept records failed to be indexed and why, in the summary and at warn level', async () => {
  const p = spawnCcpipe(['run', '--data', join(root, 'data'), '--port', '0', '--base-url', mirror.url, '--crawl', crawl, '--extract-threads', '1', '--batch-size', '60', '--exit-after-merge']);
  procs.push(p);
  expect((await p.exited).code).toBe(0);
  const out = p.text.join('\n');
  const kept = Number(/, (\d+) kept, /.exec(out)?.[1]);
  const m = /^ {4}(\d+) indexed, (\d+) failed \((.+)\)$/m.exec(out);
  expect(m).not.toBeNull();
  const [indexed, failed] = [Number(m![1]), Number(m![2])];
  expect(failed).toBeGreaterThan(0);
  expect(indexed).toBeGreaterThan(0);
  expect(indexed + failed).toBe(kept); // every kept record is accounted for
  expect(m![3]).toMatch(/^CCP_ERR_FETCH_STATUS: \d+/); // the missing WARC answered 404
  const warn = p.logs.find((l) => l['msg'] === 'records kept by the filter failed to be indexed');
  expect(warn).toMatchObject({ level: 'warn', crawl, kept, rows: indexed, failed, failures: { CCP_ERR_FETCH_STATUS: expect.any(Number) } });
  expect(p.logs.filter((l) => l['msg'] === 'batch done, with records failed').every((l) => l['level'] === 'warn')).toBe(true);
}, 300_000);

it('a worker logs a batch with failed records at warn, with the count and the reasons', async () => {
  const data = join(root, 'data-services');
  const common = ['--data', data, '--base-url', mirror.url, '--queue-prefix', prefix, '--metrics-port', '0'];
  const b = spawnCcpipe(['batcher', '--crawl', crawl, '--batch-size', '60', ...common]);
  procs.push(b);
  expect((await b.exited).code).toBe(0);
  const batches = logLine(b, 'batcher done')!['batches'] as number;
  const w = spawnCcpipe(['worker', '--extract-threads', '1', ...common]);
  procs.push(w);
  await waitFor('every batch done', async () => (await markersIn(data)).length === batches, 240_000, 500);
  await waitFor('the last batch logged', () => w.logs.filter((l) => String(l['msg']).startsWith('batch done')).length === batches, 10_000);
  const withFailures = w.logs.filter((l) => l['msg'] === 'batch done, with records failed');
  expect(withFailures.length).toBeGreaterThan(0);
  for (const l of withFailures) {
    expect(l).toMatchObject({ level: 'warn', failures: { CCP_ERR_FETCH_STATUS: expect.any(Number) } });
    expect(l['failed']).toBe(Object.values(l['failures'] as Record<string, number>).reduce((a, n) => a + n, 0));
  }
  expect(w.logs.filter((l) => l['msg'] === 'batch done').every((l) => l['failed'] === 0)).toBe(true);
  w.child.kill('SIGTERM');
  expect((await w.exited).code).toBe(0);
}, 300_000);

it('a batcher that skipped a CDX block it cannot inflate ends at warn, with the count and the code', async () => {
  // the first block of the crawl (cluster.idx: cdx-00000.gz at 0, 5941 bytes), its gzip header kept, its body zeroed
  const f = await open(join(root, 'mirror', `cc-index/collections/${crawl}/indexes/cdx-00000.gz`), 'r+');
  await f.write(Buffer.alloc(2000), 0, 2000, 100);
  await f.close();
  const b = spawnCcpipe(['batcher', '--crawl', crawl, '--data', join(root, 'data-skipped'), '--base-url', mirror.url, '--queue-prefix', prefix, '--metrics-port', '0']);
  procs.push(b);
  expect((await b.exited).code).toBe(0);
  expect(logLine(b, 'batcher done, with blocks skipped')).toMatchObject({ level: 'warn', failedBlocks: 1, failedBlockCodes: { CCP_ERR_CDX_BLOCK: 1 } });
  expect(logLine(b, 'batcher done')).toBeUndefined();
}, 120_000);
