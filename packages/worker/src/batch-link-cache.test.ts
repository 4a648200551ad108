import { decodeHtml, extractDocument, linkTargets, newLinkCache, readWarcRecord, canonicalizeUrl } from '@ccpipe/core';
import { devBatches, devReader } from '../../../tests/support/dev-batches';
import { DEV_CRAWLS } from '../../../tests/support/corpus';

describe("linkTargets with a batch's cache", () => {
  it("gives core linkTargets' answer for every page of a batch, with one cache across the batch", async () => {
    const batches = await devBatches(DEV_CRAWLS[0], { datasetId: 1, maxBlocks: 2 });
    const records = batches.flatMap((b) => b.records).slice(0, 40);
    const reader = devReader();
    const cache = newLinkCache();
    let links = 0;
    for (const r of records) {
      const http = readWarcRecord(await reader.read(r.filename, r.offset, r.length)).http!;
      const page = canonicalizeUrl(r.url).url;
      const outlinks = extractDocument(decodeHtml(http.payload).text, { url: page }).outlinks;
      // quirks a page's links have: itself (another case, a fragment), repeats, links that do not canonicalize
      const quirky = [...outlinks, page.replace('://', '://WWW.').replace('WWW.www.', 'WWW.'), `${page}#top`, 'http://', 'mailto:a@b.example', outlinks[0] ?? page];
      links += quirky.length;
      expect(linkTargets(page, quirky, cache)).toEqual(linkTargets(page, quirky));
    }
    expect(links).toBeGreaterThan(records.length * 5);
    expect(cache.size).toBeLessThan(links); // pages of one batch share links
  });
});
