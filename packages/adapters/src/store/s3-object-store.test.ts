import { createServer, request, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { loadConfig, type ObjectInfo } from '@ccpipe/core';
import { FsObjectStore } from './fs-object-store';
import { describeObjectStoreContract } from './object-store.contract';
import { localStoreDir, openObjectStore, parseStoreSpec } from './open-object-store';
import { S3ObjectStore, type S3ObjectStoreOptions } from './s3-object-store';
import { S3RVER_CREDENTIALS, startS3TestServer, type S3TestServer } from './s3-test-server';

const REPO = join(__dirname, '..', '..', '..', '..');
const REAL_WARC = join(REPO, '../shared/corpus/cc-mirror-dev/crawl-data/CC-MAIN-2030-40/segments/1700003000.00/warc/CC-MAIN-20301110120000-20301110150000-00000.warc.gz');
const realBytes = readFileSync(REAL_WARC);
const enc = new TextEncoder();

let s3: S3TestServer;
let seq = 0;
beforeAll(async () => {
  s3 = await startS3TestServer();
  await s3.createBucket('lake');
  await s3.createBucket('lake-root');
}, 30_000);
afterAll(() => s3?.close());

/** A client that records the name of every command it sends. */
function recordingClient(endpoint: string, sent: string[]): S3Client {
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: S3RVER_CREDENTIALS, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED', maxAttempts: 1 });
  client.middlewareStack.add(
    (next, ctx) => async (args) => {
      sent.push(ctx.commandName ?? '?');
      return next(args);
    },
    { step: 'initialize' },
  );
  return client;
}

const storeOn = (opts: Partial<S3ObjectStoreOptions> = {}): S3ObjectStore =>
  new S3ObjectStore({ bucket: 'lake', prefix: `t${++seq}/run`, endpoint: s3.endpoint, credentials: S3RVER_CREDENTIALS, ...opts });

async function keysOf(it: AsyncIterable<ObjectInfo>): Promise<string[]> {
  const out: string[] = [];
  for await (const o of it) out.push(o.key);
  return out;
}

async function codeOf(p: Promise<unknown>): Promise<{ code?: string; retryable?: boolean } | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    const e = err as { code?: string; retryable?: boolean };
    return { code: e.code, retryable: e.retryable };
  }
}

// Each test gets its own key prefix in one bucket; small pages so that every listing crosses page boundaries.
describeObjectStoreContract(
  'S3ObjectStore on s3rver (prefix, 7-key pages)',
  async () => {
    const store = storeOn({ listPageSize: 7, multipartThreshold: 1024 * 1024, partSize: 256 * 1024 });
    return { store, cleanup: () => store.close() };
  },
  realBytes,
);

describe('S3ObjectStore on s3rver', () => {
  it('lists through several ListObjectsV2 pages by continuation token', async () => {
    const sent: string[] = [];
    const client = recordingClient(s3.endpoint, sent);
    const store = new S3ObjectStore({ bucket: 'lake', prefix: `t${++seq}`, client, listPageSize: 4 });
    const keys = ['a/b', 'a-b', 'a.c', 'a/c=1/x', 'a0', 'b', 'a/c-', 'a/c/z', 'a/c.d', 'dataset_id=3/x'];
    for (const k of keys) await store.put(k, enc.encode(k));
    sent.length = 0;
    expect(await keysOf(store.list(''))).toEqual([...keys].sort());
    expect(sent.filter((c) => c === 'ListObjectsV2Command')).toHaveLength(3);
    client.destroy();
  });

  it('stores keys at the bucket root with no prefix, and ignores foreign objects that are not store keys', async () => {
    const store = new S3ObjectStore({ bucket: 'lake-root', endpoint: s3.endpoint, credentials: S3RVER_CREDENTIALS });
    await store.put('datasets.json', enc.encode('{}'));
    await s3.client.send(new PutObjectCommand({ Bucket: 'lake-root', Key: 'folder/', Body: new Uint8Array(0) }));
    await s3.client.send(new PutObjectCommand({ Bucket: 'lake-root', Key: 'notes about ccpipe.txt', Body: 'x' }));
    expect((await s3.client.send(new HeadObjectCommand({ Bucket: 'lake-root', Key: 'datasets.json' }))).ContentLength).toBe(2);
    expect(await keysOf(store.list(''))).toEqual(['datasets.json']);
    await store.close();
  });

  it('uploads an object above the threshold in parts (multipart ETag) and reads it back whole and by range', async () => {
    const sent: string[] = [];
    const client = recordingClient(s3.endpoint, sent);
    const store = new S3ObjectStore({ bucket: 'lake', prefix: `t${++seq}`, client, multipartThreshold: 1024 * 1024, partSize: 1024 * 1024 });
    await store.put('lake/big.warc.gz', realBytes);
    const parts = Math.ceil(realBytes.length / (1024 * 1024));
    expect(sent.filter((c) => c === 'UploadPartCommand')).toHaveLength(parts);
    expect(sent).toContain('CompleteMultipartUploadCommand');
    expect(sent).not.toContain('PutObjectCommand');
    expect(Buffer.from((await store.get('lake/big.warc.gz'))!).equals(realBytes)).toBe(true);
    const off = 1024 * 1024 - 10; // across a part boundary
    expect(Buffer.from(await store.getRange('lake/big.warc.gz', off, 100)).equals(realBytes.subarray(off, off + 100))).toBe(true);
    // below the threshold: a single PutObject
    sent.length = 0;
    await store.put('small', realBytes.subarray(0, 1024 * 1024));
    expect(sent).toEqual(['PutObjectCommand']);
    client.destroy();
  });

  it('aborts the multipart upload when a part fails, and leaves no object behind', async () => {
    const sent: string[] = [];
    const client = recordingClient(s3.endpoint, sent);
    let parts = 0;
    client.middlewareStack.add(
      (next, ctx) => async (args) => {
        if (ctx.commandName === 'UploadPartCommand' && ++parts === 3) throw new Error('connection reset (injected)');
        return next(args);
      },
      { step: 'initialize' },
    );
    // one attempt per request: the injected failure is not retried away
    const store = new S3ObjectStore({ bucket: 'lake', prefix: `t${++seq}`, client, multipartThreshold: 1024 * 1024, partSize: 1024 * 1024, partConcurrency: 1, maxAttempts: 1 });
    expect(await codeOf(store.put('lake/big.warc.gz', realBytes))).toEqual({ code: 'CCP_ERR_STORE_IO', retryable: true });
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(sent).not.toContain('CompleteMultipartUploadCommand');
    expect(await store.head('lake/big.warc.gz')).toBeNull();
    client.destroy();
  });

  it('with parallel parts, aborts only once no part is in flight and starts no part after a failure', async () => {
    const events: string[] = [];
    const client = recordingClient(s3.endpoint, []);
    let parts = 0;
    client.middlewareStack.add(
      (next, ctx) => async (args) => {
        if (ctx.commandName === 'AbortMultipartUploadCommand') events.push('abort');
        if (ctx.commandName !== 'UploadPartCommand') return next(args);
        const n = ++parts;
        events.push('start');
        if (n === 2) {
          events.push('fail');
          throw new Error('connection reset (injected)');
        }
        await new Promise((r) => setTimeout(r, 60)); // the other lanes are mid-upload when part 2 fails
        const out = await next(args);
        events.push('done');
        return out;
      },
      { step: 'initialize' },
    );
    const store = new S3ObjectStore({ bucket: 'lake', prefix: `t${++seq}`, client, multipartThreshold: 1024 * 1024, partSize: 1024 * 1024, partConcurrency: 4, maxAttempts: 1 });
    expect(await codeOf(store.put('lake/big.warc.gz', realBytes))).toEqual({ code: 'CCP_ERR_STORE_IO', retryable: true });
    const abortAt = events.indexOf('abort');
    expect(abortAt).toBeGreaterThan(events.indexOf('fail'));
    expect(events.slice(abortAt + 1)).toEqual([]); // nothing started or finished after the abort
    expect(events.filter((e) => e === 'start').length).toBe(4); // only the parts already in flight when part 2 failed
    expect(await store.head('lake/big.warc.gz')).toBeNull();
    client.destroy();
  });

  it('classifies S3 errors: transient 4xx codes are retryable, permanent ones are not', async () => {
    const failWith = (name: string, status: number) => new S3ObjectStore({
      bucket: 'lake',
      maxAttempts: 1,
      client: { send: async () => Promise.reject(Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } })) } as unknown as S3Client,
    });
    for (const [name, status] of [['RequestTimeout', 400], ['IncompleteBody', 400], ['BadDigest', 400], ['NoSuchUpload', 404], ['SlowDown', 503]] as const) {
      expect({ name, e: await codeOf(failWith(name, status).getRange('k', 0, 1)) }).toEqual({ name, e: { code: 'CCP_ERR_STORE_IO', retryable: true } });
    }
    for (const [name, status] of [['InvalidArgument', 400], ['EntityTooLarge', 400]] as const) {
      expect({ name, e: await codeOf(failWith(name, status).getRange('k', 0, 1)) }).toEqual({ name, e: { code: 'CCP_ERR_STORE_IO', retryable: false } });
    }
  });

  it('manifest puts are read back: a second writer between put and read-back is reported as CCP_ERR_STORE_CONFLICT', async () => {
    const client = recordingClient(s3.endpoint, []);
    const prefix = `t${++seq}`;
    let rival = true;
    client.middlewareStack.add(
      (next, ctx) => async (args) => {
        const out = await next(args);
        // another merger publishes its manifest right after ours
        if (ctx.commandName === 'PutObjectCommand' && rival) {
          rival = false;
          await client.send(new PutObjectCommand({ Bucket: 'lake', Key: `${prefix}/index/manifest.json`, Body: '{"current":"v-other"}' }));
        }
        return out;
      },
      { step: 'initialize' },
    );
    const store = new S3ObjectStore({ bucket: 'lake', prefix, client });
    expect(await codeOf(store.put('index/manifest.json', enc.encode('{"current":"v-mine"}')))).toEqual({ code: 'CCP_ERR_STORE_CONFLICT', retryable: false });
    // without a rival the same put passes its check; other keys are not read back
    await store.put('index/manifest.json', enc.encode('{"current":"v-mine"}'));
    rival = true;
    await store.put('index/v-mine/lake.parquet', enc.encode('PAR1'));
    expect(new TextDecoder().decode((await store.get('index/v-mine/lake.parquet'))!)).toBe('PAR1');
    client.destroy();
  });

  it('refuses a server that lists out of byte order (s3rver own order) instead of skipping keys', async () => {
    const raw = await startS3TestServer({ fsOrder: true });
    try {
      await raw.createBucket('lake');
      const store = new S3ObjectStore({ bucket: 'lake', prefix: 'p', endpoint: raw.endpoint, credentials: S3RVER_CREDENTIALS });
      for (const k of ['a/b', 'a-b', 'b']) await store.put(k, enc.encode(k));
      expect(await codeOf(keysOf(store.list('')))).toEqual({ code: 'CCP_ERR_STORE_ORDER', retryable: false });
      await store.close();
    } finally {
      await raw.close();
    }
  }, 30_000);

  it('errors: a missing bucket or unknown credentials are CCP_ERR_STORE_ACCESS (not retryable), an unreachable server is retryable', async () => {
    const noBucket = new S3ObjectStore({ bucket: 'no-such-bucket', endpoint: s3.endpoint, credentials: S3RVER_CREDENTIALS, maxAttempts: 1 });
    expect(await codeOf(noBucket.get('k'))).toEqual({ code: 'CCP_ERR_STORE_ACCESS', retryable: false });
    expect(await codeOf(noBucket.put('k', enc.encode('x')))).toEqual({ code: 'CCP_ERR_STORE_ACCESS', retryable: false });
    expect(await codeOf(keysOf(noBucket.list('')))).toEqual({ code: 'CCP_ERR_STORE_ACCESS', retryable: false });
    // HEAD has no error body: its 404 is told apart from a missing object by a HeadBucket
    expect(await codeOf(noBucket.head('k'))).toEqual({ code: 'CCP_ERR_STORE_ACCESS', retryable: false });
    const present = storeOn();
    expect(await present.head('missing')).toBeNull();
    await present.close();
    // s3rver checks the access key id but not SigV4 signatures: an unknown key stands for bad credentials
    const unknownKey = new S3ObjectStore({ bucket: 'lake', endpoint: s3.endpoint, credentials: { accessKeyId: 'NOPE', secretAccessKey: 'S3RVER' }, maxAttempts: 1 });
    expect(await codeOf(unknownKey.get('k'))).toEqual({ code: 'CCP_ERR_STORE_ACCESS', retryable: false });
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const down = new S3ObjectStore({ bucket: 'lake', endpoint: `http://127.0.0.1:${port}`, credentials: S3RVER_CREDENTIALS, maxAttempts: 2 });
    expect(await codeOf(down.head('k'))).toEqual({ code: 'CCP_ERR_STORE_IO', retryable: true });
    for (const s of [noBucket, unknownKey, down]) await s.close();
  });

  /**
   * A proxy in front of s3rver: `fault(req, res, n)` (n counts requests from 1) answers a request itself and returns
   * true, or returns false to pass it through (with `rewrite` applied to its headers).
   */
  async function faultProxy(fault: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, n: number) => boolean, rewrite = (h: import('node:http').IncomingHttpHeaders) => h) {
    let n = 0;
    const proxy: Server = createServer((req, res) => {
      if (fault(req, res, ++n)) return;
      const up = request(`${s3.endpoint}${req.url ?? '/'}`, { method: req.method, headers: rewrite({ ...req.headers }) }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    return { endpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, requests: () => n, close: () => new Promise((r) => { proxy.closeAllConnections(); proxy.close(r); }) };
  }
  const slowDown = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): true => {
    req.resume();
    res.writeHead(503, { 'content-type': 'application/xml' });
    res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
    return true;
  };

  it('keeps retrying every request through a long SlowDown storm (no shared retry budget that runs out)', async () => {
    const proxy = await faultProxy((req, res) => slowDown(req, res));
    try {
      const store = new S3ObjectStore({ bucket: 'lake', prefix: `t${++seq}`, endpoint: proxy.endpoint, credentials: S3RVER_CREDENTIALS, maxAttempts: 3, retryBaseMs: 1, retryMaxMs: 2 });
      // the SDK's standard strategy stopped retrying after ≈ 25 failed requests of a client: 40 operations here
      for (let i = 0; i < 40; i++) expect(await codeOf(store.get(`k${i}`))).toEqual({ code: 'CCP_ERR_STORE_IO', retryable: true });
      expect(proxy.requests()).toBe(120);
      await store.close();
    } finally {
      await proxy.close();
    }
  });

  it('retries a connection reset while the body is read, and gives up on a server that stops answering, within its timeouts', async () => {
    const base = storeOn();
    const prefix = `t${seq}/run`;
    await base.put('big', realBytes);
    // the first GET gets its headers and half of its body, then the connection drops
    const reset = await faultProxy((req, res, n) => {
      if (n !== 1 || req.method !== 'GET') return false;
      req.resume();
      res.writeHead(200, { 'content-length': String(realBytes.length), 'content-type': 'application/octet-stream' });
      res.write(realBytes.subarray(0, realBytes.length >> 1), () => res.socket?.destroy());
      return true;
    });
    const stalled = await faultProxy((req) => {
      req.resume(); // never answered
      return true;
    });
    try {
      const store = new S3ObjectStore({ bucket: 'lake', prefix, endpoint: reset.endpoint, credentials: S3RVER_CREDENTIALS, maxAttempts: 3, retryBaseMs: 1 });
      expect(Buffer.from((await store.get('big'))!).equals(realBytes)).toBe(true);
      expect(reset.requests()).toBe(2);
      const hung = new S3ObjectStore({ bucket: 'lake', prefix, endpoint: stalled.endpoint, credentials: S3RVER_CREDENTIALS, maxAttempts: 2, retryBaseMs: 1, requestTimeoutMs: 300, idleTimeoutMs: 300 });
      const t0 = Date.now();
      expect(await codeOf(hung.get('big'))).toEqual({ code: 'CCP_ERR_STORE_IO', retryable: true });
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(stalled.requests()).toBe(2);
      for (const s of [store, hung, base]) await s.close();
    } finally {
      await reset.close();
      await stalled.close();
    }
  });

  it('a CompleteMultipartUpload whose answer was lost is not a failure when the object is there (its retry finds no upload)', async () => {
    let completes = 0;
    const proxy = await faultProxy((req, res) => {
      const complete = req.method === 'POST' && (req.url ?? '').includes('uploadId=');
      if (!complete || ++completes === 1) {
        if (completes !== 1 || !complete) return false;
        // the first Complete reaches the server, its answer never reaches us
        const up = request(`${s3.endpoint}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (r) => {
          r.resume();
          r.on('end', () => res.socket?.destroy());
        });
        req.pipe(up);
        return true;
      }
      // as S3 answers a retried Complete of an upload that completed
      req.resume();
      res.writeHead(404, { 'content-type': 'application/xml' });
      res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>');
      return true;
    });
    try {
      const store = new S3ObjectStore({ bucket: 'lake', prefix: `t${++seq}`, endpoint: proxy.endpoint, credentials: S3RVER_CREDENTIALS, maxAttempts: 3, retryBaseMs: 1, multipartThreshold: 1024 * 1024, partSize: 1024 * 1024 });
      await store.put('big', realBytes);
      expect(completes).toBeGreaterThan(1);
      expect(Buffer.from((await store.get('big'))!).equals(realBytes)).toBe(true);
      await store.close();
    } finally {
      await proxy.close();
    }
  });

  it('reads the right slice from a server that ignores Range, and refuses a range past the end', async () => {
    const base = storeOn();
    await base.put('ten', enc.encode('0123456789'));
    const proxy = await faultProxy(() => false, (h) => {
      delete h['range'];
      return h;
    });
    try {
      const store = new S3ObjectStore({ bucket: 'lake', prefix: `t${seq}/run`, endpoint: proxy.endpoint, credentials: S3RVER_CREDENTIALS, maxAttempts: 1 });
      expect(new TextDecoder().decode(await store.getRange('ten', 2, 3))).toBe('234');
      expect(await codeOf(store.getRange('ten', 5, 10))).toEqual({ code: 'CCP_ERR_STORE_RANGE', retryable: false });
      expect(new TextDecoder().decode(await store.getRange('ten', 0, 10))).toBe('0123456789');
      for (const s of [store, base]) await s.close();
    } finally {
      await proxy.close();
    }
  });

  it('retries 503 SlowDown answers', async () => {
    // A proxy in front of s3rver that answers the first two requests with 503 SlowDown, as S3 does under load.
    let refused = 0;
    const proxy: Server = createServer((req, res) => {
      if (refused < 2) {
        refused++;
        req.resume();
        res.writeHead(503, { 'content-type': 'application/xml' });
        res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
        return;
      }
      const up = request(`${s3.endpoint}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      });
      req.pipe(up);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const store = new S3ObjectStore({ bucket: 'lake', prefix: `t${++seq}`, endpoint, credentials: S3RVER_CREDENTIALS, maxAttempts: 3 });
      await store.put('k', enc.encode('after slow down'));
      expect(refused).toBe(2);
      expect(new TextDecoder().decode((await store.get('k'))!)).toBe('after slow down');
      refused = 0;
      const once = new S3ObjectStore({ bucket: 'lake', prefix: `t${seq}`, endpoint, credentials: S3RVER_CREDENTIALS, maxAttempts: 1 });
      expect(await codeOf(once.get('k'))).toEqual({ code: 'CCP_ERR_STORE_IO', retryable: true });
      for (const s of [store, once]) await s.close();
    } finally {
      await new Promise((r) => proxy.close(r));
    }
  });
});

describe('openObjectStore', () => {
  it('opens a directory as FsObjectStore and s3://bucket/prefix as S3ObjectStore', () => {
    expect(openObjectStore('/tmp/ccpipe-data')).toBeInstanceOf(FsObjectStore);
    expect(localStoreDir('./data')).toBe(join(process.cwd(), 'data'));
    expect(parseStoreSpec('s3://lake/runs/dataset_id=3/')).toEqual({ kind: 's3', bucket: 'lake', prefix: 'runs/dataset_id=3' });
    expect(parseStoreSpec('s3://lake')).toEqual({ kind: 's3', bucket: 'lake', prefix: '' });
    expect(localStoreDir('s3://lake/x')).toBeUndefined();
    for (const bad of ['s3://Lake/x', 's3://l/x', 's3://lake/a//b', 's3://lake/a b', 's3://lake/../x']) {
      expect(() => parseStoreSpec(bad)).toThrow(expect.objectContaining({ code: 'CCP_ERR_CONFIG' }));
    }
  });

  it('rejects a bad s3:// location when the config is loaded, naming the flag', () => {
    expect(() => loadConfig({ CCPIPE_DATA: 's3://Bad_Bucket/x' })).toThrow(/--data \/ CCPIPE_DATA/);
    expect(() => loadConfig({ CCPIPE_S3_MULTIPART_THRESHOLD: '1000' })).toThrow(/--s3-multipart-threshold/);
    expect(loadConfig({ CCPIPE_DATA: 's3://lake/a/dataset_id=3' }).data).toBe('s3://lake/a/dataset_id=3');
  });

  it('wires the config table to a working store, with credentials from the AWS environment variables', async () => {
    const config = loadConfig({ CCPIPE_DATA: `s3://lake/t${++seq}/cfg`, CCPIPE_S3_ENDPOINT: s3.endpoint, CCPIPE_S3_FORCE_PATH_STYLE: 'true' });
    const saved = { id: process.env['AWS_ACCESS_KEY_ID'], secret: process.env['AWS_SECRET_ACCESS_KEY'] };
    process.env['AWS_ACCESS_KEY_ID'] = 'S3RVER';
    process.env['AWS_SECRET_ACCESS_KEY'] = 'S3RVER';
    const store = openObjectStore(config.data, config);
    try {
      expect(store).toBeInstanceOf(S3ObjectStore);
      await store.put('datasets.json', enc.encode('{"datasets":[]}'));
      const got = await s3.client.send(new HeadObjectCommand({ Bucket: 'lake', Key: `t${seq}/cfg/datasets.json` }));
      expect(got.ContentLength).toBe(15);
    } finally {
      await store.close();
      for (const [k, v] of [['AWS_ACCESS_KEY_ID', saved.id], ['AWS_SECRET_ACCESS_KEY', saved.secret]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
