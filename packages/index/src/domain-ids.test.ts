import { domain64ToInt64, unpackDomain64 } from '@ccpipe/core';
import { DomainIds, partitionOf, partitionSql, type DomainIdsSnapshot } from './domain-ids';
import { openDuck, queryRows } from './duck';
import { DomainDictionary } from './format';
import { indexFiles } from '../../../tests/support/index-files';

const NAMES = ['example.com', 'example.org', 'b\u00fccher.de', 'xn--bcher-kva.de', 'github.io', 'example.co.uk', '192.0.2.1', 'zeta.com'];

/** domains.bin of a registry, as runMerge writes it (names sorted, each with its key). */
function dictionaryOf(ids: DomainIds, names: readonly string[]): DomainDictionary {
  return new DomainDictionary(indexFiles(names.map((domain) => ({ domain, d64: ids.get(domain)! }))).domains);
}

describe('DomainIds snapshots', () => {
  it('a version 2 snapshot (allocator only) plus the dictionary restores every id, and new domains get fresh ones', () => {
    const ids = DomainIds.empty();
    for (const n of NAMES) ids.assign(n);
    const snap = JSON.parse(JSON.stringify(ids.snapshot())) as DomainIdsSnapshot;
    expect(snap.v).toBe(2);
    expect(snap).not.toHaveProperty('domains'); // no domain list in the file: suffix slots only
    expect(JSON.stringify(snap)).not.toMatch(/zeta|example|bcher/);
    const back = DomainIds.fromSnapshot(snap, dictionaryOf(ids, NAMES));
    expect(back.size).toBe(NAMES.length);
    for (const n of NAMES) expect(back.get(n)).toBe(ids.get(n));
    // The allocator continues where it stopped: the same next ids as the original registry.
    const fresh = ['new-one.com', 'new-two.org', 'other.de'];
    expect(fresh.map((n) => back.assign(n))).toEqual(fresh.map((n) => ids.assign(n)));
    expect(new Set([...NAMES, ...fresh].map((n) => back.get(n))).size).toBe(NAMES.length + fresh.length);
  });

  it('still reads a version 1 snapshot (with its domain list) written by earlier versions', () => {
    const ids = DomainIds.empty();
    for (const n of NAMES) ids.assign(n);
    const v2 = ids.snapshot();
    const v1: DomainIdsSnapshot = {
      v: 1, layout: v2.layout, tlds: v2.tlds,
      domains: NAMES.map((n) => {
        const f = unpackDomain64(ids.get(n)!, v2.layout);
        return [n, f.tld, f.domain];
      }),
    };
    const back = DomainIds.fromSnapshot(JSON.parse(JSON.stringify(v1)) as DomainIdsSnapshot, new DomainDictionary(indexFiles([]).domains));
    for (const n of NAMES) expect(back.get(n)).toBe(ids.get(n));
    expect(back.assign('later.com')).toBe(ids.assign('later.com'));
  });

  it('refuses a dictionary key the allocator never handed out, and an unknown snapshot version', () => {
    const ids = DomainIds.empty();
    for (const n of NAMES) ids.assign(n);
    const snap = ids.snapshot();
    const other = DomainIds.empty();
    for (const n of [...NAMES, 'one.com', 'two.com', 'three.com']) other.assign(n);
    // three.com's id is beyond what `snap` allocated for .com
    const bad = new DomainDictionary(indexFiles([{ domain: 'three.com', d64: other.get('three.com')! }]).domains);
    expect(() => DomainIds.fromSnapshot(snap, bad)).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    expect(() => DomainIds.fromSnapshot({ ...snap, v: 3 } as unknown as DomainIdsSnapshot, bad)).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
  });

  it('assignSorted walks the dictionary alongside: known domains keep their ids, new ones get what assign would give', () => {
    const ids = DomainIds.empty();
    for (const n of NAMES) ids.assign(n);
    const dict = dictionaryOf(ids, NAMES);
    const snap = ids.snapshot();
    // a merge's distinct domains in byte order: some known, some new, interleaved
    const walk = [...NAMES.slice(0, 5), 'aaa.com', 'new-two.org', 'mmm.de', 'zzz.io'].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const walker = DomainIds.fromSnapshot(snap, dict);
    const reference = DomainIds.fromSnapshot(snap, dict);
    expect(walk.map((d) => walker.assignSorted(d))).toEqual(walk.map((d) => reference.assign(d)));
    // the allocator moved on exactly as assign's did
    expect(walker.snapshot()).toEqual(reference.snapshot());
    // a walk needs ascending distinct names, and then serves only its snapshot
    expect(() => walker.assignSorted('aaa.com')).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
    expect(() => walker.assign('later.com')).toThrow(expect.objectContaining({ code: 'CCP_ERR_INDEX_FORMAT' }));
  });
});

describe('partitionSql', () => {
  it('gives every key the partition partitionOf gives it, at 1, 4 and 8 bits, for keys stored as negative BIGINTs too', async () => {
    const ids = DomainIds.empty();
    const keys = [...NAMES, ...Array.from({ length: 600 }, (_, i) => `d${i}.example`), ...Array.from({ length: 300 }, (_, i) => `s${i}.co.uk`)].map((n) => ids.assign(n));
    // keys with the top bit set are stored as positive BIGINTs, the others as negative ones: both signs below
    keys.push((0xffn << 56n) | (0xabcdefn << 32n), (1n << 63n) | (0x0000ffn << 32n));
    expect(keys.some((k) => domain64ToInt64(k) < 0n)).toBe(true);
    const db = await openDuck();
    const conn = await db.connect();
    try {
      for (const bits of [1, 4, 8]) {
        const rows = await queryRows(conn, `SELECT ${partitionSql('k', ids.layout, bits)} AS p FROM unnest([${keys.map((k) => `(${domain64ToInt64(k)})::BIGINT`).join(', ')}]) t(k)`);
        expect(rows.map((r) => r['p'])).toEqual(keys.map((k) => partitionOf(k, ids.layout, bits)));
      }
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});
