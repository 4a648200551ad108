import type { ObjectStore } from '@ccpipe/core';
import type { DomainIdsSnapshot } from './domain-ids';
import {
  INDEX_FILES, IndexFormatError, crcOf, indexLayout, jsonBytes, parseJson, type IndexFileName, type IndexManifest, type LakeFileEntry,
  type VersionStatus, type VersionToc,
} from './format';

/** Every file of one loaded, CRC-verified index version. */
export interface LoadedVersion {
  toc: VersionToc;
  domains: Buffer;
  bitmaps: Buffer;
  postings: Buffer;
  files: LakeFileEntry[];
  domainIds: DomainIdsSnapshot;
  /** Canonical URL → substitute url_id (signed decimal string). */
  collisions: Record<string, string>;
  /** Keys of every batch marker folded into this version or an earlier one. */
  batches: string[];
  status: VersionStatus;
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
  const { toc, got } = await loadIndexFiles(store, version, tocCrc32, INDEX_FILES);
  return {
    toc,
    domains: got['domains.bin'],
    bitmaps: got['domain-datasets.bin'],
    postings: got['postings.bin'],
    files: parseJson<LakeFileEntry[]>(got['files.json'], 'files.json'),
    domainIds: parseJson<DomainIdsSnapshot>(got['domain-ids.json'], 'domain-ids.json'),
    collisions: parseJson<Record<string, string>>(got['collisions.json'], 'collisions.json'),
    batches: parseJson<string[]>(got['batches.json'], 'batches.json'),
    status: parseJson<VersionStatus>(got['status.json'], 'status.json'),
  };
}

/** What a version has folded in, without its dictionary, bitmaps or postings (a few KB to read). Same checks as loadVersion. */
export async function loadVersionSummary(store: ObjectStore, version: string, tocCrc32: number): Promise<{ batches: string[]; status: VersionStatus }> {
  const { got } = await loadIndexFiles(store, version, tocCrc32, ['batches.json', 'status.json']);
  return { batches: parseJson<string[]>(got['batches.json'], 'batches.json'), status: parseJson<VersionStatus>(got['status.json'], 'status.json') };
}

/** A version's version.json (its files' sizes and CRC32s), checked against `tocCrc32`. @throws IndexFormatError */
export async function readVersionToc(store: ObjectStore, version: string, tocCrc32: number): Promise<VersionToc> {
  const tocBytes = await store.get(indexLayout.toc(version));
  if (tocBytes === null) throw new IndexFormatError('CCP_ERR_INDEX_MISSING', 'index version is missing', { version });
  if (crcOf(tocBytes) !== tocCrc32) throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'version.json CRC32 mismatch', { version });
  return parseJson<VersionToc>(tocBytes, 'version.json');
}

/** version.json and the files `names` of a version, each checked against its CRC32 and size. */
async function loadIndexFiles<N extends IndexFileName>(
  store: ObjectStore, version: string, tocCrc32: number, names: readonly N[],
): Promise<{ toc: VersionToc; got: Record<N, Buffer> }> {
  const toc = await readVersionToc(store, version, tocCrc32);
  const got = {} as Record<N, Buffer>;
  await Promise.all(
    names.map(async (name) => {
      const want = toc.files[name];
      const b = await store.get(indexLayout.versionFile(version, name));
      if (want === undefined || b === null) throw new IndexFormatError('CCP_ERR_INDEX_MISSING', 'index file is missing', { version, file: name });
      if (b.length !== want.size || crcOf(b) !== want.crc32) throw new IndexFormatError('CCP_ERR_INDEX_CRC', 'index file CRC32 mismatch', { version, file: name });
      got[name] = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    }),
  );
  return { toc, got };
}

/**
 * Writes every index file of a version, then its version.json (sizes + CRC32s). Returns version.json's CRC32 for
 * the manifest. Idempotent: rewriting an unpublished version replaces it whole.
 */
export async function writeVersionFiles(
  store: ObjectStore,
  version: string,
  parent: string | null,
  createdAt: string,
  files: Record<IndexFileName, Uint8Array | (() => Uint8Array)>,
): Promise<number> {
  const toc: VersionToc = { v: 1, version, parent, createdAt, files: {} };
  for (const name of INDEX_FILES) {
    const f = files[name];
    const b = typeof f === 'function' ? f() : f; // built when its turn comes: one big file in memory at a time
    await store.put(indexLayout.versionFile(version, name), b);
    toc.files[name] = { size: b.length, crc32: crcOf(b) };
  }
  const tocBytes = jsonBytes(toc);
  await store.put(indexLayout.toc(version), tocBytes);
  return crcOf(tocBytes);
}
