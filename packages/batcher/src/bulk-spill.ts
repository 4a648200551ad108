import { appendFileSync, mkdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { BatchRecord } from '@ccpipe/core';

/** Bytes a bucket buffers before they go to its file. */
const FLUSH_BYTES = 64 * 1024;
/** Buckets at most: a crawl's ≈ 90k WARC files make ≈ 1M kept records a bucket. */
const MAX_BUCKETS = 1024;

/**
 * Groups kept records by WARC file on local disk: Common Crawl's CDX is sorted by URL, so each CDX file holds records of
 * every WARC file and no job can be published before the last CDX file is read. Records go to one of up to 1,024
 * bucket files by file number (consecutive files share a bucket); {@link groups} then reads one bucket at a time
 * and yields each file's records sorted by offset. Memory: the bucket buffers (64 KiB each) while adding, one bucket's
 * records while grouping. The directory is the spill's own and is removed by {@link close}.
 */
export class BulkSpill {
  private readonly buffers: string[][];
  private readonly sizes: number[];
  private readonly filesPerBucket: number;
  records = 0;

  constructor(private readonly dir: string, files: number) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const buckets = Math.max(1, Math.min(MAX_BUCKETS, files));
    this.filesPerBucket = Math.max(1, Math.ceil(files / buckets));
    this.buffers = Array.from({ length: buckets }, () => []);
    this.sizes = new Array<number>(buckets).fill(0);
  }

  /** Adds a kept record of WARC file `fileNo`. */
  add(fileNo: number, rec: BatchRecord): void {
    const b = Math.min(this.buffers.length - 1, Math.floor(fileNo / this.filesPerBucket));
    const line = `${fileNo}\t${JSON.stringify(rec)}\n`;
    this.buffers[b]!.push(line);
    this.sizes[b]! += line.length;
    this.records++;
    if (this.sizes[b]! >= FLUSH_BYTES) this.flush(b);
  }

  private flush(b: number): void {
    if (this.buffers[b]!.length === 0) return;
    appendFileSync(this.path(b), this.buffers[b]!.join(''));
    this.buffers[b] = [];
    this.sizes[b] = 0;
  }

  private path(b: number): string {
    return nodePath.join(this.dir, `bucket-${String(b).padStart(4, '0')}.tsv`);
  }

  /** Every WARC file with kept records, in file order, with its records sorted by offset (ties in the order added). */
  *groups(): Generator<{ fileNo: number; records: BatchRecord[] }> {
    for (let b = 0; b < this.buffers.length; b++) this.flush(b);
    for (let b = 0; b < this.buffers.length; b++) {
      if (!existsSync(this.path(b))) continue;
      const byFile = new Map<number, BatchRecord[]>();
      for (const line of readFileSync(this.path(b), 'utf8').split('\n')) {
        if (line === '') continue;
        const tab = line.indexOf('\t');
        const fileNo = Number(line.slice(0, tab));
        const list = byFile.get(fileNo) ?? [];
        list.push(JSON.parse(line.slice(tab + 1)) as BatchRecord);
        byFile.set(fileNo, list);
      }
      for (const fileNo of [...byFile.keys()].sort((x, y) => x - y)) {
        const records = byFile.get(fileNo)!;
        // stable: equal offsets (a record listed twice) keep the CDX order
        records.sort((x, y) => x.offset - y.offset);
        yield { fileNo, records };
      }
    }
  }

  /** Removes the spill's files. Idempotent. */
  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
