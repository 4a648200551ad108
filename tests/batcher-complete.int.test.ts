/**
 * A batcher SIGKILLed after its checkpoint passed every planned block but before it saved `done: true` (the chaos
 * suite's batcher kill landed there with seed 171357969): rerun, it must mark the crawl done — not only say
 * "run already complete" and leave the checkpoint so, which kept `/v1/status` from ever calling the crawl done.
 * The real `ccpipe batcher` on cc-mirror-dev, the real RabbitMQ (a queue prefix of its own, deleted after).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEV_CRAWLS, loadOracle } from './support/corpus';
import { ownRun } from './support/own-run';
import { logLine, spawnCcpipe, type CcpipeProcess } from './support/processes';

const run = ownRun('complete');
const crawl = DEV_CRAWLS[1];

async function batcher(): Promise<CcpipeProcess> {
  const p = spawnCcpipe(['batcher', '--crawl', crawl, '--batch-size', '25', '--base-url', run.mirror.url, '--data', run.data, '--queue-prefix', run.prefix, '--metrics-port', '0']);
  run.procs.push(p);
  expect((await p.exited).code).toBe(0);
  return p;
}

it('a rerun after a kill between the last checkpoint save and the done one marks the crawl done, counts kept', async () => {
  const path = join(run.data, 'batcher', crawl, 'checkpoint.json');
  const first = await batcher();
  expect(logLine(first, 'batcher done')).toBeDefined();
  const complete = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  expect(complete).toMatchObject({ done: true, nextPlanIndex: complete['planLength'], recordsPublished: loadOracle().crawls[crawl]!.kept_captures });

  // what the forced save before the done one writes, as the kill left it
  await writeFile(path, JSON.stringify({ ...complete, done: false }) + '\n');
  const rerun = await batcher();
  expect(logLine(rerun, 'plan ready')).toMatchObject({ resumeAt: complete['planLength'] });
  expect(logLine(rerun, 'run already complete')).toBeDefined();
  const after = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  expect({ ...after, updatedAt: null }).toEqual({ ...complete, updatedAt: null });
}, 120_000);
