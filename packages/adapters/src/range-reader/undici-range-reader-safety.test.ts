import { readFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { RetryPolicySchema } from '@ccpipe/core';
import { sendRange, startTestServer, type TestServer, failure } from './http-test-server';
import { CC_MIRROR_DEV, loadContractFixture } from './range-reader.contract';
import { UndiciRangeReader, type UndiciRangeReaderOptions } from './undici-range-reader';

// What the HTTP reader refuses to do: follow redirects, leave its base URL, accept a reply that is not exactly
// the range asked for. Real servers on port 0 count requests, so "no request was made" is checked, not assumed.
const fx = loadContractFixture();
const warc = new Uint8Array(readFileSync(nodePath.join(CC_MIRROR_DEV, fx.warc.path)));
const rec = fx.records[0]!;
const policy = RetryPolicySchema.parse({ baseDelayMs: 1, maxDelayMs: 10, maxAttempts: 4 });
const cr = (start: number, end: number, total: number | string): string => `bytes ${start}-${end}/${total}`;

let target: TestServer; // the server a hostile redirect or filename points at
let origin: TestServer; // the configured base URL; its behaviour is set per test
let reply: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void;
const readers: UndiciRangeReader[] = [];

beforeAll(async () => {
  target = await startTestServer((req, res) => sendRange(req, res, warc));
  origin = await startTestServer((req, res) => reply(req, res));
});
afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()));
  await Promise.all([target.close(), origin.close()]);
});
beforeEach(() => {
  target.requests.length = 0;
  origin.requests.length = 0;
  reply = (req, res) => sendRange(req, res, warc);
});

function reader(opts: Partial<UndiciRangeReaderOptions> = {}): UndiciRangeReader {
  const r = new UndiciRangeReader({ baseUrl: origin.url, connections: 2, userAgent: 'ccpipe-test/1', retryPolicy: policy, ...opts });
  readers.push(r);
  return r;
}


describe('UndiciRangeReader never follows redirects', () => {
  it.each([301, 302, 307, 308])('%i: CCP_ERR_FETCH_REDIRECT, one request, zero to the redirect target', async (status) => {
    reply = (_req, res) => {
      res.writeHead(status, { Location: `${target.url}/${fx.warc.path}`, 'Content-Length': '0' });
      res.end();
    };
    const err = await failure(reader().read(rec.path, rec.offset, rec.length));
    expect([err.code, err.retryable, err.detail?.['status']]).toEqual(['CCP_ERR_FETCH_REDIRECT', false, status]);
    expect([origin.requests.length, target.requests.length]).toEqual([1, 0]);
  });

  it('stream: CCP_ERR_FETCH_REDIRECT and zero requests to the target', async () => {
    reply = (_req, res) => {
      res.writeHead(302, { Location: `${target.url}/x`, 'Content-Length': '0' });
      res.end();
    };
    const err = await failure((async () => {
      for await (const _ of reader().stream(fx.warc.path)) void _;
    })());
    expect(err.code).toBe('CCP_ERR_FETCH_REDIRECT');
    expect(target.requests.length).toBe(0);
  });
});

describe('UndiciRangeReader stays under its base URL', () => {
  it('refuses filenames naming another server or escaping the base with CCP_ERR_SSRF; no server sees a request', async () => {
    const hostile = [
      `http://127.0.0.1:${target.port}/x`,
      `//127.0.0.1:${target.port}/x`,
      `127.0.0.1:${target.port}/x`,
      '../x',
      '../../etc/passwd',
      '%2e%2e/x',
      'crawl-data/%2E%2E/%2e%2e/x',
      'crawl-data/..%2fx',
      `crawl-data/x@127.0.0.1:${target.port}/y`,
    ];
    const r = reader();
    for (const p of hostile) {
      expect([p, (await failure(r.read(p, 0, 10))).code]).toEqual([p, 'CCP_ERR_SSRF']);
    }
    expect([origin.requests.length, target.requests.length]).toEqual([0, 0]);
  });

  it('requests exactly <base path>/<filename> with the Range, User-Agent and identity encoding', async () => {
    const r = reader({ baseUrl: `${origin.url}/mirror/` });
    await r.read(rec.path, rec.offset, rec.length);
    const seen = origin.requests[0]!;
    expect(seen.url).toBe(`/mirror/${rec.path}`);
    expect(seen.headers.range).toBe(`bytes=${rec.offset}-${rec.offset + rec.length - 1}`);
    expect(seen.headers['user-agent']).toBe('ccpipe-test/1');
    expect(seen.headers['accept-encoding']).toBe('identity');
  });

  it.each(['ftp://127.0.0.1/', 'http://user:pw@127.0.0.1/', 'http://127.0.0.1/?x=1', 'file:///etc/'])('refuses base URL %s', (baseUrl) => {
    expect(() => reader({ baseUrl })).toThrow(expect.objectContaining({ code: 'CCP_ERR_FETCH_CONFIG' }));
  });
});

describe('UndiciRangeReader accepts only the exact range', () => {
  it('200 with the whole file instead of 206: CCP_ERR_FETCH_NOT_PARTIAL, not retried', async () => {
    reply = (_req, res) => {
      res.writeHead(200, { 'Content-Length': String(warc.length) });
      res.end(warc);
    };
    const err = await failure(reader().read(rec.path, rec.offset, rec.length));
    expect([err.code, err.retryable]).toEqual(['CCP_ERR_FETCH_NOT_PARTIAL', false]);
    expect(origin.requests.length).toBe(1);
  });

  it.each([
    ['start off by one', cr(rec.offset + 1, rec.offset + rec.length, warc.length)],
    ['end off by one', cr(rec.offset, rec.offset + rec.length - 2, warc.length)],
    ['missing', undefined],
    ['malformed', `bytes ${rec.offset}-`],
  ])('Content-Range %s: CCP_ERR_FETCH_CONTENT_RANGE', async (_name, header) => {
    reply = (_req, res) => {
      res.writeHead(206, { ...(header === undefined ? {} : { 'Content-Range': header }), 'Content-Length': String(rec.length) });
      res.end(rec.bytes);
    };
    const err = await failure(reader().read(rec.path, rec.offset, rec.length));
    expect([err.code, err.retryable]).toEqual(['CCP_ERR_FETCH_CONTENT_RANGE', false]);
    expect(origin.requests.length).toBe(1);
  });

  it('accepts a Content-Range whose total is *', async () => {
    reply = (_req, res) => {
      res.writeHead(206, { 'Content-Range': cr(rec.offset, rec.offset + rec.length - 1, '*'), 'Content-Length': String(rec.length) });
      res.end(rec.bytes);
    };
    expect(Buffer.from(await reader().read(rec.path, rec.offset, rec.length)).equals(rec.bytes)).toBe(true);
  });

  it('a body longer than the range: CCP_ERR_FETCH_LONG_BODY', async () => {
    reply = (_req, res) => {
      res.writeHead(206, { 'Content-Range': cr(rec.offset, rec.offset + rec.length - 1, warc.length) });
      res.end(warc.subarray(rec.offset, rec.offset + rec.length + 100));
    };
    const err = await failure(reader().read(rec.path, rec.offset, rec.length));
    expect([err.code, err.retryable]).toEqual(['CCP_ERR_FETCH_LONG_BODY', false]);
  });

  it('a range running past the end (206 clamped by the server): CCP_ERR_FETCH_STATUS 416 with the size', async () => {
    const err = await failure(reader().read(fx.warc.path, warc.length - 10, 100));
    expect([err.code, err.detail?.['status'], err.detail?.['size'], err.detail?.['clamped']]).toEqual([
      'CCP_ERR_FETCH_STATUS', 416, warc.length, true,
    ]);
  });
});
