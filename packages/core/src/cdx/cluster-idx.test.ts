import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { hasCode } from '../errors';
import {
  blocksForSurtPrefix, clusterIdxKey, formatClusterIdxLine, parseClusterIdx, parseClusterIdxLine, type ClusterIdxEntry,
} from './cluster-idx';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');
const MIRROR = join(CORPUS, 'cc-mirror-dev/cc-index/collections');
const CRAWLS = ['CC-MAIN-2030-40', 'CC-MAIN-2030-44'];

const readText = (p: string): string => readFileSync(join(CORPUS, p), 'utf8');
const nonEmptyLines = (t: string): string[] => t.split('\n').filter((l) => l.length > 0);

const IDX_FILES = [
  'preciz-common_crawl/cluster_idx_snippet',
  'webrecorder-pywb-sample_archive/zipcdx/zipnum-sample.idx',
  ...CRAWLS.map((c) => `cc-mirror-dev/cc-index/collections/${c}/indexes/cluster.idx`),
];

describe('cluster.idx lines', () => {
  test.each(IDX_FILES)('every line of %s parses and formats back byte for byte', (file) => {
    const lines = nonEmptyLines(readText(file));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const e = parseClusterIdxLine(line);
      expect(typeof e.offset).toBe('number');
      expect(formatClusterIdxLine(e)).toBe(line);
    }
  });

  test.each(IDX_FILES)('%s: blocks follow each other in their shard and blockno counts on from 1 across shards', (file) => {
    const entries = parseClusterIdx(readText(file));
    expect(entries[0]!.blockNo).toBe(1);
    for (let i = 1; i < entries.length; i++) {
      const prev = entries[i - 1]!;
      const e = entries[i]!;
      expect(e.blockNo).toBe(prev.blockNo + 1);
      expect(e.offset).toBe(e.shard === prev.shard ? prev.offset + prev.length : 0);
      expect(clusterIdxKey(prev) <= clusterIdxKey(e)).toBe(true);
    }
  });

  test('a bad line gives a typed error carrying its line number', () => {
    const lines = nonEmptyLines(readText('preciz-common_crawl/cluster_idx_snippet'));
    const broken = [
      lines[3]!.replace(/\t\d+$/, ''), // no blockno
      lines[3]!.replace(/\t(\d+)\t/, '\tx$1\t'), // offset not a number
      lines[3]!.replace(/ (\d{14})\t/, ' 2017\t'), // short timestamp
      lines[3]!.replace(/^\S+ /, ''), // no SURT
    ];
    for (const bad of broken) {
      const text = [lines[0], lines[1], bad, lines[4]].join('\n');
      let caught: unknown;
      try {
        parseClusterIdx(text);
      } catch (err) {
        caught = err;
      }
      expect(hasCode(caught, 'CCP_ERR_CLUSTER_IDX_LINE')).toBe(true);
      expect((caught as { detail: { lineNo: number } }).detail.lineNo).toBe(3);
    }
  });

  test('CRLF line ends and blank lines are tolerated', () => {
    const lines = nonEmptyLines(readText(IDX_FILES[2]!));
    const entries = parseClusterIdx(`${lines.join('\r\n')}\r\n\r\n`);
    expect(entries.map(formatClusterIdxLine)).toEqual(lines);
  });
});

/** Every block's lines, inflated from the shard files next to cluster.idx. */
function mirrorBlocks(crawl: string): { entries: ClusterIdxEntry[]; blockLines: string[][] } {
  const dir = join(MIRROR, crawl, 'indexes');
  const entries = parseClusterIdx(readFileSync(join(dir, 'cluster.idx'), 'utf8'));
  const shards = new Map<string, Buffer>();
  const blockLines = entries.map((e) => {
    let data = shards.get(e.shard);
    if (!data) shards.set(e.shard, (data = readFileSync(join(dir, e.shard))));
    return nonEmptyLines(gunzipSync(data.subarray(e.offset, e.offset + e.length)).toString('utf8'));
  });
  return { entries, blockLines };
}

function pywbBlocks(): { entries: ClusterIdxEntry[]; blockLines: string[][] } {
  const entries = parseClusterIdx(readText('webrecorder-pywb-sample_archive/zipcdx/zipnum-sample.idx'));
  const data = readFileSync(join(CORPUS, 'webrecorder-pywb-sample_archive/zipcdx/zipnum-sample.cdx.gz'));
  const blockLines = entries.map((e) => nonEmptyLines(gunzipSync(data.subarray(e.offset, e.offset + e.length)).toString('utf8')));
  return { entries, blockLines };
}

/** Prefixes worth asking for: every host part `…)` and every `…)/first-path-segment` seen, plus misses. */
function prefixesOf(blockLines: string[][]): string[] {
  const out = new Set<string>(['', 'a', 'zzz,', '0', 'com,', 'org,']);
  for (const lines of blockLines) {
    for (const l of lines) {
      const surt = l.slice(0, l.indexOf(' '));
      const host = surt.slice(0, surt.indexOf(')') + 1);
      out.add(host);
      out.add(`${host.slice(0, -1)},`); // subdomains only
      out.add(surt.slice(0, surt.indexOf('/', host.length + 1) + 1 || undefined));
      out.add(`${host}/zz-not-there`);
    }
  }
  return [...out];
}

describe('blocksForSurtPrefix', () => {
  const sets = [
    ...CRAWLS.map((c) => [c, () => mirrorBlocks(c)] as const),
    ['pywb zipnum sample', pywbBlocks] as const,
  ];
  test.each(sets)('%s: the range holds every block that a full scan finds, and at most one more', (_name, load) => {
    const { entries, blockLines } = load();
    const prefixes = prefixesOf(blockLines);
    expect(prefixes.length).toBeGreaterThan(20);
    for (const prefix of prefixes) {
      const holding: number[] = [];
      blockLines.forEach((lines, i) => {
        if (lines.some((l) => l.startsWith(prefix))) holding.push(i);
      });
      const { start, end } = blocksForSurtPrefix(entries, prefix);
      for (const i of holding) {
        expect(i).toBeGreaterThanOrEqual(start);
        expect(i).toBeLessThan(end);
      }
      // Blocks are contiguous for a prefix; the range may add only the block before the first key ≥ prefix.
      if (holding.length > 0) {
        expect(end - start).toBeLessThanOrEqual(holding.length + 1);
        expect(holding[holding.length - 1]! - holding[0]! + 1).toBe(holding.length);
      } else {
        expect(end - start).toBeLessThanOrEqual(1);
      }
    }
  });

  test('empty entries give an empty range; an empty prefix gives all blocks', () => {
    expect(blocksForSurtPrefix([], 'com,')).toEqual({ start: 0, end: 0 });
    const entries = parseClusterIdx(readText(IDX_FILES[0]!));
    expect(blocksForSurtPrefix(entries, '')).toEqual({ start: 0, end: entries.length });
  });

  test('on the real cluster.idx head, a key prefix spanning no block start still selects the block before', () => {
    const entries = parseClusterIdx(readText(IDX_FILES[0]!));
    // The key right after entry 10's first key sorts inside block 10 only.
    const e = entries[10]!;
    const range = blocksForSurtPrefix(entries, `${e.surt}~`);
    expect(range).toEqual({ start: 10, end: 11 });
    // A prefix of entry 10's own key starts there (the block before may hold it as well).
    const own = blocksForSurtPrefix(entries, e.surt);
    expect(own.start).toBe(9);
    expect(own.end).toBeGreaterThanOrEqual(11);
  });
});
