import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { iterateWarcFile } from '@ccpipe/core';
import { walkRecordMembers } from './member-stream';

const REPO_ROOT = path.resolve(__dirname, '../../../..');
const CORPUS = path.join(REPO_ROOT, '../shared/corpus');
const WARC = path.join(CORPUS, 'cc-mirror-dev/crawl-data/CC-MAIN-2030-40/segments/1700003000.00/warc/CC-MAIN-20301110120000-20301110150000-00000.warc.gz');

function walked(file: string, windowBytes?: number): { end: string; seen: string[] } {
  const seen: string[] = [];
  const end = walkRecordMembers(file, (rec, offset, length) => void seen.push(`${offset} ${length} ${rec.type} ${rec.targetUri ?? ''}`), windowBytes);
  return { end, seen };
}

describe('walkRecordMembers', () => {
  it('finds the same member ranges as the whole-file walker, whatever the window size', async () => {
    const want = [...iterateWarcFile(await fsp.readFile(WARC))].map((e) => `${e.offset} ${e.length} ${e.record.type} ${e.record.targetUri ?? ''}`);
    expect(want.length).toBeGreaterThan(1000);
    for (const windowBytes of [4096, 100_000, undefined]) {
      const got = walked(WARC, windowBytes);
      expect([windowBytes, got.end]).toEqual([windowBytes, 'aligned']);
      expect(got.seen).toEqual(want);
    }
  });

  it('says not_aligned for a single gzip stream and warc_error for a file that breaks off', async () => {
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'ccpipe-members-'));
    try {
      const bytes = await fsp.readFile(WARC);
      await fsp.writeFile(path.join(tmp, 'stream.warc.gz'), gzipSync(gunzipSync(bytes)));
      expect(walked(path.join(tmp, 'stream.warc.gz')).end).toBe('not_aligned');
      const all = [...iterateWarcFile(bytes)];
      const cut = all[10]!.offset + Math.floor(all[10]!.length / 2);
      await fsp.writeFile(path.join(tmp, 'cut.warc.gz'), bytes.subarray(0, cut));
      const got = walked(path.join(tmp, 'cut.warc.gz'), 4096);
      expect(got.end).toBe('warc_error');
      expect(got.seen.length).toBe(10);
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  });
});
