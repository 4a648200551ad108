import type { Command } from 'commander';
import { UrlError, canonicalizeUrl, urlId, urlIdHex } from '@ccpipe/core';

/** Where `ccpipe url` writes; tests pass their own. */
export interface UrlCommandIo {
  write(line: string): void;
}

/** One output line of `ccpipe url`: the URL's index keys, or why it was refused. */
export type UrlReport =
  | { input: string; url: string; host: string; domain: string | null; private_domain: string | null; surt: string; url_id: string }
  | { input: string; error: string };

/** Keys of one input URL; never throws for bad input (reports it in `error`). */
export function reportUrl(input: string): UrlReport {
  try {
    const c = canonicalizeUrl(input);
    return { input, url: c.url, host: c.host, domain: c.domain, private_domain: c.privateDomain, surt: c.surt, url_id: urlIdHex(urlId(c.url)) };
  } catch (err) {
    if (err instanceof UrlError) return { input, error: `${err.code}: ${err.message}` };
    throw err;
  }
}

/**
 * `ccpipe url URL...`: prints one JSON object per input, in order: `{input, url, host, domain,
 * private_domain, surt, url_id}` (url_id as 16 hex digits) or `{input, error}`. Sets
 * `process.exitCode = 1` after printing every line when any input was refused.
 */
export function registerUrlCommand(program: Command, io: UrlCommandIo = { write: (l) => process.stdout.write(l) }): void {
  program
    .command('url')
    .description('print the canonical URL, registered domain, SURT key and url_id of each URL (one JSON object per line)')
    .argument('<urls...>', 'absolute http(s) URLs')
    .action((urls: string[]) => {
      let failed = false;
      for (const input of urls) {
        const r = reportUrl(input);
        if ('error' in r) failed = true;
        io.write(`${JSON.stringify(r)}\n`);
      }
      if (failed) process.exitCode = 1;
    });
}
