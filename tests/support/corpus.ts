import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository root (where package.json with the workspaces lives). */
export const REPO_ROOT = resolve(__dirname, '..', '..');

/** ../shared/corpus beside the repository. */
export const CORPUS = resolve(REPO_ROOT, '..', 'shared', 'corpus');

/** The two-crawl Common Crawl mirror built by an independent tool. */
export const CC_MIRROR_DEV = join(CORPUS, 'cc-mirror-dev');

export const DEV_CRAWLS = ['CC-MAIN-2030-40', 'CC-MAIN-2030-44'] as const;

/** What ingesting cc-mirror-dev with the default filter must yield (see its README.md). */
export interface Oracle {
  crawls: Record<
    string,
    {
      cdx_lines: number;
      kept_captures: number;
      blocks: number;
      domains: Record<string, { count: number; urls: string[]; private_domains: string[] }>;
    }
  >;
}

export function loadOracle(): Oracle {
  return JSON.parse(readFileSync(join(CC_MIRROR_DEV, 'oracle.json'), 'utf8')) as Oracle;
}

/** True when the shared corpus is present (it always is in CI). */
export const hasCorpus = (): boolean => existsSync(join(CC_MIRROR_DEV, 'oracle.json'));

/**
 * The oracle's URL form: scheme and host lower-cased, default port and fragment dropped, path and query as captured.
 */
export function oracleUrlForm(raw: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^#]*)/.exec(raw);
  if (!m) return raw;
  const scheme = m[1]!.toLowerCase();
  let host = m[2]!.toLowerCase();
  if ((scheme === 'http' && host.endsWith(':80')) || (scheme === 'https' && host.endsWith(':443'))) host = host.replace(/:\d+$/, '');
  const rest = m[3] === '' ? '/' : m[3]!;
  return `${scheme}://${host}${rest}`;
}
