import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TargetLineError, TargetSet } from './targets';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ccpipe-targets-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('a targets file (--domains)', () => {
  it('takes registered domains and hosts, one per line, skipping blanks and comments (CRLF and a BOM too)', async () => {
    const file = join(dir, 'ok.txt');
    await writeFile(file, '\uFEFF# targets\r\nExample.COM\r\n\r\nblog.example.co.uk\r\nbücher.de\r\n192.0.2.7\r\n');
    const t = await TargetSet.fromFile(file);
    expect(t.has('com,example)/a')).toBe(true);
    expect(t.has('com,example,www)/')).toBe(true);
    expect(t.has('uk,co,example,blog)/')).toBe(true);
    expect(t.has('de,xn--bcher-kva)/')).toBe(true);
    expect(t.has('org,example)/')).toBe(false);
  });

  it.each([
    ['exa mple.com', 'a space'],
    ['http://example.com/', 'a URL (it read as the host "http")'],
    ['example.com/path', 'a path'],
    ['*.example.com', 'a wildcard (matching nothing)'],
    ['exa$mple.com', 'a character no host has'],
  ])('refuses %j (%s), naming the file, the line number and its text', (bad) => {
    const lines = ['# comment', 'example.com', '', bad, 'example.org'];
    let err: unknown;
    try {
      TargetSet.fromLines(lines, 'targets.txt');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TargetLineError);
    expect(err).toMatchObject({ code: 'CCP_ERR_DOMAINS_INVALID', detail: { line: 4, text: bad, file: 'targets.txt' } });
    expect((err as Error).message).toMatch(new RegExp(`^targets\\.txt line 4: ${JSON.stringify(bad).replace(/[.*$?/]/g, '\\$&')} is not a registered domain or host \\(`));
    if (bad.includes('://')) expect((err as Error).message).toContain('a URL: write its host alone');
  });

  it('names a file that does not exist', async () => {
    const missing = join(dir, 'nope.txt');
    await expect(TargetSet.fromFile(missing)).rejects.toMatchObject({ code: 'CCP_ERR_DOMAINS_FILE', message: `--domains file ${missing} does not exist` });
  });
});
