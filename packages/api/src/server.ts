import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { CcpError, type IndexSource, type IndexView } from '@ccpipe/core';
import type { Logger } from '@ccpipe/adapters';
import type { Acl, AclPrincipal } from './acl';
import { ApiError } from './api-error';
import { cursorVersion } from './cursor';
import { getDatasets, getDomain, getTopDomains, getUrl, getUrls, onlyParams, type RequestContext } from './handlers';
import { getDomainInlinks, getUrlLinks } from './links';
import { getSearch } from './search';
import { getDomainPages, getPagesAcross } from './pages';
import { serveExplorer } from './explorer/serve-explorer';
import { apiMetrics, type ApiMetrics, type ApiRoute } from './metrics';

/**
 * Serves what the /v1 routes do not, asked before the built-in explorer page. Resolves true when it answered the
 * request; false lets the explorer, then a 404, answer.
 */
export type StaticHandler = (req: IncomingMessage, res: ServerResponse, path: string) => boolean | Promise<boolean>;

/** Options of {@link startApi}. */
export interface ApiOptions {
  /** The index; the server calls `current()` once per request and never closes it (its creator does). */
  source: IndexSource;
  /** 0 picks a free port. */
  port: number;
  /** Bind address (default 127.0.0.1). */
  host?: string;
  /** Where request metrics go, also served on /metrics; without one, /metrics is 404. */
  registry?: Registry;
  /** Dataset ACL; without one every dataset is visible to everyone. */
  acl?: Acl;
  /**
   * Ingest progress for /v1/status (the caller decides what it holds), given the view the request answers from (so
   * it never mixes two versions) and what the caller may see (the ACL: a token limited to some datasets must not
   * see the others' names or progress).
   */
  statusProvider?: StatusProvider;
  logger?: Logger;
  /** Asked first for paths no route serves; the explorer page answers those it leaves. */
  staticHandler?: StaticHandler;
  /** Serve the explorer page on `/` and its assets under `/explorer/` (default true; docs/api.md#explorer). */
  explorer?: boolean;
}

/** The ingest part of `/v1/status` for one request: from its view, for its caller. */
export type StatusProvider = (request: { view: IndexView | null; canSee: (datasetId: number, name: string) => boolean }) => Promise<object>;

/** A running API server. */
export interface ApiServer {
  /** `http://host:port` actually bound. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting, ends open connections; idempotent. */
  close(): Promise<void>;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Starts the HTTP API (node:http, no framework) on `opts.host:opts.port`. Each /v1 request pins one index version:
 * it calls `source.current()` exactly once and answers from that view only, naming it in `X-Index-Version`, so a
 * manifest flip is picked up by the next request and never mixes versions inside a response. A client that sends
 * `X-Index-Version: v…` is answered from that version while the source keeps it (`source.at`), so paging can stay on
 * one version across flips; a version no longer kept is 410 `CCP_ERR_API_VERSION_GONE`. Answers JSON errors
 * `{error: {code, message}}` (see {@link ApiError}). Resolves once listening.
 * @throws the listen error (EADDRINUSE, EACCES, …).
 */
export async function startApi(opts: ApiOptions): Promise<ApiServer> {
  const metrics: ApiMetrics | null = opts.registry ? apiMetrics(opts.registry) : null;
  const log = opts.logger;
  const server: Server = createServer((req, res) => {
    const t0 = process.hrtime.bigint();
    handle(req, res, opts).then(
      (r) => done(r, t0),
      // only a throwing static handler or metrics registry gets here: every other path has answered already
      (err: unknown) => done(sendError(req, res, new ApiError('CCP_ERR_API_INTERNAL', 'internal error'), 'unmatched', err), t0),
    );
    function done(r: Outcome, start: bigint): void {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      metrics?.observe(r.route, r.status, seconds);
      // a failure is logged; a 503 for no version published yet (before the first merge) is a state, answered
      // to every probe, so it is not
      if (r.status >= 500 && r.err !== undefined && log) log.error({ route: r.route, status: r.status, err: r.err }, 'request failed');
      else if (log?.isLevelEnabled('debug')) log.debug({ route: r.route, status: r.status, ms: seconds * 1000 }, 'request');
    }
  });
  // A request Node refuses before the handler sees it (a request line or headers over its 16 KiB limit, a malformed
  // request) gets the same JSON error shape instead of Node's empty answer.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const [reason, e] = tooLarge
      ? ['Request Header Fields Too Large', new ApiError('CCP_ERR_API_TOO_LARGE', 'the request line and headers exceed 16 KiB')]
      : ['Bad Request', new ApiError('CCP_ERR_API_BAD_REQUEST', 'malformed HTTP request')];
    const { status, code, message } = e;
    const body = JSON.stringify({ error: { code, message } });
    socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: ${JSON_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${addr.port}`,
    port: addr.port,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/** A version name a client may pin (`X-Index-Version` request header). */
const VERSION_PIN = /^[A-Za-z0-9._-]{1,64}$/;

/** The view of a pinned version: from the source's history when it keeps one, else only if it is the current one. */
async function pinnedView(source: IndexSource, version: string): Promise<IndexView | null> {
  if (source.at) return source.at(version);
  const cur = await source.current();
  return cur?.version === version ? cur : null;
}

interface Outcome {
  route: ApiRoute;
  status: number;
  err?: unknown;
}

async function handle(req: IncomingMessage, res: ServerResponse, opts: ApiOptions): Promise<Outcome> {
  const raw = req.url ?? '/';
  const q = raw.indexOf('?');
  const path = q < 0 ? raw : raw.slice(0, q);
  const route = routeOf(path);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    return sendError(req, res, new ApiError('CCP_ERR_API_METHOD', 'only GET and HEAD are served'), route.name);
  }
  if (route.name === '/healthz') {
    send(req, res, 200, 'text/plain; charset=utf-8', 'ok\n');
    return { route: route.name, status: 200 };
  }
  if (route.name === '/metrics') {
    if (!opts.registry) return sendError(req, res, new ApiError('CCP_ERR_API_NOT_FOUND', 'no such route'), 'unmatched');
    send(req, res, 200, opts.registry.contentType, await opts.registry.metrics());
    return { route: route.name, status: 200 };
  }
  if (route.name === 'unmatched') {
    if (opts.staticHandler && (await opts.staticHandler(req, res, path))) return { route: 'static', status: res.statusCode };
    if (opts.explorer !== false && serveExplorer(req, res, path)) return { route: 'static', status: res.statusCode };
    return sendError(req, res, new ApiError('CCP_ERR_API_NOT_FOUND', 'no such route'), route.name);
  }

  let principal: AclPrincipal | null = null;
  if (opts.acl) {
    principal = opts.acl.authenticate(req.headers.authorization);
    if (principal === null) {
      res.setHeader('www-authenticate', 'Bearer');
      return sendError(req, res, new ApiError('CCP_ERR_API_UNAUTHORIZED', 'a valid bearer token is required'), route.name);
    }
  }
  let view: IndexView | null;
  const headerPin = req.headers['x-index-version'];
  if (headerPin !== undefined && (typeof headerPin !== 'string' || !VERSION_PIN.test(headerPin))) {
    return sendError(req, res, new ApiError('CCP_ERR_API_BAD_REQUEST', 'X-Index-Version must name one index version, e.g. v000003'), route.name);
  }
  const query = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  // a paging cursor names the version its first page came from: the next page is read there (410 once collected)
  let pin = headerPin;
  if (route.name === '/v1/domain/:domain/pages' || route.name === '/v1/pages' || route.name === '/v1/url/links' || route.name === '/v1/domain/:domain/inlinks' || route.name === '/v1/search') {
    let fromCursor: string | undefined;
    try {
      fromCursor = cursorVersion(query);
    } catch (err) {
      return sendError(req, res, err as ApiError, route.name);
    }
    if (fromCursor !== undefined && headerPin !== undefined && fromCursor !== headerPin) {
      return sendError(req, res, new ApiError('CCP_ERR_API_BAD_REQUEST', 'cursor and X-Index-Version name different versions', { param: 'cursor' }), route.name);
    }
    pin = fromCursor ?? headerPin;
  }
  try {
    // the one call: everything below answers from this view — the current version, or the one the client pinned
    view = pin === undefined ? await opts.source.current() : await pinnedView(opts.source, pin);
  } catch (err) {
    return sendError(req, res, new ApiError('CCP_ERR_API_NO_INDEX', 'the index cannot be read', { cause: err }), route.name, err);
  }
  if (pin !== undefined && view === null) {
    return sendError(req, res, new ApiError('CCP_ERR_API_VERSION_GONE', 'the pinned index version (X-Index-Version, or the version a cursor names) is not served here (collected, never published, or too large to pin on this replica); start again without it'), route.name);
  }
  if (view !== null) res.setHeader('x-index-version', view.version);
  try {
    if (route.name === '/v1/status') {
      onlyParams(query, []);
      let ingest: object | null = null;
      const canSee = (datasetId: number, name: string): boolean => principal === null || principal.canSee(datasetId, name);
      if (opts.statusProvider) ingest = await opts.statusProvider({ view, canSee }).catch(() => null);
      // a newer version this replica could not load (it serves the one above meanwhile): only when there is one
      const failure = opts.source.loadFailure?.() ?? null;
      return sendJson(req, res, route.name, {
        version: view?.version ?? null, ingest,
        ...(failure !== null && { load_failure: { version: failure.version, code: failure.code, at: failure.at, retry_at: failure.retryAt } }),
      });
    }
    if (view === null) throw new ApiError('CCP_ERR_API_NO_INDEX', 'no index version is published yet');
    const ctx: RequestContext = { view, principal };
    switch (route.name) {
      case '/v1/datasets':
        return sendJson(req, res, route.name, getDatasets(ctx, query));
      case '/v1/datasets/:dataset_id/domains':
        return sendJson(req, res, route.name, getTopDomains(ctx, route.params[0] as string, query));
      case '/v1/pages':
        return sendJson(req, res, route.name, await getPagesAcross(ctx, query));
      case '/v1/url':
        return sendJson(req, res, route.name, await getUrl(ctx, query));
      case '/v1/url/links':
        return sendJson(req, res, route.name, await getUrlLinks(ctx, query));
      case '/v1/search':
        return sendJson(req, res, route.name, await getSearch(ctx, query));
      case '/v1/domain/:domain/inlinks':
        return sendJson(req, res, route.name, await getDomainInlinks(ctx, route.params[0] as string, query));
      case '/v1/domain/:domain':
        return sendJson(req, res, route.name, getDomain(ctx, route.params[0] as string, query));
      case '/v1/domain/:domain/pages':
        return sendJson(req, res, route.name, await getDomainPages(ctx, route.params[0] as string, query));
      case '/v1/domain/:domain/datasets/:dataset_id/urls':
        return sendJson(req, res, route.name, await getUrls(ctx, route.params[0] as string, route.params[1] as string, query));
    }
  } catch (err) {
    if (err instanceof ApiError) return sendError(req, res, err, route.name);
    // lake bytes that fail their checksum: stored data is damaged (`ccpipe verify` names the files)
    if (err instanceof CcpError && err.code === 'CCP_ERR_INDEX_CRC') {
      return sendError(req, res, new ApiError('CCP_ERR_API_DATA_DAMAGED', 'stored index data failed its integrity check'), route.name, err);
    }
    return sendError(req, res, new ApiError('CCP_ERR_API_INTERNAL', 'internal error'), route.name, err);
  }
  return sendError(req, res, new ApiError('CCP_ERR_API_NOT_FOUND', 'no such route'), 'unmatched');
}

/** The route template of a path (closed set) and its raw (still percent-encoded) parameters. */
export function routeOf(path: string): { name: ApiRoute; params: string[] } {
  if (path === '/healthz' || path === '/metrics') return { name: path, params: [] };
  if (!path.startsWith('/v1/')) return { name: 'unmatched', params: [] };
  const s = path.slice(4).split('/');
  if (s.length === 1) {
    if (s[0] === 'status') return { name: '/v1/status', params: [] };
    if (s[0] === 'datasets') return { name: '/v1/datasets', params: [] };
    if (s[0] === 'url') return { name: '/v1/url', params: [] };
    if (s[0] === 'pages') return { name: '/v1/pages', params: [] };
    if (s[0] === 'search') return { name: '/v1/search', params: [] };
  } else if (s[0] === 'url' && s.length === 2 && s[1] === 'links') {
    return { name: '/v1/url/links', params: [] };
  } else if (s[0] === 'datasets' && s.length === 3 && s[1] !== '' && s[2] === 'domains') {
    return { name: '/v1/datasets/:dataset_id/domains', params: [s[1] as string] };
  } else if (s[0] === 'domain' && s[1] !== '') {
    if (s.length === 2) return { name: '/v1/domain/:domain', params: [s[1] as string] };
    if (s.length === 3 && s[2] === 'pages') return { name: '/v1/domain/:domain/pages', params: [s[1] as string] };
    if (s.length === 3 && s[2] === 'inlinks') return { name: '/v1/domain/:domain/inlinks', params: [s[1] as string] };
    if (s.length === 5 && s[2] === 'datasets' && s[4] === 'urls') return { name: '/v1/domain/:domain/datasets/:dataset_id/urls', params: [s[1] as string, s[3] as string] };
  }
  return { name: 'unmatched', params: [] };
}

function send(req: IncomingMessage, res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function sendJson(req: IncomingMessage, res: ServerResponse, route: ApiRoute, body: object): Outcome {
  send(req, res, 200, JSON_TYPE, JSON.stringify(body));
  return { route, status: 200 };
}

function sendError(req: IncomingMessage, res: ServerResponse, e: ApiError, route: ApiRoute | undefined, cause?: unknown): Outcome {
  if (!res.headersSent) {
    if (e.retryAfterS !== undefined) res.setHeader('retry-after', String(e.retryAfterS));
    send(req, res, e.status, JSON_TYPE, JSON.stringify(e.body()));
  }
  return { route: route ?? 'unmatched', status: e.status, err: cause };
}
