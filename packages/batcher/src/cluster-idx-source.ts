import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { parseClusterIdxLine, type ClusterIdxEntry, type RangeReader } from '@ccpipe/core';
import { splitLines } from './lines';

/** Where a crawl's cluster.idx sits under the base URL. */
export const clusterIdxPath = (crawl: string): string => `cc-index/collections/${crawl}/indexes/cluster.idx`;

/**
 * Reads a crawl's cluster.idx — the local copy `<localDir>/<crawl>/cluster.idx` when present, otherwise streamed from
 * the reader's base — into an array (~1 M entries for a full crawl), in file order. Throws FormatError on a bad line.
 */
export async function loadClusterIdx(crawl: string, opts: { localDir: string; reader: RangeReader; signal?: AbortSignal }): Promise<{ entries: ClusterIdxEntry[]; source: 'local' | 'remote' }> {
  const local = join(opts.localDir, crawl, 'cluster.idx');
  let source: 'local' | 'remote' = 'remote';
  let chunks: AsyncIterable<Uint8Array>;
  try {
    await access(local);
    source = 'local';
    chunks = createReadStream(local);
  } catch {
    chunks = opts.reader.stream(clusterIdxPath(crawl), opts.signal);
  }
  const entries: ClusterIdxEntry[] = [];
  let lineNo = 0;
  for await (const line of splitLines(chunks)) {
    lineNo++;
    if (line.length === 0) continue;
    entries.push(parseClusterIdxLine(line, lineNo));
  }
  return { entries, source };
}
