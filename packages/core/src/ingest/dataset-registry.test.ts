import { ensureDatasetIn, emptyDatasetRegistry, parseDatasetRegistry, serializeDatasetRegistry } from './dataset-registry';

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
});
