import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MemoryObjectStore } from './memory-object-store';
import { describeObjectStoreContract } from './object-store.contract';

const REPO = join(__dirname, '..', '..', '..', '..');
const REAL_WARC = join(REPO, '../shared/corpus/cc-mirror-dev/crawl-data/CC-MAIN-2030-40/segments/1700003000.00/warc/CC-MAIN-20301110120000-20301110150000-00000.warc.gz');

describeObjectStoreContract(
  'MemoryObjectStore',
  async () => ({ store: new MemoryObjectStore(), cleanup: async () => {} }),
  readFileSync(REAL_WARC),
);
