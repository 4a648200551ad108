import {
  emptyDatasetRegistry,
  ensureDatasetIn,
  layout,
  parseDatasetRegistry,
  serializeDatasetRegistry,
  type DatasetEntry,
  type ObjectStore,
} from '@ccpipe/core';

/**
 * The dataset's entry in the store's registry, registering it when new. The batcher is the registry's one writer
 * (one batcher runs per data store at a time); the write is atomic and read back to confirm.
 */
export async function ensureDataset(store: ObjectStore, name: string, crawl: string | null, now: Date): Promise<DatasetEntry> {
  const key = layout.datasetRegistry();
  const bytes = await store.get(key);
  const reg = bytes === null ? emptyDatasetRegistry() : parseDatasetRegistry(bytes);
  const { registry, entry, added } = ensureDatasetIn(reg, name, crawl, now.toISOString());
  if (!added) return entry;
  await store.put(key, serializeDatasetRegistry(registry));
  const back = await store.get(key);
  const confirmed = back && parseDatasetRegistry(back).datasets.find((d) => d.name === name);
  if (!confirmed || confirmed.id !== entry.id) throw new Error('dataset registry changed under us: is another batcher running?');
  return entry;
}
