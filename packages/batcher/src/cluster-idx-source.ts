import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { CcpError, parseClusterIdxLine, type ClusterIdxEntry, type RangeReader } from '@ccpipe/core';
import { splitLines } from './lines';

/** Where a crawl's cluster.idx sits under the base URL. */
export const clusterIdxPath = (crawl: string): string => `cc-index/collections/${crawl}/indexes/cluster.idx`;

/** The list of crawls a mirror (`ccpipe mirror serve`) serves at its root, as index.commoncrawl.org does. */
export const COLLINFO_PATH = 'collinfo.json';
/** Where Common Crawl lists its crawls (data.commoncrawl.org serves no collinfo.json). */
const CC_COLLINFO = 'https://index.commoncrawl.org/collinfo.json';
/** How many crawl names a not-found message lists (Common Crawl has over a hundred). */
const LISTED = 12;

/**
 * The base URL has no cluster.idx for the crawl. The message names the crawl and the URL asked for, and lists the
 * crawls the base's collinfo.json offers (in its order: Common Crawl's lists the newest first), or says where to look when it has none.
 */
export class CrawlNotFoundError extends CcpError {
  constructor(crawl: string, url: string, status: number, offered: string[] | null, cause: unknown) {
    const more = offered !== null && offered.length > LISTED ? `, … (${offered.length} in all)` : '';
    const list = offered === null
      ? `no collinfo.json at the base URL lists its crawls (Common Crawl's are at ${CC_COLLINFO})`
      : offered.length === 0
        ? 'its collinfo.json lists no crawl'
        : `its collinfo.json offers ${offered.slice(0, LISTED).join(', ')}${more}`;
    super('CCP_ERR_CRAWL_NOT_FOUND', `crawl ${crawl} not found: ${url} answered HTTP ${status}; ${list}`, {
      cause,
      detail: { crawl, url, status, offered },
    });
  }
}

/** The crawl ids of the base's collinfo.json, or null when it has none that parses. Never throws. */
export async function crawlsOffered(reader: RangeReader, signal?: AbortSignal): Promise<string[] | null> {
  try {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const c of reader.stream(COLLINFO_PATH, signal)) {
      size += c.length;
      if (size > 4 << 20) return null; // not a list of crawls
      chunks.push(c);
    }
    const list: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (!Array.isArray(list)) return null;
    return list.map((e: unknown) => (e as { id?: unknown } | null)?.id).filter((id): id is string => typeof id === 'string');
  } catch {
    return null;
  }
}

/**
 * Reads a crawl's cluster.idx — the local copy `<localDir>/<crawl>/cluster.idx` when present, otherwise streamed from
 * the reader's base — into an array (~1 M entries for a full crawl), in file order. Throws FormatError on a bad line.
 */
export async function loadClusterIdx(
  crawl: string,
  opts: { localDir: string; reader: RangeReader; signal?: AbortSignal; /** the reader's base, for messages */ baseUrl?: string },
): Promise<{ entries: ClusterIdxEntry[]; source: 'local' | 'remote' }> {
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
  try {
    for await (const line of splitLines(chunks)) {
      lineNo++;
      if (line.length === 0) continue;
      entries.push(parseClusterIdxLine(line, lineNo));
    }
  } catch (err) {
    // 'unexpected HTTP status 404' alone does not say that the crawl name is what is wrong, nor which names are right
    const status = (err as { status?: unknown }).status;
    if (source === 'remote' && lineNo === 0 && err instanceof CcpError && err.code === 'CCP_ERR_FETCH_STATUS' && (status === 404 || status === 403)) {
      const url = opts.baseUrl === undefined ? clusterIdxPath(crawl) : new URL(clusterIdxPath(crawl), opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`).href;
      throw new CrawlNotFoundError(crawl, url, status, await crawlsOffered(opts.reader, opts.signal), err);
    }
    throw err;
  }
  return { entries, source };
}
