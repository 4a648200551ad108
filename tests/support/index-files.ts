import { RoaringBitmap32 } from 'roaring';
import { IndexWriter, type Posting } from '../../packages/index/src/format';

/**
 * domains.bin, domain-datasets.bin and postings.bin of `entries`, written the way the merger writes them (in UTF-8
 * byte order of the names; a domain given no postings gets one row in dataset 1, file 0).
 */
export function indexFiles(entries: readonly { domain: string; d64: bigint; postings?: readonly Posting[] }[]): { domains: Buffer; bitmaps: Buffer; postings: Buffer } {
  const w = new IndexWriter((ids) => new RoaringBitmap32(ids).serialize('portable'));
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.domain), Buffer.from(b.domain)));
  for (const e of sorted) w.add(Buffer.from(e.domain), e.d64, e.postings ?? [{ datasetId: 1, file: 0, first: 0, rows: 1 }]);
  return w.finish();
}
