import { readFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { RetryPolicySchema, type Clock } from '@ccpipe/core';
import { serveMirror } from '@ccpipe/mirror/serve/serve-mirror';
import { delay, sendRange, sendSlowDown, startTestServer, type TestServer, failure } from './http-test-server';
import { CC_MIRROR_DEV, loadContractFixture } from './range-reader.contract';
import { UndiciRangeReader, type RangeReaderObserver, type UndiciRangeReaderOptions } from './undici-range-reader';

// Resilience of the HTTP reader against real servers on port 0: SlowDown, Retry-After, AIMD, short bodies,
// resets, timeouts, aborts. Bytes come from the real cc-mirror-dev WARC file named by real CDX lines.
const fx = loadContractFixture();
const warc = new Uint8Array(readFileSync(nodePath.join(CC_MIRROR_DEV, fx.warc.path)));
const rec = fx.records[0]!;
const fastPolicy = RetryPolicySchema.parse({ baseDelayMs: 1, maxDelayMs: 20, maxRetryAfterMs: 20, maxAttempts: 8 });

const servers: TestServer[] = [];
const readers: UndiciRangeReader[] = [];
afterAll(async () => {
  await Promise.all(readers.map((r) => r.close()));
  await Promise.all(servers.map((s) => s.close()));
});

async function server(handler: Parameters<typeof startTestServer>[0]): Promise<TestServer> {
  const s = await startTestServer(handler);
  servers.push(s);
  return s;
}

/** Records every observer call. */
function recorder(): RangeReaderObserver & { calls: Record<string, unknown[]> } {
  const calls: Record<string, unknown[]> = { request: [], retry: [], bytes: [], slowDown: [], concurrency: [] };
  return {
    calls,
    onRequest: () => calls['request']!.push(1),
    onRetry: (e) => calls['retry']!.push(e.statusClass),
    onBytes: (n) => calls['bytes']!.push(n),
    onSlowDown: () => calls['slowDown']!.push(1),
    onConcurrencyChange: (n) => calls['concurrency']!.push(n),
  };
}

function reader(baseUrl: string, opts: Partial<UndiciRangeReaderOptions> = {}): UndiciRangeReader {
  const r = new UndiciRangeReader({
    baseUrl,
    connections: 4,
    userAgent: 'ccpipe-test',
    headersTimeoutMs: 5000,
    bodyTimeoutMs: 5000,
    retryPolicy: fastPolicy,
    ...opts,
  });
  readers.push(r);
  return r;
}


const same = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

describe('UndiciRangeReader under SlowDown', () => {
  it('returns the exact bytes of every record while serveMirror answers every 3rd request with 503 SlowDown', async () => {
    const mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0, faults: { slowDownEvery: 3 } });
    try {
      const obs = recorder();
      const r = reader(mirror.url, { observer: obs });
      const got = await Promise.all(fx.records.map((x) => r.read(x.path, x.offset, x.length)));
      got.forEach((g, i) => expect(same(g, fx.records[i]!.bytes)).toBe(true));
      const requests = obs.calls['request']!.length;
      // Every 3rd request was refused, each refusal was retried, and no read gave up.
      expect(obs.calls['slowDown']!.length).toBe(Math.floor(requests / 3));
      expect(obs.calls['retry']).toEqual(Array(Math.floor(requests / 3)).fill('5xx'));
      expect(requests).toBe(fx.records.length + obs.calls['retry']!.length);
      expect(obs.calls['retry']!.length).toBeGreaterThan(0);
    } finally {
      await mirror.close();
    }
  });

  it('waits at least Retry-After before trying again (injected clock)', async () => {
    const s = await server((req, res, n) => (n === 1 ? sendSlowDown(res, 2) : sendRange(req, res, warc)));
    const sleeps: number[] = [];
    const clock: Clock = { now: () => Date.now(), sleep: async (ms) => void sleeps.push(ms) };
    const policy = RetryPolicySchema.parse({ baseDelayMs: 1, maxDelayMs: 10 });
    const r = reader(s.url, { clock, retryPolicy: policy });
    expect(same(await r.read(rec.path, rec.offset, rec.length), rec.bytes)).toBe(true);
    expect(sleeps).toEqual([2000]);
    expect(s.requests.length).toBe(2);
  });

  it('waits at least Retry-After in real time', async () => {
    const s = await server((req, res, n) => (n === 1 ? sendSlowDown(res, 1) : sendRange(req, res, warc)));
    const r = reader(s.url, { retryPolicy: RetryPolicySchema.parse({ baseDelayMs: 1, maxDelayMs: 10 }) });
    const t0 = Date.now();
    expect(same(await r.read(rec.path, rec.offset, rec.length), rec.bytes)).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(990);
  });

  it('halves the shared concurrency limit once per SlowDown burst, again when retries are refused, and obeys it', async () => {
    // Requests 1–8 arrive together and are refused; 9–12 (the first retries) are refused too; the rest succeed.
    const s = await server(async (req, res, n) => {
      await delay(n <= 8 ? 200 : 15);
      if (n <= 12) sendSlowDown(res);
      else sendRange(req, res, warc);
    });
    const obs = recorder();
    const r = reader(s.url, { connections: 8, increaseAfter: 1000, observer: obs });
    const reads = Array.from({ length: 16 }, (_, i) => fx.records[i % fx.records.length]!);
    const got = await Promise.all(reads.map((x) => r.read(x.path, x.offset, x.length)));
    got.forEach((g, i) => expect(same(g, reads[i]!.bytes)).toBe(true));
    expect(obs.calls['concurrency']).toEqual([4, 2]);
    expect(r.concurrencyLimit).toBe(2);
    expect(s.maxInFlight).toBe(8); // the first burst, before any SlowDown
  });

  it('never has more requests in flight than the current limit, and adds one back per N successes', async () => {
    let inFlight = 0;
    const overLimit: Array<[number, number]> = [];
    let r: UndiciRangeReader | undefined;
    const s = await server(async (req, res, n) => {
      if (n <= 8) {
        await delay(200);
        sendSlowDown(res);
        return;
      }
      inFlight++;
      // The reader releases a slot only after the reply, so the server can never see more than the limit.
      if (inFlight > r!.concurrencyLimit) overLimit.push([inFlight, r!.concurrencyLimit]);
      await delay(10);
      inFlight--;
      sendRange(req, res, warc);
    });
    const obs = recorder();
    r = reader(s.url, { connections: 8, increaseAfter: 3, observer: obs });
    const reads = Array.from({ length: 24 }, (_, i) => fx.records[i % fx.records.length]!);
    await Promise.all(reads.map((x) => r!.read(x.path, x.offset, x.length)));
    expect(obs.calls['concurrency']).toEqual([4, 5, 6, 7, 8]);
    expect(overLimit).toEqual([]);
    expect(s.maxInFlight).toBe(8);
    expect(obs.calls['slowDown']!.length).toBe(8);
  });
});

describe('UndiciRangeReader retries', () => {
  it.each([
    ['breaks off mid-body', (res: import('node:http').ServerResponse, part: Buffer, full: number) => {
      res.writeHead(206, { 'Content-Range': `bytes ${rec.offset}-${rec.offset + rec.length - 1}/${warc.length}`, 'Content-Length': String(full) });
      res.write(part, () => res.destroy());
    }],
    ['sends a shorter Content-Length', (res: import('node:http').ServerResponse, part: Buffer) => {
      res.writeHead(206, { 'Content-Range': `bytes ${rec.offset}-${rec.offset + rec.length - 1}/${warc.length}`, 'Content-Length': String(part.length) });
      res.end(part);
    }],
  ])('retries a short body (server %s) and returns the exact bytes', async (_name, shortReply) => {
    const s = await server((req, res, n) => {
      if (n === 1) shortReply(res, rec.bytes.subarray(0, Math.floor(rec.length / 2)), rec.length);
      else sendRange(req, res, warc);
    });
    const obs = recorder();
    const r = reader(s.url, { observer: obs });
    expect(same(await r.read(rec.path, rec.offset, rec.length), rec.bytes)).toBe(true);
    expect(obs.calls['retry']).toEqual(['network']);
    expect(s.requests.length).toBe(2);
  });

  it('gives up on a short body after maxAttempts with retryable CCP_ERR_FETCH_SHORT_BODY', async () => {
    const s = await server((_req, res) => {
      res.writeHead(206, { 'Content-Range': `bytes ${rec.offset}-${rec.offset + rec.length - 1}/*`, 'Content-Length': '10' });
      res.end(rec.bytes.subarray(0, 10));
    });
    const r = reader(s.url, { retryPolicy: RetryPolicySchema.parse({ ...fastPolicy, maxAttempts: 3 }) });
    const err = await failure(r.read(rec.path, rec.offset, rec.length));
    expect([err.code, err.retryable, err.detail?.['attempts'], err.detail?.['received']]).toEqual(['CCP_ERR_FETCH_SHORT_BODY', true, 3, 10]);
    expect(s.requests.length).toBe(3);
  });

  it('retries a connection reset before the headers', async () => {
    const s = await server((req, res, n) => {
      if (n === 1) req.socket.destroy();
      else sendRange(req, res, warc);
    });
    const obs = recorder();
    const r = reader(s.url, { observer: obs });
    expect(same(await r.read(rec.path, rec.offset, rec.length), rec.bytes)).toBe(true);
    expect(obs.calls['retry']).toEqual(['network']);
  });

  it('gives up after maxAttempts on a lasting SlowDown: retryable CCP_ERR_FETCH_STATUS 503 with the S3 code', async () => {
    const s = await server((_req, res) => sendSlowDown(res));
    const r = reader(s.url, { retryPolicy: RetryPolicySchema.parse({ ...fastPolicy, maxAttempts: 3 }) });
    const err = await failure(r.read(rec.path, rec.offset, rec.length));
    expect([err.code, err.retryable, err.detail?.['status'], err.detail?.['s3Code'], err.detail?.['attempts']]).toEqual([
      'CCP_ERR_FETCH_STATUS', true, 503, 'SlowDown', 3,
    ]);
    expect(s.requests.length).toBe(3);
  });

  it.each([404, 403, 416])('does not retry %i: CCP_ERR_FETCH_STATUS with the status, one request', async (status) => {
    const s = await server((_req, res) => {
      res.writeHead(status, { 'Content-Length': '0' });
      res.end();
    });
    const obs = recorder();
    const r = reader(s.url, { observer: obs });
    const err = await failure(r.read(rec.path, rec.offset, rec.length));
    expect([err.code, err.detail?.['status'], err.retryable]).toEqual(['CCP_ERR_FETCH_STATUS', status, false]);
    expect([s.requests.length, obs.calls['retry']!.length]).toEqual([1, 0]);
  });

  it('retries a 500 without touching the concurrency limit', async () => {
    const s = await server((req, res, n) => {
      if (n === 1) {
        res.writeHead(500, { 'Content-Length': '0' });
        res.end();
      } else sendRange(req, res, warc);
    });
    const obs = recorder();
    const r = reader(s.url, { observer: obs });
    expect(same(await r.read(rec.path, rec.offset, rec.length), rec.bytes)).toBe(true);
    expect([obs.calls['retry'], obs.calls['slowDown']!.length, obs.calls['concurrency']]).toEqual([['5xx'], 0, []]);
  });

  it('times out a server that never answers, retries per policy, then throws CCP_ERR_FETCH_NETWORK', async () => {
    const s = await server(() => undefined);
    const r = reader(s.url, { headersTimeoutMs: 100, retryPolicy: RetryPolicySchema.parse({ ...fastPolicy, maxAttempts: 2 }) });
    const err = await failure(r.read(rec.path, rec.offset, rec.length));
    expect([err.code, err.detail?.['code'], err.retryable]).toEqual(['CCP_ERR_FETCH_NETWORK', 'UND_ERR_HEADERS_TIMEOUT', true]);
    expect(s.requests.length).toBe(2);
  });
});

describe('UndiciRangeReader abort and close', () => {
  it('ends a read sleeping in backoff with CCP_ERR_ABORTED as soon as the signal fires', async () => {
    const s = await server((_req, res) => sendSlowDown(res, 30));
    const r = reader(s.url, { retryPolicy: RetryPolicySchema.parse({}) });
    const ac = new AbortController();
    const t0 = Date.now();
    setTimeout(() => ac.abort(), 100);
    const err = await failure(r.read(rec.path, rec.offset, rec.length, ac.signal));
    expect(err.code).toBe('CCP_ERR_ABORTED');
    expect(Date.now() - t0).toBeLessThan(5000); // not the 30 s the server asked for
    expect(s.requests.length).toBe(1);
  });

  it('ends a read waiting for headers with CCP_ERR_ABORTED', async () => {
    const s = await server(() => undefined);
    const r = reader(s.url);
    const err = await failure(r.read(rec.path, rec.offset, rec.length, AbortSignal.timeout(100)));
    expect(err.code).toBe('CCP_ERR_ABORTED');
  });

  it('close() wakes reads sleeping in backoff with CCP_ERR_READER_CLOSED and is idempotent', async () => {
    const s = await server((_req, res) => sendSlowDown(res, 30));
    const r = reader(s.url, { retryPolicy: RetryPolicySchema.parse({}) });
    const pending = failure(r.read(rec.path, rec.offset, rec.length));
    await delay(100);
    await Promise.all([r.close(), r.close()]);
    expect((await pending).code).toBe('CCP_ERR_READER_CLOSED');
    await r.close();
  });
});

describe('UndiciRangeReader.stream', () => {
  it('retries before the first byte and then yields the whole file', async () => {
    const s = await server((req, res, n) => (n === 1 ? sendSlowDown(res) : sendRange(req, res, warc)));
    const r = reader(s.url);
    const parts: Buffer[] = [];
    for await (const c of r.stream(fx.warc.path)) parts.push(Buffer.from(c));
    expect(same(Buffer.concat(parts), warc)).toBe(true);
    expect(s.requests.length).toBe(2);
  });

  it('does not retry once bytes were yielded: a broken body ends with CCP_ERR_FETCH_SHORT_BODY', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'Content-Length': String(warc.length) });
      res.write(warc.subarray(0, 100_000), () => res.destroy());
    });
    const r = reader(s.url);
    let received = 0;
    const err = await failure(
      (async () => {
        for await (const c of r.stream(fx.warc.path)) received += c.length;
      })(),
    );
    expect(err.code).toBe('CCP_ERR_FETCH_SHORT_BODY');
    expect(received).toBeGreaterThan(0);
    expect(received).toBeLessThan(warc.length);
    expect(s.requests.length).toBe(1);
  });
});
