import { createReadStream, promises as fsp } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { MirrorError } from '../mirror-error';
import { decideRange } from './byte-range';
import { pipeThrottled, sendSlowDown, type MirrorFaults } from './faults';
import { requestTargetToSegments, resolveInsideRoot, type ResolvedFile } from './safe-path';

/** Options for {@link serveMirror}. */
export interface ServeMirrorOptions {
  /** Directory served as the bucket root (e.g. a `buildMirror` output, or ../shared/corpus/cc-mirror-dev). */
  dir: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** Opt-in fault injection (S3 SlowDown, slow bodies). */
  faults?: MirrorFaults;
}

/** A running mirror server. */
export interface MirrorServer {
  /** Base URL without trailing slash, e.g. `http://127.0.0.1:43121`. */
  url: string;
  port: number;
  /**
   * Requests received since start and how many of them got an injected 503 SlowDown (what a chaos or retry test
   * reports beside what its clients saw).
   */
  stats(): { requests: number; slowDowns: number };
  /** Stops accepting, drops open connections; idempotent. */
  close(): Promise<void>;
}

/**
 * Serves `dir` over HTTP the way data.commoncrawl.org (S3 behind CloudFront) answers the requests the
 * pipeline makes: GET/HEAD, one byte range per request (206 + Content-Range + exact Content-Length),
 * 200 without Range or with several ranges, 416 `bytes *\/size` when unsatisfiable, 404 for anything
 * missing or outside `dir` (no `..`, encoded dots/slashes, backslashes, NUL, or symlinks escaping
 * `dir`), 405 for other methods. Adds `Accept-Ranges`, `ETag`, `Last-Modified`.
 *
 * Rejects with MirrorError CCP_ERR_MIRROR_ROOT when `dir` is not a directory; with the fs/net error when
 * it does not exist or the port cannot be bound.
 */
export async function serveMirror(opts: ServeMirrorOptions): Promise<MirrorServer> {
  const rootReal = await fsp.realpath(opts.dir);
  if (!(await fsp.stat(rootReal)).isDirectory()) throw new MirrorError('CCP_ERR_MIRROR_ROOT', 'mirror root is not a directory');
  const host = opts.host ?? '127.0.0.1';
  const faults = opts.faults ?? {};
  let requestCount = 0;
  let slowDownCount = 0;

  const server = http.createServer((req, res) => {
    requestCount += 1;
    handle(req, res, requestCount).catch(() => {
      if (!res.headersSent) sendStatus(res, 500, req.method === 'HEAD');
      else res.destroy();
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, n: number): Promise<void> {
    const method = req.method ?? 'GET';
    const head = method === 'HEAD';
    if (method !== 'GET' && !head) {
      res.setHeader('Allow', 'GET, HEAD');
      sendStatus(res, 405, false);
      return;
    }
    const every = faults.slowDownEvery;
    if (every !== undefined && every >= 1 && n % every === 0) {
      slowDownCount += 1;
      sendSlowDown(res, head);
      return;
    }
    const segments = requestTargetToSegments(req.url ?? '');
    const file = segments === null ? null : await resolveInsideRoot(rootReal, segments);
    if (file === null) {
      sendStatus(res, 404, head);
      return;
    }
    await sendFile(req, res, file, head);
  }

  async function sendFile(req: http.IncomingMessage, res: http.ServerResponse, file: ResolvedFile, head: boolean): Promise<void> {
    const decision = decideRange(req.headers.range, file.size);
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('ETag', `"${file.size.toString(16)}-${Math.floor(file.mtime.getTime()).toString(16)}"`);
    res.setHeader('Last-Modified', file.mtime.toUTCString());
    res.setHeader('Content-Type', contentTypeOf(file.path));
    if (decision.kind === 'unsatisfiable') {
      res.setHeader('Content-Range', `bytes */${file.size}`);
      sendStatus(res, 416, head);
      return;
    }
    const start = decision.kind === 'partial' ? decision.start : 0;
    const end = decision.kind === 'partial' ? decision.end : file.size - 1;
    const length = file.size === 0 ? 0 : end - start + 1;
    if (decision.kind === 'partial') {
      res.statusCode = 206;
      res.setHeader('Content-Range', `bytes ${start}-${end}/${file.size}`);
    } else {
      res.statusCode = 200;
    }
    res.setHeader('Content-Length', String(length));
    if (head || length === 0) {
      res.end();
      return;
    }
    const src = createReadStream(file.path, { start, end });
    const bps = faults.slowBodyBytesPerSec;
    if (bps !== undefined && bps > 0) {
      await pipeThrottled(src, res, bps);
      return;
    }
    try {
      await pipeline(src, res);
    } catch {
      // Client went away mid-body; nothing to answer.
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    stats: () => ({ requests: requestCount, slowDowns: slowDownCount }),
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function sendStatus(res: http.ServerResponse, status: number, head: boolean): void {
  const body = Buffer.from(`${status} ${http.STATUS_CODES[status] ?? ''}\n`, 'utf8');
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', String(body.length));
  res.end(head ? undefined : body);
}

function contentTypeOf(file: string): string {
  if (file.endsWith('.json')) return 'application/json';
  if (file.endsWith('.idx') || file.endsWith('.txt') || file.endsWith('.md')) return 'text/plain';
  return 'application/octet-stream';
}
