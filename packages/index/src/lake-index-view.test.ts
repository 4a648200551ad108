import { urlId, urlIdHex } from '@ccpipe/core';
import { indexFiles } from '../../../tests/support/index-files';
import { BatchSet } from './batch-set';
import { DomainIndex, type LakeFileEntry, type Posting } from './format';
import { LakeIndexView } from './lake-index-view';
import type { LakeCaptureRow, LakePageRow, LakeReads, LakeUrlRow } from './lake-reader';
import type { LoadedVersion } from './version-files';

const URL = 'https://www.wide.example/a';

/**
 * An in-memory LakeReads over files whose row r is `${file.key}#${r}`: each read waits for the test to release it,
 * so the test sees how many are in flight at once.
 */
class GatedReads implements LakeReads {
  inFlight = 0;
  maxInFlight = 0;
  private waiting: (() => void)[] = [];

  private async gate(): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight--;
  }

  /**
   * Lets every read waiting now go on, the newest first (so answers complete out of the order the reads started:
   * code that joined them in completion order fails the order checks); resolves once they have had a turn.
   */
  async releaseAll(): Promise<number> {
    const n = this.waiting.length;
    for (const go of this.waiting.splice(0).reverse()) go();
    await new Promise((r) => setImmediate(r));
    return n;
  }

  async rows(file: LakeFileEntry, from: number, to: number): Promise<LakeUrlRow[]> {
    await this.gate();
    return Array.from({ length: to - from }, (_, k) => ({ urlId: 1n, url: `${file.key}#${from + k}`, ts: '2030-01-01T00:00:00Z', status: 200, title: null }));
  }

  async find(file: LakeFileEntry, _from: number, _to: number, url: string): Promise<LakeCaptureRow[]> {
    await this.gate();
    return [{ urlId: 1n, url, ts: '2030-01-01T00:00:00Z', status: 200, title: file.key, textLength: null, language: null, contentLength: null, warc: { filename: 'w', offset: 0, length: 1 }, extras: null, textLanguage: null, textLanguageConfidence: null }];
  }

  /** Row r of file f<k> is `https://<host>.wide.example/p<r>` with the host cycling through three subdomains. */
  async scan(file: LakeFileEntry, from: number, to: number): Promise<LakePageRow[]> {
    await this.gate();
    const hosts = ['www', 'blog', 'a'];
    return Array.from({ length: to - from }, (_, k) => ({
      url: `https://${hosts[(from + k) % 3]}.wide.example/${file.key}/p${from + k}`, surt: null, ts: Date.UTC(2030, 0, 1 + from + k), status: 200,
      title: null, contentLength: (from + k) * 10, language: 'eng',
    }));
  }

  async close(): Promise<void> {}
}

/** One domain, wide.example, held by `postings` (one lake file per posting, named f<file>). */
function version(postings: Posting[]): LoadedVersion {
  const files = postings.map((p): LakeFileEntry => ({ key: `f${p.file}`, datasetId: p.datasetId, prefix: '00', rows: p.first + p.rows, bytes: 0, crc32: 0, rowGroups: [] }));
  return {
    toc: { v: 1, version: 'v000001', parent: null, createdAt: '2030-01-01T00:00:00Z', files: {} },
    index: new DomainIndex([indexFiles([{ domain: 'wide.example', d64: 1n << 32n, postings }])]),
    files,
    domainIds: {} as LoadedVersion['domainIds'],
    collisions: {},
    batches: BatchSet.empty(),
    status: { datasets: [] } as unknown as LoadedVersion['status'],
  };
}

/** Drives `p` to completion, releasing gated reads round by round; returns the reads released per round. */
async function drive<T>(reads: GatedReads, p: Promise<T>): Promise<{ value: T; rounds: number[] }> {
  let done = false;
  const value = p.finally(() => (done = true));
  const rounds: number[] = [];
  await new Promise((r) => setImmediate(r));
  while (!done) {
    const n = await reads.releaseAll();
    if (n > 0) rounds.push(n);
  }
  return { value: await value, rounds };
}

describe('LakeIndexView reads', () => {
  it('captures() scans a domain in many datasets 8 runs at a time and answers in dataset order', async () => {
    const postings = Array.from({ length: 20 }, (_, k) => ({ datasetId: k + 1, file: k, first: 0, rows: 5 }));
    const reads = new GatedReads();
    const view = new LakeIndexView(version(postings), reads, new Map());
    const { value, rounds } = await drive(reads, view.captures(URL));
    expect(reads.maxInFlight).toBe(8); // not one at a time (20 sequential round trips), not 20 at once
    expect(rounds.reduce((a, b) => a + b, 0)).toBe(20);
    expect(value.map((c) => c.datasetId)).toEqual(postings.map((p) => p.datasetId));
    expect(value.map((c) => c.title)).toEqual(postings.map((p) => `f${p.file}`));
  });

  it('urls(): a page straddling two runs reads both at once and joins them in paging order', async () => {
    const postings = [{ datasetId: 1, file: 0, first: 10, rows: 4 }, { datasetId: 1, file: 1, first: 0, rows: 3 }, { datasetId: 2, file: 2, first: 0, rows: 9 }];
    const reads = new GatedReads();
    const view = new LakeIndexView(version(postings), reads, new Map());
    const { value, rounds } = await drive(reads, view.urls('wide.example', 1, 2, 4));
    expect(rounds).toEqual([2]);
    expect(value.total).toBe(7);
    expect(value.items.map((i) => i.url)).toEqual(['f0#12', 'f0#13', 'f1#0', 'f1#1']);
  });

  it('pages(): reads the runs of the datasets asked for at once and orders their rows by row key across runs', async () => {
    const postings = [{ datasetId: 1, file: 0, first: 10, rows: 4 }, { datasetId: 1, file: 1, first: 0, rows: 3 }, { datasetId: 2, file: 2, first: 0, rows: 5 }];
    const reads = new GatedReads();
    const view = new LakeIndexView(version(postings), reads, new Map());
    const q = { datasetIds: [1], from: null, to: null, status: null, minSize: null, maxSize: null, sort: 'surt' as const, order: 'asc' as const, after: null, limit: 100 };
    const { value, rounds } = await drive(reads, view.pages('wide.example', q));
    expect(rounds).toEqual([2]); // dataset 2's run is never read
    expect(value.total).toBe(7);
    // SURT drops www: 'example,wide)/' sorts before 'example,wide,a)/' and 'example,wide,blog)/'
    expect(value.items.map((i) => i.surt)).toEqual([
      'example,wide)/f0/p12', 'example,wide)/f1/p0', 'example,wide,a)/f0/p11', 'example,wide,a)/f1/p2',
      'example,wide,blog)/f0/p10', 'example,wide,blog)/f0/p13', 'example,wide,blog)/f1/p1',
    ]);
    expect(value.items[0]).toMatchObject({ datasetId: 1, url: 'https://www.wide.example/f0/p12', urlId: urlIdHex(urlId('https://www.wide.example/f0/p12')) });
    // the link filters are terms of the query like the others: not answered from the rows the unfiltered query cached
    // (rows of a view without a link graph carry no counts, so they match no link filter)
    for (const f of [{ maxOutlinks: 0 }, { minInlinks: 1 }]) expect((await drive(reads, view.pages('wide.example', { ...q, ...f }))).value.total).toBe(0);
    expect((await drive(reads, view.pages('wide.example', q))).value.total).toBe(7);
    const both = await drive(reads, view.pages('wide.example', { ...q, datasetIds: null, sort: 'size', order: 'desc', limit: 2 }));
    expect(both.value.total).toBe(12);
    expect(both.value.items.map((i) => [i.datasetId, i.contentLength])).toEqual([[1, 130], [1, 120]]);
  });
});
