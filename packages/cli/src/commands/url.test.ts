import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { canonicalizeUrl, urlId, urlIdHex } from '@ccpipe/core';
import { registerUrlCommand } from './url';

const ROOT = resolve(__dirname, '../../../..');

async function runInProcess(args: string[]): Promise<{ lines: Array<Record<string, unknown>>; exitCode: number | undefined }> {
  const out: string[] = [];
  const program = new Command('ccpipe').exitOverride();
  registerUrlCommand(program, { write: (l) => out.push(l) });
  const before = process.exitCode;
  process.exitCode = undefined;
  await program.parseAsync(['node', 'ccpipe', 'url', ...args]);
  const exitCode = process.exitCode as number | undefined;
  process.exitCode = before;
  return { lines: out.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>), exitCode };
}

describe('ccpipe url (in process)', () => {
  it('prints the keys of a real captured URL', async () => {
    const input = 'https://learningenglish-esl.blogspot.com/2010/08/billy-goats-gruff-story-masks.html';
    const { lines, exitCode } = await runInProcess([input]);
    expect(exitCode).toBeUndefined();
    expect(lines).toEqual([
      {
        input,
        url: input,
        host: 'learningenglish-esl.blogspot.com',
        domain: 'blogspot.com',
        private_domain: 'learningenglish-esl.blogspot.com',
        surt: 'com,blogspot,learningenglish-esl)/2010/08/billy-goats-gruff-story-masks.html', // as in the real CDX line
        url_id: urlIdHex(urlId(input)),
      },
    ]);
  });

  it('reports a bad URL, keeps going, and sets exit code 1 at the end', async () => {
    const { lines, exitCode } = await runInProcess(['not a url', 'ftp://x.org/', 'http://WWW.Example.com:80/b?z=1&a=2']);
    expect(lines.map((l) => l.input)).toEqual(['not a url', 'ftp://x.org/', 'http://WWW.Example.com:80/b?z=1&a=2']);
    expect(lines[0]?.error).toMatch(/^CCP_ERR_URL_INVALID: /);
    expect(lines[1]?.error).toMatch(/^CCP_ERR_URL_SCHEME: /);
    expect(lines[2]).toMatchObject({ url: 'http://www.example.com/b?a=2&z=1', surt: 'com,example)/b?a=2&z=1', domain: 'example.com' });
    expect(exitCode).toBe(1);
  });
});

describe('ccpipe url (the real binary)', () => {
  const bin = join(ROOT, 'packages/cli/bin/ccpipe.js');
  it('spawned: one JSON line per URL, exit status 1 after all lines when one is bad', () => {
    // needs the build (`npx tsc -b`; `npm test` does it first)
    expect(existsSync(join(ROOT, 'packages/cli/dist/commands/url.js'))).toBe(true);
    const good = 'https://www.berlin.de/imperia/md/content/lb-lkbgg/bfg/nummer03/12_ziermann.pdf%3Fstart%26ts%3D1183537363%26file%3D12_ziermann.pdf';
    const r = spawnSync(process.execPath, [bin, 'url', good, 'http://[bad', 'http://a.b.example.co.uk/'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(3);
    const c = canonicalizeUrl(good);
    expect(lines[0]).toEqual({ input: good, url: c.url, host: 'www.berlin.de', domain: 'berlin.de', private_domain: 'berlin.de', surt: 'de,berlin)/imperia/md/content/lb-lkbgg/bfg/nummer03/12_ziermann.pdf?start&ts=1183537363&file=12_ziermann.pdf', url_id: urlIdHex(urlId(c.url)) });
    expect(lines[1]).toEqual({ input: 'http://[bad', error: expect.stringMatching(/^CCP_ERR_URL_INVALID: /) });
    expect(lines[2]).toMatchObject({ domain: 'example.co.uk', surt: 'uk,co,example,b,a)/' });
    expect(r.stdout).not.toContain('Error');
  });
});
