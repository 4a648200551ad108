import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryRangeReader, UndiciRangeReader } from '@ccpipe/adapters';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror';
import { CC_MIRROR_DEV, DEV_CRAWLS } from '../../../tests/support/corpus';
import { CrawlNotFoundError, crawlsOffered, loadClusterIdx } from './cluster-idx-source';

let mirror: MirrorServer;
let reader: UndiciRangeReader;
let noLocal: string;
beforeAll(async () => {
  mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
  reader = new UndiciRangeReader({ baseUrl: mirror.url, connections: 4, userAgent: 'ccpipe-test', expectGzip: true });
  noLocal = await mkdtemp(join(tmpdir(), 'ccpipe-cidx-'));
});
afterAll(async () => {
  await reader.close();
  await mirror.close();
  await rm(noLocal, { recursive: true, force: true });
});

describe('a crawl the base URL does not have', () => {
  it('names the crawl and the URL asked for, and lists the crawls the mirror’s collinfo.json offers', async () => {
    const err = await loadClusterIdx('CC-MAIN-2099-01', { localDir: noLocal, reader, baseUrl: mirror.url }).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(CrawlNotFoundError);
    expect(err).toMatchObject({ code: 'CCP_ERR_CRAWL_NOT_FOUND', detail: { crawl: 'CC-MAIN-2099-01', status: 404, offered: [...DEV_CRAWLS] } });
    expect((err as Error).message).toBe(
      `crawl CC-MAIN-2099-01 not found: ${mirror.url}/cc-index/collections/CC-MAIN-2099-01/indexes/cluster.idx answered HTTP 404; its collinfo.json offers CC-MAIN-2030-40, CC-MAIN-2030-44`,
    );
  });

  it('says where Common Crawl lists its crawls when the base has no collinfo.json, and shortens a long list', async () => {
    const bare = new MemoryRangeReader(new Map());
    const err = await loadClusterIdx('CC-MAIN-2099-01', { localDir: noLocal, reader: bare }).then(() => null, (e: unknown) => e);
    expect((err as Error).message).toMatch(/^crawl CC-MAIN-2099-01 not found: cc-index\/collections\/CC-MAIN-2099-01\/indexes\/cluster\.idx answered HTTP 404; no collinfo\.json at the base URL lists its crawls \(Common Crawl's are at https:\/\/index\.commoncrawl\.org\/collinfo\.json\)$/);
    const ids = Array.from({ length: 30 }, (_, i) => `CC-MAIN-20${String(50 - i).padStart(2, '0')}-01`);
    const long = new MemoryRangeReader(new Map([['collinfo.json', Buffer.from(JSON.stringify(ids.map((id) => ({ id }))))]]));
    expect(await crawlsOffered(long)).toEqual(ids);
    const msg = ((await loadClusterIdx('X', { localDir: noLocal, reader: long }).catch((e: unknown) => e)) as Error).message;
    expect(msg).toContain(`offers ${ids.slice(0, 12).join(', ')}, … (30 in all)`);
  });

  it('still reads a crawl that is there', async () => {
    const { entries, source } = await loadClusterIdx(DEV_CRAWLS[0], { localDir: noLocal, reader, baseUrl: mirror.url });
    expect(source).toBe('remote');
    expect(entries.length).toBeGreaterThan(0);
  });
});
