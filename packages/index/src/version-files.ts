import { readFileSync } from 'node:fs';
import type { ObjectStore } from '@ccpipe/core';
import type { LocalInputs } from './local-inputs';
import { FileDomainIndex, type ShardFileRef } from './file-index';
import type { DomainIdsSnapshot } from './domain-ids';
import { BatchSet } from './batch-set';
import { FACTS_FILE, factsFileName } from './domain-facts';
import {
  DomainDictionary, DomainIndex, INDEX_FILES, OnDemandDomainIndex, IndexFormatError, LEGACY_SHARD, SHARD_TABLE, crcOf, indexLayout, jsonBytes, parseJson, shardFileNames, type IndexManifest, type IndexShardFiles,
  type DomainEntries, type LakeFileEntry, type ShardTable, type VersionStatus, type VersionToc,
} from './format';

/** The JSON files of one loaded, CRC-verified index version: everything but its domain index. */
export interface VersionBase {
  toc: VersionToc;
  files: LakeFileEntry[];
  domainIds: DomainIdsSnapshot;
  /** Canonical URL → substitute url_id (signed decimal string). */
  collisions: Record<string, string>;
  /** Every batch marker folded into this version or an earlier one. */
  batches: BatchSet;
  status: VersionStatus;
}

/** Every file of one loaded, CRC-verified index version. */
export interface LoadedVersion extends VersionBase {
  /** The domain index over the version's shards (dictionary, bitmaps, postings): in memory, or read in place. */
  index: DomainEntries;
}

/** A version's JSON files and the names of its shard files (read by {@link openIndexOnDemand}). */
export interface VersionHead extends VersionBase {
  shardNames: Record<keyof IndexShardFiles, string>[];
  /** Domains per shard from shards.json (null for a version written before it). */
  shardSizes: number[] | null;
  /** Each shard's facts file name (domain-facts.ts), or null for a version written without facts. */
  factsNames: string[] | null;
}

/** The manifest, or an empty one before the first merge. @throws IndexFormatError CCP_ERR_INDEX_FORMAT */
export async function readManifest(store: ObjectStore): Promise<IndexManifest> {
  const b = await store.get(indexLayout.manifest());
  if (b === null) return { v: 1, current: null, versions: [], retired: [] };
  const m = parseJson<IndexManifest>(b, 'manifest.json');
  if (m.v !== 1 || !Array.isArray(m.versions)) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'unknown manifest version');
  return m;
}

/**
 * Reads one version: version.json (checked against the manifest's CRC) and every file it lists, each checked
 * against its CRC32 and size. @throws IndexFormatError CCP_ERR_INDEX_CRC on any mismatch, CCP_ERR_INDEX_MISSING
 * when a file is gone (e.g. collected by GC).
 */
export async function loadVersion(store: ObjectStore, version: string, tocCrc32: number): Promise<LoadedVersion> {
  const { shardNames, shardSizes, factsNames, ...base } = await loadVersionHead(store, version, tocCrc32);
  const got = await getAll(store, version, base.toc, [...shardNames.flatMap((n) => [n.domains, n.bitmaps, n.postings]), ...(factsNames ?? [])]);
  const index = new DomainIndex(
    shardNames.map((n) => ({ domains: got.get(n.domains)!, bitmaps: got.get(n.bitmaps)!, postings: got.get(n.postings)! })), shardSizes, factsNames?.map((n) => got.get(n)!) ?? null,
  );
  return { ...base, index };
}

/**
 * {@link loadVersion} with the domain index read in place from local files (`inputs`: the files behind store keys,
 * in place or staged from a remote store) instead of held in memory: {@link FileDomainIndex}. Same checks. Close the
 * index when the version is dropped: that also releases the staged copies (as a failed load does). `signal` aborts
 * the copies and the checks. @throws IndexFormatError as loadVersion, CcpError CCP_ERR_ABORTED
 */
export async function loadVersionInPlace(store: ObjectStore, version: string, tocCrc32: number, inputs: LocalInputs, signal?: AbortSignal): Promise<LoadedVersion> {
  const head = await loadVersionHead(store, version, tocCrc32);
  const { shardNames, shardSizes, factsNames, ...base } = head;
  const keys = shardKeys(head);
  try {
    const paths = await shardPaths(head, inputs, keys);
    const ref = (name: string): ShardFileRef => ({ path: paths.get(name)!, size: base.toc.files[name]!.size, crc32: base.toc.files[name]!.crc32, name });
    const files = shardNames.map((n) => ({ domains: ref(n.domains), bitmaps: ref(n.bitmaps), postings: ref(n.postings) }));
    const facts = factsNames?.map(ref);
    const index = await FileDomainIndex.open(files, shardSizes, { ...(!inputs.inPlace && { onClose: () => inputs.release(keys) }), ...(signal && { signal }), ...(facts && { facts }) });
    return { ...base, index };
  } catch (err) {
    await inputs.release(keys);
    throw err;
  }
}

/** The file names of a version's shards: {@link shardFileNames}' triples, then the facts files (if any). */
function shardFiles(head: VersionHead): string[] {
  return [...head.shardNames.flatMap((n) => [n.domains, n.bitmaps, n.postings]), ...(head.factsNames ?? [])];
}

/** The store keys of a version's shard files, in the order of {@link shardFiles}. */
function shardKeys(head: VersionHead): string[] {
  return shardFiles(head).map((n) => indexLayout.versionFile(head.toc.version, n));
}

/** The local paths of a version's shard files (file name → path), fetched through `inputs` by their `keys`. */
async function shardPaths(head: VersionHead, inputs: LocalInputs, keys: readonly string[]): Promise<Map<string, string>> {
  const fetched = await inputs.fetch(keys);
  return new Map(shardFiles(head).map((n, i) => [n, fetched[i]!]));
}

/** A version's JSON files (each checked like {@link loadVersion} does) and its shard table, no shard read. */
export async function loadVersionHead(store: ObjectStore, version: string, tocCrc32: number): Promise<VersionHead> {
  const toc = await readVersionToc(store, version, tocCrc32);
  const hasTable = toc.files[SHARD_TABLE] !== undefined;
  const got = await getAll(store, version, toc, hasTable ? [...INDEX_FILES, SHARD_TABLE] : INDEX_FILES);
  const table = hasTable ? parseShardTable(got.get(SHARD_TABLE)!) : null;
  const shardNames = shardNamesOf(toc, table);
  return {
    toc,
    files: parseJson<LakeFileEntry[]>(got.get('files.json')!, 'files.json'),
    domainIds: parseJson<DomainIdsSnapshot>(got.get('domain-ids.json')!, 'domain-ids.json'),
    collisions: parseJson<Record<string, string>>(got.get('collisions.json')!, 'collisions.json'),
    batches: BatchSet.parse(got.get('batches.json')!),
    status: parseJson<VersionStatus>(got.get('status.json')!, 'status.json'),
    shardNames,
    shardSizes: table === null ? null : table.shards.map((e) => e.domains),
    factsNames: factsNamesOf(toc, shardNames.length),
  };
}

/**
 * The domain index of `head`'s version read a shard at a time from local files (in place, or staged by `inputs`
 * from a remote store): the merger's walk holds one shard, not the whole index. Each shard file is checked against
 * its size and CRC32 whenever it is read, and every shard is read and checked once here (`visit` sees each entry
 * during that pass), so a damaged version is refused before a merge writes anything. Returns the index and the store keys `inputs` fetched (to release after
 * use). @throws IndexFormatError CCP_ERR_INDEX_MISSING when a shard file is gone, CCP_ERR_INDEX_CRC or
 * CCP_ERR_INDEX_FORMAT when one is damaged
 */
export async function openIndexOnDemand(
  head: VersionHead, inputs: LocalInputs, visit?: (index: OnDemandDomainIndex, i: number) => void,
): Promise<{ index: OnDemandDomainIndex; keys: string[] }> {
  const { toc } = head;
  const keys = shardKeys(head);
  const paths = await shardPaths(head, inputs, keys);
  const readChecked = (name: string): Buffer => {
    let b: Buffer;
    try {
      b = readFileSync(paths.get(name)!);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new IndexFormatError('CCP_ERR_INDEX_MISSING', 'index file is missing', { version: toc.version, file: name });
      throw err;
    }
    checkAgainstToc(toc, name, b);
    return b;
  };
  const read = (k: number): IndexShardFiles & { facts?: Buffer } => {
    const n = head.shardNames[k]!;
    const f = head.factsNames?.[k];
    return { domains: readChecked(n.domains), bitmaps: readChecked(n.bitmaps), postings: readChecked(n.postings), ...(f !== undefined && { facts: readChecked(f) }) };
  };
  // a version written before shards.json is one shard: its size is its dictionary's
  const sizes = head.shardSizes ?? [new DomainDictionary(readChecked(head.shardNames[0]!.domains)).size];
  const index = new OnDemandDomainIndex({ sizes, read });
  index.verifyAll(visit === undefined ? undefined : (i) => visit(index, i));
  return { index, keys };
}

/** shards.json, checked: version 1, at least one shard, each a count of domains (0 only for the one shard of an empty index). @throws IndexFormatError CCP_ERR_INDEX_FORMAT */
function parseShardTable(b: Buffer): ShardTable {
  const t = parseJson<ShardTable>(b, SHARD_TABLE);
  if (t.v !== 1 || !Array.isArray(t.shards) || t.shards.length === 0) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'unknown shards.json version');
  const min = t.shards.length === 1 ? 0 : 1;
  if (!t.shards.every((e) => Number.isSafeInteger((e as { domains?: unknown } | null)?.domains) && e.domains >= min)) {
    throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'shards.json lists a shard without a number of domains');
  }
  return t;
}

const SHARD_FILE = /^(?:domains|domain-datasets|postings)(?:-\d+)?\.bin$/;

/**
 * The shard file names of a version: shards.json's, or the one legacy triple of a version written before it. The
 * table must name every shard file the version lists and no other (a table that drops a shard would hide its
 * domains). @throws IndexFormatError
 */
function shardNamesOf(toc: VersionToc, table: ShardTable | null): Record<keyof IndexShardFiles, string>[] {
  const names = table !== null ? table.shards.map((_, k) => shardFileNames(k)) : [LEGACY_SHARD];
  if (table === null && toc.files[LEGACY_SHARD.domains] === undefined) throw new IndexFormatError('CCP_ERR_INDEX_MISSING', 'index version lists no domain index', { version: toc.version });
  const want = new Set(names.flatMap((n) => [n.domains, n.bitmaps, n.postings]));
  const listed = Object.keys(toc.files).filter((f) => SHARD_FILE.test(f));
  if (listed.length !== want.size || !listed.every((f) => want.has(f))) {
    throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'the index shard files do not match shards.json', { version: toc.version, listed: listed.length, expected: want.size });
  }
  return names;
}

/**
 * The facts file names of a version with `shards` shards, one per shard, or null when it lists none (written before
 * facts, or with them turned off). @throws IndexFormatError when it lists some but not exactly one per shard
 */
function factsNamesOf(toc: VersionToc, shards: number): string[] | null {
  const listed = Object.keys(toc.files).filter((f) => FACTS_FILE.test(f));
  if (listed.length === 0) return null;
  const names = Array.from({ length: shards }, (_, k) => factsFileName(k));
  if (listed.length !== shards || !names.every((n) => toc.files[n] !== undefined)) {
    throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'the facts files do not match the index shards', { version: toc.version, listed: listed.length, expected: shards });
  }
  return names;
}

/** Resident bytes of a version's domain index (its shard files and facts files), from its table of contents. */
export function residentBytesOf(toc: VersionToc): number {
  return Object.entries(toc.files).reduce((a, [name, f]) => a + (SHARD_FILE.test(name) || FACTS_FILE.test(name) ? f.size : 0), 0);
}

/** What a version has folded in, without its dictionary, bitmaps or postings (a few KB to read). Same checks as loadVersion. */
export async function loadVersionSummary(store: ObjectStore, version: string, tocCrc32: number): Promise<{ batches: BatchSet; status: VersionStatus }> {
  const toc = await readVersionToc(store, version, tocCrc32);
  const got = await getAll(store, version, toc, ['batches.json', 'status.json']);
  return { batches: BatchSet.parse(got.get('batches.json')!), status: parseJson<VersionStatus>(got.get('status.json')!, 'status.json') };
}

/** A version's version.json (its files' sizes and CRC32s), checked against `tocCrc32`. @throws IndexFormatError */
export async function readVersionToc(store: ObjectStore, version: string, tocCrc32: number): Promise<VersionToc> {
  const tocBytes = await store.get(indexLayout.toc(version));
  if (tocBytes === null) throw new IndexFormatError('CCP_ERR_INDEX_MISSING', 'index version is missing', { version });
  if (crcOf(tocBytes) !== tocCrc32) throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'version.json CRC32 mismatch', { version });
  return parseJson<VersionToc>(tocBytes, 'version.json');
}

/** One file of a version, checked against its CRC32 and size in `toc`. */
async function getChecked(store: ObjectStore, version: string, toc: VersionToc, name: string): Promise<Buffer> {
  const want = toc.files[name];
  const b = want === undefined ? null : await store.get(indexLayout.versionFile(version, name));
  if (want === undefined || b === null) throw new IndexFormatError('CCP_ERR_INDEX_MISSING', 'index file is missing', { version, file: name });
  checkAgainstToc(toc, name, b);
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** A version file's bytes against the size and CRC32 its version.json lists. @throws IndexFormatError CCP_ERR_INDEX_CRC */
function checkAgainstToc(toc: VersionToc, name: string, b: Uint8Array): void {
  const want = toc.files[name]!;
  if (b.length !== want.size || crcOf(b) !== want.crc32) throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'index file CRC32 mismatch', { version: toc.version, file: name });
}

/** The files `names` of a version, read at once, each checked. */
async function getAll(store: ObjectStore, version: string, toc: VersionToc, names: readonly string[]): Promise<Map<string, Buffer>> {
  const bufs = await Promise.all(names.map((n) => getChecked(store, version, toc, n)));
  return new Map(names.map((n, i) => [n, bufs[i]!]));
}

/**
 * Writes the files of a version as they come ({@link put}), then its version.json ({@link finish}: sizes + CRC32s of
 * every file put). Idempotent: rewriting an unpublished version replaces it (a file of an earlier attempt that this
 * one does not put is listed nowhere and goes with the version's directory).
 */
export class VersionWriter {
  private readonly files: VersionToc['files'] = {};

  constructor(
    private readonly store: ObjectStore,
    private readonly version: string,
  ) {}

  async put(name: string, b: Uint8Array): Promise<void> {
    await this.store.put(indexLayout.versionFile(this.version, name), b);
    this.files[name] = { size: b.length, crc32: crcOf(b) };
  }

  /** Writes version.json; returns its CRC32 for the manifest. */
  async finish(parent: string | null, createdAt: string): Promise<number> {
    // by name: files are put from work that runs side by side (the index build, the derived structures), and the same
    // version must read the same whatever finished first
    const files = Object.fromEntries(Object.entries(this.files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const tocBytes = jsonBytes({ v: 1, version: this.version, parent, createdAt, files } satisfies VersionToc);
    await this.store.put(indexLayout.toc(this.version), tocBytes);
    return crcOf(tocBytes);
  }
}
