import { readFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CcpError, parseCdxBlock, parseClusterIdx, type CdxRecord, type ClusterIdxEntry, type RangeReader } from '@ccpipe/core';

/** ../shared/corpus/cc-mirror-dev, found from this file (same depth in src/ and dist/). */
export const CC_MIRROR_DEV = nodePath.resolve(__dirname, '../../../..', '../shared/corpus/cc-mirror-dev');

const CRAWL_INDEX = 'cc-index/collections/CC-MAIN-2030-40/indexes';

/** A byte range of a file of cc-mirror-dev, with the bytes read straight from disk as the truth. */
export interface ContractRange {
  path: string;
  offset: number;
  length: number;
  bytes: Buffer;
}

/** What the contract reads, all real: cluster.idx, two ZipNum blocks, WARC records named by their CDX lines. */
export interface ContractFixture {
  corpusDir: string;
  /** Every relative path the suite reads (a memory reader needs exactly these). */
  paths: string[];
  clusterIdx: { path: string; bytes: Buffer; entries: ClusterIdxEntry[] };
  /** A block from the middle of the index (offset > 0). */
  block: ContractRange & { entry: ClusterIdxEntry };
  /** The last block of its shard: its range ends at the file's last byte. */
  lastBlock: ContractRange & { entry: ClusterIdxEntry };
  /** Status-200 captures of `block` that live in one WARC file; the first is the main case. */
  records: Array<ContractRange & { cdx: CdxRecord }>;
  /** The WARC file of `records`. */
  warc: { path: string; size: number };
}

function rangeOf(corpusDir: string, path: string, offset: number, length: number): ContractRange {
  const bytes = readFileSync(nodePath.join(corpusDir, path)).subarray(offset, offset + length);
  return { path, offset, length, bytes };
}

/** Loads the fixture from cc-mirror-dev with core's cluster.idx and CDX parsers. */
export function loadContractFixture(corpusDir: string = CC_MIRROR_DEV): ContractFixture {
  const idxPath = `${CRAWL_INDEX}/cluster.idx`;
  const idxBytes = readFileSync(nodePath.join(corpusDir, idxPath));
  const entries = parseClusterIdx(idxBytes.toString('utf8'));
  const mid = entries[Math.floor(entries.length / 2)];
  if (mid === undefined || mid.offset === 0) throw new Error('cluster.idx too small for the contract fixture');
  const lastOfShard = entries.filter((e) => e.shard === mid.shard).at(-1);
  if (lastOfShard === undefined) throw new Error('no last block');
  const block = { ...rangeOf(corpusDir, `${CRAWL_INDEX}/${mid.shard}`, mid.offset, mid.length), entry: mid };
  const lastBlock = { ...rangeOf(corpusDir, `${CRAWL_INDEX}/${lastOfShard.shard}`, lastOfShard.offset, lastOfShard.length), entry: lastOfShard };
  const captures = parseCdxBlock(block.bytes).records.filter((r) => r.status === '200');
  const warcPath = captures[0]?.filename;
  if (warcPath === undefined) throw new Error('no status-200 capture in the fixture block');
  const records = captures
    .filter((r) => r.filename === warcPath)
    .map((cdx) => ({ ...rangeOf(corpusDir, cdx.filename, cdx.offset, cdx.length), cdx }));
  const warcSize = readFileSync(nodePath.join(corpusDir, warcPath)).length;
  return {
    corpusDir,
    paths: [idxPath, block.path, lastBlock.path, warcPath].filter((p, i, a) => a.indexOf(p) === i),
    clusterIdx: { path: idxPath, bytes: idxBytes, entries },
    block,
    lastBlock,
    records,
    warc: { path: warcPath, size: warcSize },
  };
}

/** Options the contract passes to a factory. */
export interface ContractReaderOptions {
  expectGzip?: boolean;
}

/** Paths every reader must refuse with CCP_ERR_SSRF before touching anything. */
export const SSRF_PATHS: readonly string[] = [
  'http://169.254.169.254/latest/meta-data/',
  '//127.0.0.1:1/x',
  '/etc/passwd',
  '../x.warc.gz',
  'crawl-data/../../x.warc.gz',
  '%2e%2e/x.warc.gz',
  'crawl-data/%2e%2e/%2e%2e/x',
  'crawl-data\\..\\x',
  'crawl-data/./x',
  '',
];

async function failure(p: Promise<unknown> | (() => Promise<unknown>)): Promise<CcpError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    if (err instanceof CcpError) return err;
    throw err;
  }
  throw new Error('expected a CcpError, got success');
}

async function collect(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of it) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

/**
 * The RangeReader contract, run against every adapter on the real cc-mirror-dev data. `factory` is called once
 * for the suite (closed in afterAll) and again for cases that need their own reader (closed by the case).
 */
export function describeRangeReaderContract(
  name: string,
  factory: (fx: ContractFixture, opts: ContractReaderOptions) => RangeReader | Promise<RangeReader>,
): void {
  describe(`RangeReader contract: ${name}`, () => {
    const fx = loadContractFixture();
    let reader: RangeReader;
    beforeAll(async () => {
      reader = await factory(fx, {});
    });
    afterAll(async () => {
      await reader.close();
    });

    it('streams cluster.idx byte for byte', async () => {
      expect((await collect(reader.stream(fx.clusterIdx.path))).equals(fx.clusterIdx.bytes)).toBe(true);
    });

    it('streams a byte range in one request: exactly the bytes read() gives, a range outside the file is 416', async () => {
      const { path, offset, length } = fx.block;
      const wide = await collect(reader.streamRange(path, 0, offset + length));
      expect(wide.length).toBe(offset + length);
      expect(wide.subarray(offset).equals(fx.block.bytes)).toBe(true);
      expect((await collect(reader.streamRange(path, offset, length))).equals(fx.block.bytes)).toBe(true);
      const past = await failure(() => collect(reader.streamRange(path, offset, 1_000_000_000)));
      expect([past.code, past.detail?.['status']]).toEqual(['CCP_ERR_FETCH_STATUS', 416]);
      expect((await failure(() => collect(reader.streamRange(path, -1, 10)))).code).toBe('CCP_ERR_FETCH_BAD_RANGE');
    });

    it('reads a real ZipNum block exactly; it parses to the captures cluster.idx announces', async () => {
      const got = Buffer.from(await reader.read(fx.block.path, fx.block.offset, fx.block.length));
      expect(got.equals(fx.block.bytes)).toBe(true);
      const parsed = parseCdxBlock(got);
      expect(parsed.errors).toEqual([]);
      expect(parsed.records.length).toBeGreaterThan(1);
      expect([parsed.records[0]?.surt, parsed.records[0]?.timestamp]).toEqual([fx.block.entry.surt, fx.block.entry.timestamp]);
    });

    it('reads the last block of a shard, up to the last byte of the file', async () => {
      const b = fx.lastBlock;
      expect(Buffer.from(await reader.read(b.path, b.offset, b.length)).equals(b.bytes)).toBe(true);
      expect(parseCdxBlock(b.bytes).records[0]?.surt).toBe(b.entry.surt);
    });

    it('reads a real WARC record exactly as its CDX line locates it: one gzip member, the right capture', async () => {
      const r = fx.records[0]!;
      const got = Buffer.from(await reader.read(r.path, r.offset, r.length));
      expect(got.equals(r.bytes)).toBe(true);
      const text = gunzipSync(got).toString('latin1');
      expect(text.startsWith('WARC/1.')).toBe(true);
      expect(text).toMatch(/^WARC-Type: response\r$/m);
      expect(text).toContain(`WARC-Target-URI: ${r.cdx.url}\r\n`);
    });

    it('serves many concurrent reads of one WARC file, each exact', async () => {
      const got = await Promise.all(fx.records.map((r) => reader.read(r.path, r.offset, r.length)));
      expect(fx.records.length).toBeGreaterThan(3);
      got.forEach((g, i) => expect(Buffer.from(g).equals(fx.records[i]!.bytes)).toBe(true));
    });

    it('throws CCP_ERR_FETCH_STATUS 404 (not retryable) for a missing file, from read and stream', async () => {
      const missing = fx.warc.path.replace(/\.warc\.gz$/, '-missing.warc.gz');
      for (const err of [await failure(reader.read(missing, 0, 10)), await failure(() => collect(reader.stream(missing)))]) {
        expect([err.code, err.detail?.['status'], err.retryable]).toEqual(['CCP_ERR_FETCH_STATUS', 404, false]);
      }
    });

    it('throws CCP_ERR_FETCH_STATUS 416 for a range not inside the file', async () => {
      const size = fx.warc.size;
      for (const [offset, length] of [[size, 10], [size + 1000, 1], [size - 10, 20]] as const) {
        const err = await failure(reader.read(fx.warc.path, offset, length));
        expect([err.code, err.detail?.['status'], err.retryable]).toEqual(['CCP_ERR_FETCH_STATUS', 416, false]);
      }
    });

    it('throws CCP_ERR_FETCH_BAD_RANGE for impossible arguments', async () => {
      for (const [offset, length] of [[-1, 10], [0, 0], [1.5, 10], [0, Number.NaN], [0, -5]]) {
        expect((await failure(reader.read(fx.warc.path, offset!, length!))).code).toBe('CCP_ERR_FETCH_BAD_RANGE');
      }
    });

    it.each(SSRF_PATHS.map((p) => [p]))('refuses %j with CCP_ERR_SSRF from read and stream', async (p) => {
      expect((await failure(reader.read(p, 0, 10))).code).toBe('CCP_ERR_SSRF');
      expect((await failure(() => collect(reader.stream(p)))).code).toBe('CCP_ERR_SSRF');
    });

    it('throws CCP_ERR_ABORTED for an already aborted signal', async () => {
      const r = fx.records[0]!;
      const err = await failure(reader.read(r.path, r.offset, r.length, AbortSignal.abort()));
      expect(err.code).toBe('CCP_ERR_ABORTED');
    });

    it('with expectGzip, accepts gzip members and refuses other bytes with CCP_ERR_FETCH_NOT_GZIP', async () => {
      const gz = await factory(fx, { expectGzip: true });
      try {
        const r = fx.records[0]!;
        expect(Buffer.from(await gz.read(r.path, r.offset, r.length)).equals(r.bytes)).toBe(true);
        const err = await failure(gz.read(fx.clusterIdx.path, 0, 100));
        expect([err.code, err.retryable]).toEqual(['CCP_ERR_FETCH_NOT_GZIP', false]);
        const mid = await failure(gz.read(r.path, r.offset + 1, r.length - 1));
        expect(mid.code).toBe('CCP_ERR_FETCH_NOT_GZIP');
      } finally {
        await gz.close();
      }
    });

    it('close() is idempotent and later reads throw CCP_ERR_READER_CLOSED', async () => {
      const own = await factory(fx, {});
      const r = fx.records[0]!;
      expect(Buffer.from(await own.read(r.path, r.offset, r.length)).equals(r.bytes)).toBe(true);
      await own.close();
      await own.close();
      expect((await failure(own.read(r.path, r.offset, r.length))).code).toBe('CCP_ERR_READER_CLOSED');
    });
  });
}
