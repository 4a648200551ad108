import { layout } from './layout';

describe('layout', () => {
  it('batchDatasetOf reads back the dataset of every key under a batch folder, and nothing else', () => {
    for (const id of [1, 42, 4294967295]) {
      for (const key of [layout.batchMarker(id, 'b-7'), layout.batchPart(id, 'x'), layout.batchFailures(id, 'y')]) expect(layout.batchDatasetOf(key)).toBe(id);
    }
    for (const key of [layout.datasetRegistry(), layout.batcherCheckpoint('CC-MAIN-2030-40'), 'urls/dataset_id=3/domain_prefix=00/part-v000001.parquet', 'batches/x/_SUCCESS.json']) {
      expect(layout.batchDatasetOf(key)).toBeNull();
    }
  });

  it('an inbox entry leads back to its batch marker, and no other key does', () => {
    for (const [d, id] of [[1, 'CC-MAIN-2030-40/00012345/0002'], [4294967295, 'b-7'], [3, 'urls.list-1']] as const) {
      expect(layout.inboxEntry(d, id)).toMatch(/^inbox\/dataset_id=\d+\/[^/]+\.json$/);
      expect(layout.markerOfInboxEntry(layout.inboxEntry(d, id))).toBe(layout.batchMarker(d, id));
    }
    for (const key of ['inbox/dataset_id=1/a/b.json', 'inbox/dataset_id=x/b.json', 'inbox/dataset_id=1/b.json.tmp', 'inbox/b.json', layout.batchMarker(1, 'b')]) {
      expect(layout.markerOfInboxEntry(key)).toBeNull();
    }
  });
});
