/**
 * The compose file and prometheus.yml checked by the real tools: `docker-compose config -q` (Debian's docker-compose
 * 1.29 validates offline against the compose schema) and `promtool check config`. `.ci/run` installs both; on a
 * developer machine without them the checks are skipped with a note, but under CI a missing tool fails the test.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './support/corpus';
import { inCi } from './support/ci';
import { spawnCcpipe } from './support/processes';
import { MISSING_CRAWL } from '../packages/batcher/src/main';

const have = (tool: string): boolean => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

function check(tool: string): jest.It {
  if (have(tool)) return it;
  if (inCi()) return it;
  console.warn(`${tool} is not installed: skipping its check (CI installs it)`);
  return it.skip;
}

describe('operations files under their own tools', () => {
  check('docker-compose')('docker-compose.yml is valid compose (docker-compose config -q)', () => {
    const r = spawnSync('docker-compose', ['-f', join(REPO_ROOT, 'docker-compose.yml'), 'config', '-q'], {
      env: { ...process.env, CCPIPE_CRAWL: 'CC-MAIN-2024-30' },
      encoding: 'utf8',
    });
    expect({ status: r.status, stderr: r.stderr, error: r.error?.message }).toEqual({ status: 0, stderr: '', error: undefined });
  });

  check('docker-compose')('every compose command works without a crawl set (only the batcher reads it)', () => {
    const env = { ...process.env };
    delete env['CCPIPE_CRAWL'];
    const r = spawnSync('docker-compose', ['-f', join(REPO_ROOT, 'docker-compose.yml'), 'config'], { env, encoding: 'utf8' });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    // the batcher gets the variable empty, which loadConfig takes as unset
    expect(r.stdout).toMatch(/^ {6}CCPIPE_CRAWL: ''$/m);
  });

  it('a batcher started without a crawl exits 1 at once, naming the variable to set', async () => {
    const p = spawnCcpipe(['batcher', '--metrics-port', '0'], { CCPIPE_CRAWL: '' });
    const { code } = await p.exited;
    expect(code).toBe(1);
    expect(p.text.join('')).toContain(MISSING_CRAWL);
    expect(MISSING_CRAWL).toMatch(/set CCPIPE_CRAWL .*docker compose up -d batcher/);
  }, 30_000);

  check('promtool')('prometheus.yml passes promtool check config', () => {
    const r = spawnSync('promtool', ['check', 'config', join(REPO_ROOT, 'prometheus.yml')], { encoding: 'utf8' });
    expect({ status: r.status, out: r.stdout + r.stderr }).toMatchObject({ status: 0 });
    expect(r.stdout + r.stderr).toMatch(/SUCCESS/);
  });
});
