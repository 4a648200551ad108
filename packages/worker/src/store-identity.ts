import { CcpError, foreignBatchReason, layout, parseDatasetRegistry, type Batch, type DatasetRegistry, type ObjectStore } from '@ccpipe/core';

/**
 * Refuses batches whose rows do not belong in the worker's data store (core `foreignBatchReason`): published for
 * another store, or naming a dataset id that means another dataset here. Without it a worker started with another
 * `--data` than its batcher files one crawl's rows under whatever dataset has the same id in its own store, silently.
 * The store's registry is read once and again whenever a batch does not match it (a batcher may have added a dataset
 * or written the store id since), so a store whose batches all match costs one read.
 */
export class StoreIdentity {
  /** The registry as last read: null when the store has none; undefined before the first read. */
  private reg: DatasetRegistry | null | undefined;

  constructor(private readonly store: ObjectStore) {}

  /** @throws CcpError CCP_ERR_BATCH_FOREIGN_STORE or CCP_ERR_BATCH_FOREIGN_DATASET (not retryable: dead-lettered) */
  async check(batch: Pick<Batch, 'store' | 'dataset' | 'datasetId'>): Promise<void> {
    if (this.reg !== undefined && foreignBatchReason(this.reg, batch) === null) return;
    const bytes = await this.store.get(layout.datasetRegistry());
    this.reg = bytes === null ? null : parseDatasetRegistry(bytes);
    const why = foreignBatchReason(this.reg, batch);
    if (why !== null) {
      throw new CcpError(why.code, why.message, { retryable: false, detail: { dataset: batch.dataset, datasetId: batch.datasetId, ...(batch.store !== undefined && { store: batch.store }) } });
    }
  }
}
