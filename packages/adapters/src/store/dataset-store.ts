import { randomUUID } from 'node:crypto';
import {
  emptyDatasetRegistry,
  ensureDatasetIn,
  layout,
  parseDatasetRegistry,
  serializeDatasetRegistry,
  withStoreId,
  type DatasetEntry,
  type DatasetKind,
  type ObjectStore,
} from '@ccpipe/core';

/**
 * The dataset's entry in the store's registry, registering it when new (and an import's new file names), and the
 * store's id (given to the registry here when it has none: every batch names it). Its writers — the batcher for a
 * crawl, `ccpipe import` for an import — run one at a time per data store; the write is atomic and read back to
 * confirm. @throws CcpError CCP_ERR_DATASET_KIND when the name is taken by the other kind of dataset
 */
export async function ensureDataset(
  store: ObjectStore, name: string, crawl: string | null, now: Date, opts: { kind?: DatasetKind; sources?: readonly string[] } = {},
): Promise<{ entry: DatasetEntry; storeId: string }> {
  const key = layout.datasetRegistry();
  const bytes = await store.get(key);
  const withId = withStoreId(bytes === null ? emptyDatasetRegistry() : parseDatasetRegistry(bytes), () => randomUUID());
  const { registry, entry, changed } = ensureDatasetIn(withId.registry, name, crawl, now.toISOString(), opts);
  if (!changed && !withId.added) return { entry, storeId: withId.storeId };
  await store.put(key, serializeDatasetRegistry(registry));
  const back = await store.get(key);
  const reread = back && parseDatasetRegistry(back);
  const confirmed = reread && reread.datasets.find((d) => d.name === name);
  if (!confirmed || confirmed.id !== entry.id || reread.storeId !== withId.storeId) throw new Error('dataset registry changed under us: is another batcher or import running?');
  return { entry, storeId: withId.storeId };
}
