import { readFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { serveMirror, type MirrorServer } from '@ccpipe/mirror/serve/serve-mirror';
import { CC_MIRROR_DEV, describeRangeReaderContract, loadContractFixture } from './range-reader.contract';
import { FsRangeReader } from './fs-range-reader';
import { MemoryRangeReader } from './memory-range-reader';
import { UndiciRangeReader } from './undici-range-reader';

let mirror: MirrorServer;
beforeAll(async () => {
  mirror = await serveMirror({ dir: CC_MIRROR_DEV, port: 0 });
});
afterAll(() => mirror.close());

describeRangeReaderContract('UndiciRangeReader over serveMirror(cc-mirror-dev)', (_fx, opts) =>
  new UndiciRangeReader({
    baseUrl: mirror.url,
    connections: 8,
    userAgent: 'ccpipe-test',
    headersTimeoutMs: 5000,
    bodyTimeoutMs: 5000,
    expectGzip: opts.expectGzip ?? false,
  }),
);

describeRangeReaderContract('FsRangeReader over cc-mirror-dev', (_fx, opts) =>
  new FsRangeReader({ root: CC_MIRROR_DEV, expectGzip: opts.expectGzip ?? false }),
);

const memoryFiles = new Map(
  loadContractFixture().paths.map((p) => [p, new Uint8Array(readFileSync(nodePath.join(CC_MIRROR_DEV, p)))] as const),
);
describeRangeReaderContract('MemoryRangeReader over files of cc-mirror-dev', (_fx, opts) =>
  new MemoryRangeReader(memoryFiles, { expectGzip: opts.expectGzip ?? false, chunkSize: 4096 }),
);
