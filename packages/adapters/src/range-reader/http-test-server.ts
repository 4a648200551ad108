import { CcpError } from '@ccpipe/core';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as a test server saw it. */
export interface SeenRequest {
  n: number;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** A throwaway HTTP server on 127.0.0.1:0 for adapter tests; counts requests. */
export interface TestServer {
  url: string;
  port: number;
  requests: SeenRequest[];
  /** Requests being handled right now, and the most at once. */
  inFlight: number;
  maxInFlight: number;
  close(): Promise<void>;
}

/**
 * Starts a server whose `handler` gets the 1-based request number. Test support only (no production use):
 * lives next to the tests that use it so they share one implementation.
 */
export async function startTestServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void | Promise<void>,
): Promise<TestServer> {
  const state: Omit<TestServer, 'close' | 'url' | 'port'> = { requests: [], inFlight: 0, maxInFlight: 0 };
  const server = http.createServer((req, res) => {
    const n = state.requests.length + 1;
    state.requests.push({ n, url: req.url ?? '', headers: req.headers });
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    let done = false;
    const finish = (): void => {
      if (!done) state.inFlight--;
      done = true;
    };
    res.on('close', finish);
    Promise.resolve(handler(req, res, n)).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    port,
    close: (): Promise<void> => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  });
}

/** Answers `Range: bytes=a-b` on `file` with 206 (or 416), like S3; `delayMs` before the headers. */
export function sendRange(req: http.IncomingMessage, res: http.ServerResponse, file: Uint8Array): void {
  const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
  if (!m) {
    res.writeHead(200, { 'Content-Length': String(file.length) });
    res.end(file);
    return;
  }
  const start = Number(m[1]);
  const end = Math.min(Number(m[2]), file.length - 1);
  if (start >= file.length) {
    res.writeHead(416, { 'Content-Range': `bytes */${file.length}`, 'Content-Length': '0' });
    res.end();
    return;
  }
  res.writeHead(206, { 'Content-Range': `bytes ${start}-${end}/${file.length}`, 'Content-Length': String(end - start + 1) });
  res.end(file.subarray(start, end + 1));
}

/** An S3-style `503 SlowDown` with Retry-After (seconds). */
export function sendSlowDown(res: http.ServerResponse, retryAfterSec?: number): void {
  const body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>';
  res.writeHead(503, {
    'Content-Type': 'application/xml',
    'Content-Length': String(Buffer.byteLength(body)),
    ...(retryAfterSec === undefined ? {} : { 'Retry-After': String(retryAfterSec) }),
  });
  res.end(body);
}

/** Resolves after `ms` of real time. */
export const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The CcpError a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function failure(p: Promise<unknown>): Promise<CcpError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof CcpError) return err;
    throw err;
  }
  throw new Error('expected a CcpError');
}
