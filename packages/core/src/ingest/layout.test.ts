import { layout } from './layout';

describe('layout', () => {
  it('batchDatasetOf reads back the dataset of every key under a batch folder, and nothing else', () => {
    for (const id of [1, 42, 4294967295]) {
      for (const key of [layout.batchMarker(id, 'b-7'), layout.batchPart(id, 'x'), layout.batchPostings(id, 'y')]) expect(layout.batchDatasetOf(key)).toBe(id);
    }
    for (const key of [layout.datasetRegistry(), layout.batcherCheckpoint('CC-MAIN-2030-40'), 'urls/dataset_id=3/domain_prefix=00/part-v000001.parquet', 'batches/x/_SUCCESS.json']) {
      expect(layout.batchDatasetOf(key)).toBeNull();
    }
  });
});
