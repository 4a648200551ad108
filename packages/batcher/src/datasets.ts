import { randomUUID } from 'node:crypto';
import {
  emptyDatasetRegistry,
  ensureDatasetIn,
  layout,
  parseDatasetRegistry,
  serializeDatasetRegistry,
  withStoreId,
  type DatasetEntry,
  type ObjectStore,
} from '@ccpipe/core';

/**
 * The dataset's entry in the store's registry, registering it when new, and the store's id (given to the registry
 * here when it has none: every batch names it). The batcher is the registry's one writer (one batcher runs per data
 * store at a time); the write is atomic and read back to confirm.
 */
export async function ensureDataset(store: ObjectStore, name: string, crawl: string | null, now: Date): Promise<{ entry: DatasetEntry; storeId: string }> {
  const key = layout.datasetRegistry();
  const bytes = await store.get(key);
  const withId = withStoreId(bytes === null ? emptyDatasetRegistry() : parseDatasetRegistry(bytes), () => randomUUID());
  const { registry, entry, added } = ensureDatasetIn(withId.registry, name, crawl, now.toISOString());
  if (!added && !withId.added) return { entry, storeId: withId.storeId };
  await store.put(key, serializeDatasetRegistry(registry));
  const back = await store.get(key);
  const reread = back && parseDatasetRegistry(back);
  const confirmed = reread && reread.datasets.find((d) => d.name === name);
  if (!confirmed || confirmed.id !== entry.id || reread.storeId !== withId.storeId) throw new Error('dataset registry changed under us: is another batcher running?');
  return { entry, storeId: withId.storeId };
}
