import { RoaringBitmap32 } from 'roaring';
import { IndexWriter, type IndexShardFiles, type Posting } from '../../packages/index/src/format';

/**
 * domains.bin, domain-datasets.bin and postings.bin of `entries` (one shard), written the way the merger writes them (in UTF-8
 * byte order of the names; a domain given no postings gets one row in dataset 1, file 0).
 */
export function indexFiles(entries: readonly { domain: string; d64: bigint; postings?: readonly Posting[] }[]): IndexShardFiles {
  const w = new IndexWriter((ids) => new RoaringBitmap32(ids).serialize('portable'));
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.domain), Buffer.from(b.domain)));
  for (const e of sorted) w.add(Buffer.from(e.domain), e.d64, e.postings ?? [{ datasetId: 1, file: 0, first: 0, rows: 1 }]);
  return w.finish()[0]!; // one shard: the writer's default limits are far above what tests write
}
