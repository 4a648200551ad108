import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crcOf } from './format';
import { MergeCache, keyPath } from './merge-cache';
import { tempDirEach } from '../../../tests/support/temp-dir';

describe('MergeCache', () => {
  let dir: string;
  tempDirEach('ccpipe-merge-cache-unit-', (d) => (dir = d));
  const key = 'urls/dataset_id=1/domain_prefix=0a/part-v000002.parquet';

  it('serves an entry only for the size and CRC32 it entered with', async () => {
    const cache = new MergeCache(dir);
    const b = Buffer.from('lake file bytes');
    const o = await cache.putBytes(key, b);
    expect(o).toEqual({ key, bytes: b.length, crc32: crcOf(b) });
    expect(await readFile((await cache.find(o))!)).toEqual(b);
    // the same key rebuilt with other bytes of the same size (a crashed merge's file, then its rerun's) is another entry
    expect(await cache.find({ ...o, crc32: (o.crc32 + 1) >>> 0 })).toBeNull();
    expect(await cache.find({ ...o, bytes: o.bytes + 1 })).toBeNull();
    await writeFile(cache.pathOf(o), 'short'); // truncated on local disk: not served
    expect(await cache.find(o)).toBeNull();
  });

  it('adopts a file the merge wrote by moving it', async () => {
    const cache = new MergeCache(dir);
    const src = join(dir, 'pass-1.parquet');
    await writeFile(src, 'written by the merge');
    const o = { key, bytes: 20, crc32: crcOf(Buffer.from('written by the merge')) };
    await cache.adoptFile(o, src);
    await expect(stat(src)).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await readFile((await cache.find(o))!)).toString()).toBe('written by the merge');
  });

  it('retain deletes other entries, partial files and emptied directories, and nothing it does not own', async () => {
    const cache = new MergeCache(dir);
    const keep = await cache.putBytes(key, Buffer.from('keep'));
    const gone = await cache.putBytes('urls/dataset_id=2/domain_prefix=ff/part-v000001.parquet', Buffer.from('gone'));
    const partial = await cache.partialPath({ key: 'index/v000002/postings-0000.bin', bytes: 9, crc32: 1 });
    await writeFile(partial, 'half');
    await writeFile(join(cache.root, 'README'), 'not an entry'); // under the cache root, but not named like an entry
    await mkdir(join(dir, 'other'));
    await writeFile(join(dir, 'other', 'x~0000abcd-4'), 'outside the root'); // named like one, outside the root
    expect(await cache.retain([keep])).toBe(2);
    expect(await cache.find(keep)).not.toBeNull();
    expect(await cache.find(gone)).toBeNull();
    expect((await readdir(cache.root)).sort()).toEqual(['README', 'urls']);
    expect(await readdir(join(cache.root, 'urls'))).toEqual(['dataset_id=1']);
    expect(await readdir(join(dir, 'other'))).toEqual(['x~0000abcd-4']);
    expect(await new MergeCache(join(dir, 'never-made')).retain([])).toBe(0);
  });

  it('drops one entry; a key that is not a plain relative path (.., ., empty segments) never becomes a path', async () => {
    const cache = new MergeCache(dir);
    const o = await cache.putBytes(key, Buffer.from('rewritten'));
    await cache.drop(o);
    expect(await cache.find(o)).toBeNull();
    await cache.drop(o); // idempotent
    for (const bad of ['../../etc/passwd', 'urls/../../x', 'urls//x', './x', '/abs', 'a\\b']) {
      expect(() => cache.pathOf({ key: bad, bytes: 1, crc32: 1 })).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
      expect(() => keyPath(dir, bad)).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    }
    expect(keyPath(dir, 'urls/dataset_id=1/x.parquet')).toBe(join(dir, 'urls', 'dataset_id=1', 'x.parquet'));
  });
});
