import { Script } from 'node:vm';
import { Registry } from 'prom-client';
import { MemoryIndexSource } from '../memory-index-source';
import { startApi, type ApiServer } from '../server';
import { viewOld } from '../test-corpus';
import { EXPLORER_SCRIPT } from './explorer-script';

/** The CSP header as directive → sources. */
function directives(csp: string): Map<string, string[]> {
  return new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).filter((p) => p[0]).map((p) => [p[0] as string, p.slice(1)]));
}

/** Same-origin URLs the page references (src/href attributes), in document order. */
const refsOf = (html: string): string[] => [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((m) => m[1] as string);

describe('explorer routes', () => {
  const registry = new Registry();
  let server: ApiServer;
  beforeAll(async () => {
    server = await startApi({ source: new MemoryIndexSource(viewOld), port: 0, registry });
  });
  afterAll(() => server.close());

  it('serves the page on / as HTML, revalidated, under a CSP that allows this origin only', async () => {
    const res = await fetch(`${server.url}/`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const csp = directives(res.headers.get('content-security-policy') ?? '');
    expect(csp.get('default-src')).toEqual(["'self'"]);
    // every fetch directive that is set names no other origin, scheme or inline/eval escape hatch
    for (const [name, sources] of csp) {
      if (!name.endsWith('-src')) continue;
      for (const s of sources) expect([name, s]).toEqual([name, expect.stringMatching(/^'(self|none)'$/)]);
    }
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(csp.get('require-trusted-types-for')).toEqual(["'script'"]);
    // the markup itself asks for nothing remote and carries no inline script or style
    expect(html).toMatch(/^<!doctype html>/);
    const refs = refsOf(html).filter((r) => !r.startsWith('#'));
    expect(refs.length).toBe(3);
    for (const r of refs) expect(r).toMatch(/^\/explorer\/[a-z]+\.[A-Za-z0-9_-]{16}\.(js|css|svg)$/);
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/\/\/[a-z0-9.-]+\.[a-z]{2,}\//i);
  });

  it('serves the hashed assets with their types, immutable caching, and 304 on a matching ETag', async () => {
    const html = await (await fetch(`${server.url}/`)).text();
    const want: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };
    for (const path of refsOf(html).filter((r) => r.startsWith('/explorer/'))) {
      const res = await fetch(server.url + path);
      const body = await res.text();
      const ext = path.slice(path.lastIndexOf('.') + 1);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 200, want[ext]]);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(body));
      // the name carries the content's hash: the ETag is that hash
      const etag = res.headers.get('etag');
      expect(etag).toBe(`"${path.split('.').at(-2)}"`);
      const again = await fetch(server.url + path, { headers: { 'if-none-match': `W/${etag}, "other"` } });
      expect([again.status, await again.text()]).toEqual([304, '']);
      const stale = await fetch(server.url + path, { headers: { 'if-none-match': '"other"' } });
      expect(stale.status).toBe(200);
    }
    expect(await registry.metrics()).toMatch(/ccpipe_api_request_duration_seconds_count\{route="static",status_class="2xx"\} [1-9]/);
  });

  it('answers HEAD without a body, and 404 JSON for other paths (an old asset hash too)', async () => {
    const head = await fetch(`${server.url}/`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type'), Number(head.headers.get('content-length')) > 1000, await head.text()]).toEqual([200, 'text/html; charset=utf-8', true, '']);
    for (const path of ['/explorer/app.0000000000000000.js', '/explorer/', '/index.html', '/favicon.ico']) {
      const res = await fetch(server.url + path);
      expect([path, res.status, res.headers.get('content-security-policy')]).toEqual([path, 404, null]);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CCP_ERR_API_NOT_FOUND');
    }
    const post = await fetch(`${server.url}/`, { method: 'POST' });
    expect(post.status).toBe(405);
  });

  it('is not served with explorer: false, and a static handler is asked first', async () => {
    const off = await startApi({ source: new MemoryIndexSource(viewOld), port: 0, explorer: false });
    const custom = await startApi({
      source: new MemoryIndexSource(viewOld), port: 0,
      staticHandler: (_req, res, path) => path === '/' && (res.writeHead(200, { 'content-type': 'text/plain' }).end('mine'), true),
    });
    try {
      expect((await fetch(`${off.url}/`)).status).toBe(404);
      expect(await (await fetch(`${custom.url}/`)).text()).toBe('mine');
      // assets the custom handler leaves are still the explorer's
      const page = await (await fetch(`${server.url}/`)).text();
      const js = refsOf(page).find((r) => r.endsWith('.js'))!;
      expect((await fetch(custom.url + js)).status).toBe(200);
    } finally {
      await off.close();
      await custom.close();
    }
  });

  it('ships a script that parses, reads no remote origin and never uses an HTML sink', () => {
    expect(() => new Script(EXPLORER_SCRIPT, { filename: 'app.js' })).not.toThrow();
    expect(EXPLORER_SCRIPT).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
    expect(EXPLORER_SCRIPT).not.toMatch(/https?:\/\//);
  });
});
