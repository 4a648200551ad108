import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command } from 'commander';
import { FsObjectStore, closeDuckDbParquetEngine } from '@ccpipe/adapters';
import { runMerge } from '@ccpipe/index';
import { partRow, putBatch } from '../../../../tests/support/batches';
import { tempDirEach } from '../../../../tests/support/temp-dir';
import { registerVerifyCommand } from './verify';

afterAll(() => closeDuckDbParquetEngine());

describe('ccpipe verify', () => {
  let dir: string;
  tempDirEach('ccpipe-cli-verify-', (d) => (dir = d));

  const verify = async (...args: string[]): Promise<{ out: Record<string, unknown>; code: number }> => {
    const lines: string[] = [];
    const program = new Command('ccpipe').version('0.1.0').exitOverride();
    registerVerifyCommand(program, { write: (l) => void lines.push(l) });
    process.exitCode = 0;
    await program.parseAsync(['node', 'ccpipe', 'verify', '--data', dir, ...args]);
    const code = Number(process.exitCode);
    process.exitCode = 0;
    return { out: JSON.parse(lines.join('')) as Record<string, unknown>, code };
  };

  it('prints what it checked and exits 0 when every file is as recorded, 1 naming the file when one is not', async () => {
    const store = new FsObjectStore({ root: dir });
    await putBatch(store, 1, 'b1', [partRow(1, 'https://a.example/', '20300101000000'), partRow(1, 'https://b.example/x', '20300101000000')]);
    await runMerge({ store, dataDir: dir, rowGroupSize: 2048, keepVersions: 2, graceMs: 0 });
    const ok = await verify();
    expect(ok).toMatchObject({ code: 0, out: { version: 'v000001', problems: [] } });
    expect(ok.out['lakeFiles']).toBeGreaterThan(0);
    expect((await verify('--index-version', 'v000001')).code).toBe(0);
    const files = JSON.parse(await readFile(join(dir, 'index', 'v000001', 'files.json'), 'utf8')) as { key: string }[];
    const path = join(dir, files[0]!.key);
    const b = await readFile(path);
    b.writeUInt8(b.readUInt8(100) ^ 1, 100);
    await writeFile(path, b);
    const bad = await verify();
    expect(bad).toMatchObject({ code: 1, out: { problems: [{ key: files[0]!.key, code: 'CCP_ERR_INDEX_CRC' }] } });
    // a version not kept, or no version at all (a wrong --data): exit 1 with the reason, not a clean pass
    expect(await verify('--index-version', 'v000007')).toMatchObject({ code: 1, out: { problems: [{ code: 'CCP_ERR_INDEX_MISSING' }] } });
    dir = join(dir, 'nothing-here');
    expect(await verify()).toMatchObject({ code: 1, out: { version: null, problems: [{ code: 'CCP_ERR_INDEX_MISSING' }] } });
  });
});
