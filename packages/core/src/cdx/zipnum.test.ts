import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { hasCode } from '../errors';
import { formatCdxLine } from './cdx-format';
import { parseCdxLine } from './cdx-line';
import { clusterIdxKey, parseClusterIdx } from './cluster-idx';
import { inflateCdxBlock, parseCdxBlock, parseCdxBytes, writeZipNumShard } from './zipnum';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');
const MIRROR = join(CORPUS, 'cc-mirror-dev');
const CRAWLS = ['CC-MAIN-2030-40', 'CC-MAIN-2030-44'];
const lines = (t: string): string[] => t.split('\n').filter((l) => l.length > 0);

interface Oracle {
  crawls: Record<string, { cdx_lines: number; kept_captures: number; blocks: number }>;
}
const oracle = JSON.parse(readFileSync(join(MIRROR, 'oracle.json'), 'utf8')) as Oracle;

function loadCrawl(crawl: string) {
  const dir = join(MIRROR, 'cc-index/collections', crawl, 'indexes');
  const entries = parseClusterIdx(readFileSync(join(dir, 'cluster.idx'), 'utf8'));
  const shards = new Map<string, Buffer>();
  const shard = (name: string): Buffer => {
    let b = shards.get(name);
    if (!b) shards.set(name, (b = readFileSync(join(dir, name))));
    return b;
  };
  const blocks = entries.map((e) => shard(e.shard).subarray(e.offset, e.offset + e.length));
  return { entries, blocks, shard };
}

describe('parseCdxBlock on cc-mirror-dev', () => {
  test.each(CRAWLS)('%s: every block parses cleanly, starts at its cluster.idx key, and lines add up to the oracle', (crawl) => {
    const { entries, blocks } = loadCrawl(crawl);
    expect(entries.length).toBe(oracle.crawls[crawl]!.blocks);
    let total = 0;
    blocks.forEach((gz, i) => {
      const { records, errors, lines: n } = parseCdxBlock(gz);
      expect(errors).toEqual([]);
      expect(records.length).toBe(n);
      expect(clusterIdxKey(records[0]!)).toBe(clusterIdxKey(entries[i]!));
      // Byte-exact against a plain UTF-8 decode (one block holds an unescaped IDN host).
      expect(records.map((r) => formatCdxLine(r))).toEqual(lines(gunzipSync(gz).toString('utf8')));
      total += n;
    });
    expect(total).toBe(oracle.crawls[crawl]!.cdx_lines);
  });

  test('one bad line is reported with its line number and reason; the rest of the block is kept', () => {
    const { blocks } = loadCrawl(CRAWLS[0]!);
    const text = lines(gunzipSync(blocks[3]!).toString('utf8'));
    const broken = [...text];
    broken[9] = broken[9]!.replace(/"offset": "\d+"/, '"offset": "x"');
    broken[20] = broken[20]!.slice(0, broken[20]!.indexOf(' {') + 30); // cut inside the JSON
    const { records, errors, lines: n } = parseCdxBlock(gzipSync(`${broken.join('\n')}\n`));
    expect(n).toBe(text.length);
    expect(records.length).toBe(text.length - 2);
    expect(errors.map((e) => [e.lineNo, e.reason])).toEqual([[10, 'number'], [21, 'json']]);
    expect(hasCode(errors[0]!.error, 'CCP_ERR_CDX_LINE')).toBe(true);
    expect(records.map((r) => formatCdxLine(r))).toEqual(text.filter((_l, i) => i !== 9 && i !== 20));
  });

  test('lines with JSON escapes amid plain lines parse like parseCdxLine, line by line', () => {
    const { blocks } = loadCrawl(CRAWLS[1]!);
    const text = lines(gunzipSync(blocks[5]!).toString('utf8'));
    const mixed = [...text];
    mixed[4] = mixed[4]!.replace(/"url": "([^"]*)"/, '"url": "$1?q=\\"x\\""');
    mixed[30] = mixed[30]!.replace(/"mime": "text\/html"/, '"mime": "text\\/html"');
    mixed[31] = mixed[31]!.replace('"url": "', '"url":"'); // other spacing, no backslash
    const { records, errors } = parseCdxBlock(gzipSync(mixed.join('\r\n')));
    expect(errors).toEqual([]);
    expect(records).toEqual(mixed.map((l) => parseCdxLine(l)));
    expect(records[4]!.url.endsWith('?q="x"')).toBe(true);
    expect(records[30]!.mime).toBe('text/html');
    // Lines after an escaped one still take the fast path and round-trip exactly.
    expect(records.slice(32).map((r) => formatCdxLine(r))).toEqual(text.slice(32));
  });

  test('bytes that are not gzip give CCP_ERR_CDX_BLOCK', () => {
    const { blocks } = loadCrawl(CRAWLS[0]!);
    const cut = blocks[0]!.subarray(0, blocks[0]!.length - 30);
    expect(() => parseCdxBlock(cut)).toThrow(expect.objectContaining({ code: 'CCP_ERR_CDX_BLOCK' }));
    expect(() => inflateCdxBlock(Buffer.from('not gzip'))).toThrow(expect.objectContaining({ code: 'CCP_ERR_CDX_BLOCK' }));
  });
});

describe('parseCdxBlock inflates into the line scan\'s memory', () => {
  test('it answers as parseCdxBytes on gunzipSync\'s bytes: one and several members, large and small blocks in turn, bad lines', () => {
    const plain = lines(readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'), 'utf8'));
    const broken = plain.slice(0, 400).map((l, i) => (i % 37 === 5 ? l.replace('"length": "', '"length": "x') : i % 41 === 7 ? l.replace('"url": "', '"url": "é') : l));
    const { blocks } = loadCrawl(CRAWLS[0]!);
    const gzs = [
      gzipSync(`${plain.join('\n')}\n`),
      gzipSync(`${broken.join('\n')}\n`),
      Buffer.concat([gzipSync(`${plain.slice(0, 700).join('\n')}\n`), gzipSync(`${broken.join('\n')}`)]),
      blocks[0]!,
      gzipSync(`${plain.join('\n')}\n`),
      gzipSync(''),
    ];
    for (const gz of gzs) expect(parseCdxBlock(gz)).toEqual(parseCdxBytes(gunzipSync(gz)));
  });
});

describe('other real ZipNum data', () => {
  test('cdx_toolkit filtered cdx-00187.gz (one member) gives the same records as its plain text', () => {
    const gz = readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/warc_by_cdx/filtered_CC-MAIN-2024-30_cdx-00187.gz'));
    const plain = lines(readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'), 'utf8'));
    const { records, errors } = parseCdxBlock(gz);
    expect(errors).toEqual([]);
    expect(records).toEqual(plain.map((l) => parseCdxLine(l)));
  });

  test('line numbers of bad lines stay exact deep into a large block (the text is decoded in pieces)', () => {
    const plain = lines(readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'), 'utf8'));
    const broken = [...plain];
    const bad = [1, 300, 777, plain.length];
    for (const n of bad) broken[n - 1] = broken[n - 1]!.replace(/"length": "\d+"/, '"length": "?"');
    const { records, errors, lines: n } = parseCdxBlock(gzipSync(`${broken.join('\n')}\n`));
    expect(n).toBe(plain.length);
    expect(errors.map((e) => e.lineNo)).toEqual(bad);
    expect(records.map((r) => formatCdxLine(r))).toEqual(plain.filter((_l, i) => !bad.includes(i + 1)));
  });

  test('pywb sample: every cluster.idx entry\'s block inflates and its first line starts with the entry key', () => {
    const idx = parseClusterIdx(readFileSync(join(CORPUS, 'webrecorder-pywb-sample_archive/zipcdx/zipnum-sample.idx'), 'utf8'));
    const data = readFileSync(join(CORPUS, 'webrecorder-pywb-sample_archive/zipcdx/zipnum-sample.cdx.gz'));
    expect(idx.length).toBeGreaterThan(30);
    let end = 0;
    for (const e of idx) {
      const blockLines = lines(inflateCdxBlock(data.subarray(e.offset, e.offset + e.length)).toString('utf8'));
      expect(blockLines[0]!.startsWith(`${clusterIdxKey(e)} `)).toBe(true);
      end = e.offset + e.length;
      // Classic 11-field CDX, not CC's JSON: each line is reported, none throws.
      const { records, errors } = parseCdxBlock(data.subarray(e.offset, e.offset + e.length));
      expect(records).toEqual([]);
      expect(errors.map((x) => x.reason)).toEqual(blockLines.map(() => 'json'));
    }
    expect(end).toBe(data.length);
  });
});

describe('writeZipNumShard', () => {
  test.each(CRAWLS)('%s: rewriting each shard with 50-line blocks reproduces cluster.idx keys, shard names and block numbers', (crawl) => {
    const { entries, shard } = loadCrawl(crawl);
    const names = [...new Set(entries.map((e) => e.shard))];
    let nextBlockNo = 1;
    for (const name of names) {
      const shardLines = lines(gunzipSync(shard(name)).toString('utf8'));
      const { data, entries: written } = writeZipNumShard(shardLines, { shard: name, blockSize: 50, startBlockNo: nextBlockNo });
      const real = entries.filter((e) => e.shard === name);
      expect(written.map((e) => [e.surt, e.timestamp, e.shard, e.blockNo])).toEqual(real.map((e) => [e.surt, e.timestamp, e.shard, e.blockNo]));
      nextBlockNo += written.length;
      // Each entry addresses one member that inflates alone to its own lines.
      const back: string[] = [];
      for (const e of written) {
        const { records, errors } = parseCdxBlock(data.subarray(e.offset, e.offset + e.length));
        expect(errors).toEqual([]);
        expect(records.length).toBeLessThanOrEqual(50);
        back.push(...records.map((r) => formatCdxLine(r)));
      }
      expect(back).toEqual(shardLines);
      expect(written[written.length - 1]!.offset + written[written.length - 1]!.length).toBe(data.length);
      expect(gunzipSync(data).toString('utf8')).toBe(`${shardLines.join('\n')}\n`);
    }
  });

  test('default block size is 3000 lines; the output is deterministic', () => {
    const plain = lines(readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'), 'utf8'));
    const many = [...plain, ...plain, ...plain].sort();
    const a = writeZipNumShard(many, { shard: 'cdx-00007.gz', startBlockNo: 11 });
    expect(a.entries.map((e) => e.blockNo)).toEqual([11, 12]);
    expect(parseCdxBlock(a.data.subarray(0, a.entries[0]!.length)).records.length).toBe(3000);
    expect(writeZipNumShard(many, { shard: 'cdx-00007.gz', startBlockNo: 11 }).data.equals(a.data)).toBe(true);
    expect(writeZipNumShard([], { shard: 'cdx-00000.gz' })).toEqual({ data: Buffer.alloc(0), entries: [] });
  });

  test('a first line without "SURT TIMESTAMP " is refused with a typed error', () => {
    expect(() => writeZipNumShard(['nospace'], { shard: 'cdx-00000.gz' })).toThrow(expect.objectContaining({ code: 'CCP_ERR_CDX_LINE' }));
  });
});
