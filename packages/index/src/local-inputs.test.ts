import type * as Fsp from 'node:fs/promises';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MemoryObjectStore } from '@ccpipe/adapters';
import { openLocalInputs } from './local-inputs';
import { tempDirEach } from '../../../tests/support/temp-dir';

describe('openLocalInputs (a store without local files: objects copied by ranged reads)', () => {
  let dir: string;
  const store = new MemoryObjectStore();
  const big = Buffer.alloc(20 * 2 ** 20 + 7); // three 8 MiB chunks
  for (let i = 0; i < big.length; i += 4096) big[i] = i % 251;
  beforeAll(() => store.put('lake/a.parquet', big));
  tempDirEach('ccpipe-local-inputs-', (d) => (dir = d));
  afterEach(() => jest.restoreAllMocks());

  it('copies an object chunk by chunk into the stage dir, and deletes the copy on release', async () => {
    const inputs = openLocalInputs(store, undefined, dir);
    const [path] = await inputs.fetch(['lake/a.parquet']);
    expect(path).toBe(join(dir, 'lake', 'a.parquet'));
    expect((await readFile(path!)).equals(big)).toBe(true);
    await inputs.release(['lake/a.parquet']);
    await expect(readFile(path!)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a write that fails (a full disk) rejects the fetch with its error and closes the file, instead of ending the process', async () => {
    // the module object itself (an `import *` namespace is a copy the code under test does not call through)
    const fsp = jest.requireActual<typeof Fsp>('node:fs/promises');
    const realOpen = fsp.open;
    let closed = 0;
    jest.spyOn(fsp, 'open').mockImplementation(async (...args: Parameters<typeof Fsp.open>) => {
      const h = await realOpen(...args);
      let writes = 0;
      return Object.assign(Object.create(h) as Fsp.FileHandle, {
        write: async (...w: unknown[]) => {
          if (++writes === 2) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
          return (h.write as (...a: unknown[]) => Promise<{ bytesWritten: number }>).apply(h, w);
        },
        close: async () => {
          closed++;
          return h.close();
        },
      });
    });
    const inputs = openLocalInputs(store, undefined, dir);
    await expect(inputs.fetch(['lake/a.parquet'])).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(closed).toBe(1);
  });

  it('an aborted signal stops a copy before its next chunk', async () => {
    const abort = new AbortController();
    let reads = 0;
    const counting = Object.assign(Object.create(store) as MemoryObjectStore, {
      getRange: async (key: string, offset: number, length: number) => {
        if (++reads === 1) abort.abort();
        return store.getRange(key, offset, length);
      },
    });
    const inputs = openLocalInputs(counting, undefined, dir, { signal: abort.signal });
    await expect(inputs.fetch(['lake/a.parquet'])).rejects.toMatchObject({ code: 'CCP_ERR_ABORTED' });
    expect(reads).toBe(1);
  });

  it('an object missing from the store is CCP_ERR_INDEX_MISSING naming its key', async () => {
    await expect(openLocalInputs(store, undefined, dir).fetch(['lake/gone.parquet'])).rejects.toMatchObject({ code: 'CCP_ERR_INDEX_MISSING', detail: { key: 'lake/gone.parquet' } });
  });
});
