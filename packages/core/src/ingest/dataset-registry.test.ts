import { ensureDatasetIn, emptyDatasetRegistry, kindOf, foreignBatchReason, parseDatasetRegistry, serializeDatasetRegistry, withStoreId } from './dataset-registry';

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

describe('dataset kinds (imports)', () => {
  it('registers an import with its files, adds new file names once, and keeps id, name and kind', () => {
    const crawl = ensureDatasetIn(emptyDatasetRegistry(), 'CC-MAIN-2030-40', 'CC-MAIN-2030-40', 'now').registry;
    const a = ensureDatasetIn(crawl, 'partner-list', null, 't1', { kind: 'import', sources: ['a.csv', 'b.csv', 'a.csv'] });
    expect(a).toMatchObject({ added: true, changed: true, entry: { id: 2, kind: 'import', sources: ['a.csv', 'b.csv'], crawl: null } });
    expect(kindOf(a.registry.datasets[0]!)).toBe('crawl'); // written before kinds: a crawl
    const same = ensureDatasetIn(a.registry, 'partner-list', null, 't2', { kind: 'import', sources: ['b.csv'] });
    expect(same).toMatchObject({ added: false, changed: false });
    expect(same.registry).toBe(a.registry);
    const more = ensureDatasetIn(a.registry, 'partner-list', null, 't3', { kind: 'import', sources: ['c.jsonl', 'a.csv'] });
    expect(more).toMatchObject({ added: false, changed: true, entry: { id: 2, createdAt: 't1', sources: ['a.csv', 'b.csv', 'c.jsonl'] } });
    expect(parseDatasetRegistry(serializeDatasetRegistry(more.registry))).toEqual(more.registry);
  });

  it('refuses to mix a crawl and an import under one dataset name, naming what the name is', () => {
    const crawl = ensureDatasetIn(emptyDatasetRegistry(), 'CC-MAIN-2030-40', 'CC-MAIN-2030-40', 'now').registry;
    expect(() => ensureDatasetIn(crawl, 'CC-MAIN-2030-40', null, 'now', { kind: 'import', sources: ['x.csv'] })).toThrow(/CC-MAIN-2030-40 is a crawl/);
    const imp = ensureDatasetIn(crawl, 'mine', null, 'now', { kind: 'import', sources: ['x.csv'] }).registry;
    expect(() => ensureDatasetIn(imp, 'mine', 'CC-MAIN-2030-44', 'now')).toThrow(/mine is an import/);
  });
});
