/**
 * A filter that cannot match, as a user meets it with the real `ccpipe batcher` (the real RabbitMQ, a mirror server
 * over cc-mirror-dev): a code that is not ISO 639-3 is refused at start; a valid code no record carries runs, keeps
 * nothing and says so at warn level; the dataset's usual settings are then refused, pointing at --reset-checkpoint,
 * which starts it over under those settings.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AmqpConnection, deleteTopology, topologyNames } from '@ccpipe/adapters';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { FILTER_KEPT_NOTHING } from '../packages/batcher/src/main';
import { DEV_CRAWLS } from './support/corpus';
import { CC_MIRROR_DEV } from './support/corpus';
import { killAll, spawnCcpipe, type CcpipeProcess } from './support/processes';

const prefix = `ccpipe-reset-${randomBytes(4).toString('hex')}`;
const crawl = DEV_CRAWLS[0];
let data: string;
let mirror: MirrorServer;
const procs: CcpipeProcess[] = [];

beforeAll(async () => {
  data = await mkdtemp(join(tmpdir(), 'ccpipe-reset-'));
  mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
});
afterAll(async () => {
  await killAll(procs);
  const conn = new AmqpConnection({ url: 'amqp://guest:guest@127.0.0.1:5672', reconnect: { maxAttempts: 3 } });
  await conn.start();
  const ch = await conn.createChannel();
  await deleteTopology(ch, topologyNames(prefix)).catch(() => undefined);
  await ch.close().catch(() => undefined);
  await conn.close();
  await mirror.close();
  await rm(data, { recursive: true, force: true });
});

async function batcher(...extra: string[]): Promise<{ code: number | null; p: CcpipeProcess }> {
  const p = spawnCcpipe(['batcher', '--crawl', crawl, '--base-url', mirror.url, '--data', data, '--queue-prefix', prefix, '--metrics-port', '0', ...extra]);
  procs.push(p);
  return { code: (await p.exited).code, p };
}

it('refuses a code that is not ISO 639-3, warns when a valid one keeps nothing, and lets --reset-checkpoint change the filter', async () => {
  const bad = await batcher('--languages', 'en');
  expect(bad.code).toBe(1);
  expect(bad.p.text.join('')).toContain('--languages / CCPIPE_FILTER_LANGUAGES: "en" is not an ISO 639-3 code: Common Crawl writes "eng"');

  const zulu = await batcher('--languages', 'zul');
  expect(zulu.code).toBe(0);
  const warning = zulu.p.logs.find((l) => l['msg'] === FILTER_KEPT_NOTHING);
  expect(warning).toMatchObject({ level: 'warn', filter: { languages: { codes: ['zul'] } }, dropped: { language: expect.any(Number) } });
  expect(warning!['records']).toBeGreaterThan(0);

  const usual = await batcher();
  expect(usual.code).toBe(1);
  expect(usual.p.logs.find((l) => l['msg'] === 'batcher failed')?.['err']).toMatchObject({
    code: 'CCP_ERR_CHECKPOINT_MISMATCH',
    message: expect.stringMatching(/published no batch under them; to start it over with these settings, run ccpipe batcher again with --reset-checkpoint$/),
  });

  const reset = await batcher('--reset-checkpoint');
  expect(reset.code).toBe(0);
  const done = reset.p.logs.find((l) => l['msg'] === 'batcher done');
  expect(done).toMatchObject({ kept: expect.any(Number), batches: expect.any(Number) });
  expect(done!['kept']).toBeGreaterThan(0);
  expect(reset.p.logs.some((l) => l['msg'] === FILTER_KEPT_NOTHING)).toBe(false);

  // done under the new settings: a rerun finds it complete, flag or not
  const again = await batcher('--reset-checkpoint');
  expect(again.code).toBe(0);
  expect(again.p.logs.some((l) => l['msg'] === 'run already complete')).toBe(true);
}, 120_000);
