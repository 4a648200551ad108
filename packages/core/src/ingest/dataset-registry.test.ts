import { ensureDatasetIn, emptyDatasetRegistry, foreignBatchReason, parseDatasetRegistry, serializeDatasetRegistry, withStoreId } from './dataset-registry';

describe('dataset registry', () => {
  it('gives stable ids that survive storage', () => {
    let reg = emptyDatasetRegistry();
    const a = ensureDatasetIn(reg, 'CC-MAIN-2030-40', 'CC-MAIN-2030-40', '2026-11-22T00:00:00Z');
    reg = a.registry;
    const b = ensureDatasetIn(reg, 'CC-MAIN-2030-44', 'CC-MAIN-2030-44', '2026-11-22T00:00:01Z');
    reg = parseDatasetRegistry(serializeDatasetRegistry(b.registry));
    expect([a.entry.id, b.entry.id]).toEqual([1, 2]);
    const again = ensureDatasetIn(reg, 'CC-MAIN-2030-40', null, 'later');
    expect(again.added).toBe(false);
    expect(again.entry).toEqual(a.entry);
  });

  it('refuses a corrupt registry rather than guessing ids', () => {
    const dup = { v: 1, datasets: [{ id: 1, name: 'a', crawl: null, createdAt: 'x' }, { id: 1, name: 'b', crawl: null, createdAt: 'x' }] };
    expect(() => parseDatasetRegistry(Buffer.from(JSON.stringify(dup)))).toThrow(/duplicate/);
    expect(() => parseDatasetRegistry(Buffer.from('{'))).toThrow(/not JSON/);
  });

  it('a store id is written once and kept when datasets are added', () => {
    const first = withStoreId(emptyDatasetRegistry(), () => 'store-aaaaaaaa');
    expect(first).toMatchObject({ storeId: 'store-aaaaaaaa', added: true });
    const again = withStoreId(first.registry, () => 'store-bbbbbbbb');
    expect(again).toMatchObject({ storeId: 'store-aaaaaaaa', added: false });
    const grown = ensureDatasetIn(again.registry, 'CC-MAIN-2030-40', null, 'now').registry;
    expect(parseDatasetRegistry(serializeDatasetRegistry(grown)).storeId).toBe('store-aaaaaaaa');
    expect(() => withStoreId(emptyDatasetRegistry(), () => 'a b')).toThrow();
  });

  it('tells a batch of another store or another dataset apart, and accepts its own', () => {
    let reg = withStoreId(emptyDatasetRegistry(), () => 'store-aaaaaaaa').registry;
    reg = ensureDatasetIn(reg, 'CC-MAIN-2030-40', 'CC-MAIN-2030-40', 'now').registry;
    const own = { store: 'store-aaaaaaaa', dataset: 'CC-MAIN-2030-40', datasetId: 1 };
    expect(foreignBatchReason(reg, own)).toBeNull();
    expect(foreignBatchReason(reg, { dataset: 'CC-MAIN-2030-40', datasetId: 1 })).toBeNull(); // an older batcher's batch
    expect(foreignBatchReason(reg, { ...own, store: 'store-bbbbbbbb' })?.message).toMatch(/published for data store store-bbbbbbbb, this is store-aaaaaaaa/);
    expect(foreignBatchReason(reg, { ...own, dataset: 'CC-MAIN-2030-44' })?.message).toMatch(/dataset id 1 is CC-MAIN-2030-40 in this data store, the batch says CC-MAIN-2030-44/);
    expect(foreignBatchReason(reg, { ...own, datasetId: 2 })?.message).toMatch(/dataset id 2 \(CC-MAIN-2030-40\) is not in this data store's registry/);
    expect(foreignBatchReason(null, own)?.message).toMatch(/no dataset registry/);
  });
});
