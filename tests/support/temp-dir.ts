import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A fresh directory under the OS temp dir (its real path, `prefix` + random) for each test of the enclosing describe,
 * handed to `use` before the test and removed with its contents after it. Call in a describe body.
 */
export function tempDirEach(prefix: string, use: (dir: string) => void): void {
  let dir: string | undefined;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
    use(dir);
  });
  afterEach(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });
}
