import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { serveMirror, type MirrorServer } from './serve-mirror';

const REPO_ROOT = path.resolve(__dirname, '../../../..');
const CC_MIRROR_DEV = path.join(REPO_ROOT, '../shared/corpus/cc-mirror-dev');

/** Sends one request over a raw socket so nothing normalizes the target (`..`, `%2e`, `\`). */
function rawGet(port: number, target: string): Promise<{ status: number; raw: string }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', reject);
    sock.on('end', () => {
      const raw = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(raw);
      resolve({ status: m ? Number(m[1]) : -1, raw });
    });
    sock.write(`GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`, 'latin1');
  });
}

describe('serveMirror', () => {
  let root: string;
  let outside: string;
  let server: MirrorServer;
  const content = randomBytes(10_000);

  beforeAll(async () => {
    root = await fsp.mkdtemp(path.join(os.tmpdir(), 'ccpipe-serve-'));
    outside = await fsp.mkdtemp(path.join(os.tmpdir(), 'ccpipe-outside-'));
    await fsp.mkdir(path.join(root, 'crawl-data/X/segments/1.00/warc'), { recursive: true });
    await fsp.writeFile(path.join(root, 'crawl-data/X/segments/1.00/warc/a b.warc.gz'), content);
    await fsp.writeFile(path.join(root, 'empty.bin'), Buffer.alloc(0));
    await fsp.writeFile(path.join(outside, 'secret.txt'), 'top secret');
    await fsp.symlink(path.join(outside, 'secret.txt'), path.join(root, 'escape.txt'));
    await fsp.symlink(outside, path.join(root, 'escape-dir'));
    await fsp.symlink(path.join(root, 'crawl-data/X/segments/1.00/warc/a b.warc.gz'), path.join(root, 'inside-link.gz'));
    server = await serveMirror({ dir: root, port: 0 });
  });

  afterAll(async () => {
    await server.close();
    await fsp.rm(root, { recursive: true, force: true });
    await fsp.rm(outside, { recursive: true, force: true });
  });

  const fileUrl = (): string => `${server.url}/crawl-data/X/segments/1.00/warc/a%20b.warc.gz`;

  it.each([
    ['bytes=100-199', 100, 199],
    ['bytes=9990-', 9990, 9999],
    ['bytes=-25', 9975, 9999],
    ['bytes=9000-20000', 9000, 9999],
    ['bytes=0-0', 0, 0],
    ['bytes=-20000', 0, 9999],
  ])('answers %s with 206, Content-Range and exactly those bytes', async (range, start, end) => {
    const res = await fetch(fileUrl(), { headers: { Range: range } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/10000`);
    expect(res.headers.get('content-length')).toBe(String(end - start + 1));
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.equals(content.subarray(start, end + 1))).toBe(true);
  });

  it('answers without Range with 200 and the whole file, with validators', async () => {
    const res = await fetch(fileUrl());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('10000');
    expect(res.headers.get('etag')).toMatch(/^".+"$/);
    expect(Date.parse(res.headers.get('last-modified') ?? '')).not.toBeNaN();
    expect(Buffer.from(await res.arrayBuffer()).equals(content)).toBe(true);
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const res = await fetch(fileUrl(), { method: 'HEAD', headers: { Range: 'bytes=10-19' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-length')).toBe('10');
    expect(res.headers.get('content-range')).toBe('bytes 10-19/10000');
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it.each(['bytes=10000-', 'bytes=20000-20010', 'bytes=-0'])('answers unsatisfiable %s with 416 bytes */size', async (range) => {
    const res = await fetch(fileUrl(), { headers: { Range: range } });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe('bytes */10000');
    await res.arrayBuffer();
  });

  it('answers any range on an empty file with 416', async () => {
    const res = await fetch(`${server.url}/empty.bin`, { headers: { Range: 'bytes=0-10' } });
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe('bytes */0');
    await res.arrayBuffer();
  });

  it.each(['bytes=0-9,20-29', 'bytes=5-2', 'items=0-9', 'bytes=abc'])('ignores %s (several or malformed ranges) and sends 200 full', async (range) => {
    const res = await fetch(fileUrl(), { headers: { Range: range } });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).length).toBe(10_000);
  });

  it('follows a symlink that stays inside the root', async () => {
    const res = await fetch(`${server.url}/inside-link.gz`, { headers: { Range: 'bytes=0-9' } });
    expect(res.status).toBe(206);
    expect(Buffer.from(await res.arrayBuffer()).equals(content.subarray(0, 10))).toBe(true);
  });

  it('answers 404 for missing files and directories, 405 for other methods', async () => {
    for (const p of ['/nope.gz', '/crawl-data/X/', '/crawl-data/X', '/']) {
      const res = await fetch(`${server.url}${p}`);
      expect([p, res.status]).toEqual([p, 404]);
      await res.arrayBuffer();
    }
    const res = await fetch(fileUrl(), { method: 'DELETE' });
    expect(res.status).toBe(405);
    await res.arrayBuffer();
  });

  it.each([
    '/../' + 'etc/passwd',
    '/crawl-data/../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/crawl-data/%2E%2e/%2e./etc/passwd',
    '/crawl-data%2f..%2f..%2fetc%2fpasswd',
    '/..%5c..%5cetc%5cpasswd',
    '/..\\..\\etc\\passwd',
    '/empty.bin%00.gz',
    '/escape.txt',
    '/escape-dir/secret.txt',
  ])('refuses path traversal %s with 404 and no outside bytes', async (target) => {
    const { status, raw } = await rawGet(server.port, target);
    expect([target, status]).toEqual([target, 404]);
    expect(raw).not.toContain('top secret');
    expect(raw).not.toContain('root:');
  });
});

describe('serveMirror request targets', () => {
  it("leaves a target without a leading slash to Node's parser, which answers 400", async () => {
    const server = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
    try {
      const { status, raw } = await rawGet(server.port, 'etc/passwd');
      expect(status).toBe(400);
      expect(raw).not.toContain('root:');
    } finally {
      await server.close();
    }
  });
});

describe('serveMirror start-up', () => {
  it('refuses to serve a file instead of a directory', async () => {
    await expect(serveMirror({ dir: path.join(CC_MIRROR_DEV, 'collinfo.json'), port: 0 })).rejects.toMatchObject({ code: 'CCP_ERR_MIRROR_ROOT' });
  });
});

describe('serveMirror fault injection', () => {
  it('answers every Nth request with 503 SlowDown, Retry-After and the S3 XML body', async () => {
    const server = await serveMirror({ dir: CC_MIRROR_DEV, port: 0, faults: { slowDownEvery: 3 } });
    try {
      const statuses: number[] = [];
      for (let i = 1; i <= 7; i++) {
        const res = await fetch(`${server.url}/collinfo.json`);
        statuses.push(res.status);
        const body = await res.text();
        if (res.status === 503) {
          expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
          expect(body).toContain('<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message>');
        } else {
          expect(JSON.parse(body)).toEqual(expect.any(Array));
        }
      }
      expect(statuses).toEqual([200, 200, 503, 200, 200, 503, 200]);
      expect(server.stats()).toEqual({ requests: 7, slowDowns: 2 });
    } finally {
      await server.close();
    }
  });

  it('throttles bodies but still delivers the exact bytes', async () => {
    const server = await serveMirror({ dir: CC_MIRROR_DEV, port: 0, faults: { slowBodyBytesPerSec: 8000 } });
    try {
      const t0 = Date.now();
      const res = await fetch(`${server.url}/cc-index/collections/CC-MAIN-2030-40/indexes/cdx-00000.gz`, {
        headers: { Range: 'bytes=0-3999' },
      });
      const body = Buffer.from(await res.arrayBuffer());
      const elapsed = Date.now() - t0;
      const want = (await fsp.readFile(path.join(CC_MIRROR_DEV, 'cc-index/collections/CC-MAIN-2030-40/indexes/cdx-00000.gz'))).subarray(0, 4000);
      expect(res.status).toBe(206);
      expect(body.equals(want)).toBe(true);
      // 4000 bytes at 8000 B/s cannot arrive in much less than half a second (a lower bound only).
      expect(elapsed).toBeGreaterThanOrEqual(300);
    } finally {
      await server.close();
    }
  });
});

describe('serveMirror over cc-mirror-dev', () => {
  let server: MirrorServer;
  beforeAll(async () => {
    server = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
  });
  afterAll(() => server.close());

  it('serves cluster.idx → ZipNum block → WARC record by byte ranges, as a client of data.commoncrawl.org would', async () => {
    const base = `${server.url}/cc-index/collections/CC-MAIN-2030-44/indexes`;
    const idx = await (await fetch(`${base}/cluster.idx`)).text();
    const entries = idx.trim().split('\n').map((l) => l.split('\t'));
    expect(entries.length).toBeGreaterThan(1);
    for (const [key, shard, offset, length] of [entries[0]!, entries[entries.length - 1]!]) {
      const off = Number(offset);
      const len = Number(length);
      const res = await fetch(`${base}/${shard}`, { headers: { Range: `bytes=${off}-${off + len - 1}` } });
      expect(res.status).toBe(206);
      const lines = gunzipSync(Buffer.from(await res.arrayBuffer())).toString('utf8').trim().split('\n');
      expect(lines[0]!.startsWith(`${key} `)).toBe(true);
      const cdx = JSON.parse(lines[0]!.slice(lines[0]!.indexOf('{'))) as Record<string, string>;
      const start = Number(cdx.offset);
      const rec = await fetch(`${server.url}/${cdx.filename}`, {
        headers: { Range: `bytes=${start}-${start + Number(cdx.length) - 1}` },
      });
      expect(rec.status).toBe(206);
      const warc = gunzipSync(Buffer.from(await rec.arrayBuffer())).toString('latin1');
      expect(warc.startsWith('WARC/1.0\r\n')).toBe(true);
      expect(warc).toContain(`WARC-Target-URI: ${cdx.url}\r\n`);
    }
  });
});
