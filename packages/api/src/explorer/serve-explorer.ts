import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EXPLORER_SCRIPT } from './explorer-script';
import { EXPLORER_STYLES } from './explorer-styles';
import { EXPLORER_ICON, explorerPage } from './explorer-page';

/**
 * The Content-Security-Policy of every explorer response: only this origin, no inline script or style, no
 * plugins, no framing, and Trusted Types with no policy, so the page cannot put a string into an HTML sink
 * (`innerHTML` and friends throw) — API data only ever reaches the DOM as text.
 */
export const EXPLORER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

/** Cache policy of the page itself: always revalidated (its ETag), so a new release is picked up at once. */
export const PAGE_CACHE_CONTROL = 'no-cache';
/** Cache policy of the assets: their names carry a hash of their bytes, so they never change. */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

interface Asset {
  readonly type: string;
  readonly body: Buffer;
  readonly etag: string;
  readonly cacheControl: string;
}

function asset(type: string, text: string, cacheControl: string): Asset {
  const body = Buffer.from(text, 'utf8');
  return { type, body, etag: `"${hashOf(body)}"`, cacheControl };
}

const hashOf = (b: Buffer): string => createHash('sha256').update(b).digest('base64url').slice(0, 16);

/** Path → asset; built once at load (a few KB). */
function buildAssets(): Map<string, Asset> {
  const js = asset('text/javascript; charset=utf-8', EXPLORER_SCRIPT, ASSET_CACHE_CONTROL);
  const css = asset('text/css; charset=utf-8', EXPLORER_STYLES, ASSET_CACHE_CONTROL);
  const icon = asset('image/svg+xml', EXPLORER_ICON, ASSET_CACHE_CONTROL);
  const name = (base: string, a: Asset, ext: string): string => `/explorer/${base}.${a.etag.slice(1, -1)}.${ext}`;
  const paths = { script: name('app', js, 'js'), style: name('app', css, 'css'), icon: name('icon', icon, 'svg') };
  const page = asset('text/html; charset=utf-8', explorerPage(paths), PAGE_CACHE_CONTROL);
  return new Map([
    ['/', page],
    [paths.script, js],
    [paths.style, css],
    [paths.icon, icon],
  ]);
}

const ASSETS = buildAssets();

/** The paths the explorer answers (`/` and its hashed assets under `/explorer/`), for tests and docs. */
export const EXPLORER_PATHS: readonly string[] = [...ASSETS.keys()];

/**
 * Answers `GET`/`HEAD` of the explorer page (`/`) and its assets (`/explorer/<name>.<hash>.<ext>`) from memory,
 * with the {@link EXPLORER_CSP} header, an ETag (a matching `If-None-Match` gets 304) and the cache policies above.
 * Returns false, without touching `res`, for any other path. Never throws. The page needs no token: it holds no
 * data, and the JSON routes it calls apply the ACL.
 */
export function serveExplorer(req: IncomingMessage, res: ServerResponse, path: string): boolean {
  const a = ASSETS.get(path);
  if (a === undefined) return false;
  const headers: Record<string, string | number> = {
    'content-type': a.type,
    'cache-control': a.cacheControl,
    etag: a.etag,
    'content-security-policy': EXPLORER_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  };
  if (matchesEtag(req.headers['if-none-match'], a.etag)) {
    res.writeHead(304, headers).end();
    return true;
  }
  headers['content-length'] = a.body.length;
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : a.body);
  return true;
}

/** RFC 9110 weak comparison of an `If-None-Match` list (or `*`) with one ETag. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v.replace(/^W\//, '') === etag;
  });
}
