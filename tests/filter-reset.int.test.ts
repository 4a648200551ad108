/**
 * A filter that cannot match, as a user meets it with the real `ccpipe batcher` (the real RabbitMQ, a mirror server
 * over cc-mirror-dev): a code that is not ISO 639-3 is refused at start; a valid code no record carries runs, keeps
 * nothing and says so at warn level; the dataset's usual settings are then refused, pointing at --reset-checkpoint,
 * which starts it over under those settings.
 */
import { FILTER_KEPT_NOTHING } from '../packages/batcher/src/main';
import { DEV_CRAWLS } from './support/corpus';
import { ownRun } from './support/own-run';
import { spawnCcpipe, type CcpipeProcess } from './support/processes';

const run = ownRun('reset');
const crawl = DEV_CRAWLS[0];

async function batcher(...extra: string[]): Promise<{ code: number | null; p: CcpipeProcess }> {
  const p = spawnCcpipe(['batcher', '--crawl', crawl, '--base-url', run.mirror.url, '--data', run.data, '--queue-prefix', run.prefix, '--metrics-port', '0', ...extra]);
  run.procs.push(p);
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
