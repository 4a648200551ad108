import { crc32 } from 'node:zlib';
import { CcpError, runLanes, type ObjectStore } from '@ccpipe/core';
import { IndexFormatError, indexLayout, parseJson, type LakeFileEntry } from './format';
import { readManifest, readVersionToc } from './version-files';
import { LINKS_FILE, type DatasetLinks } from './links';
import { ORDERINGS_FILE, type OrderingFile } from './orderings';
import { SEARCH_FILE, type SearchShardEntry } from './search-index';

/** One file of a version that is not as the version recorded it. */
export interface VerifyProblem {
  /** Its store key. */
  key: string;
  /**
   * CCP_ERR_INDEX_MISSING: gone (or no version to check); CCP_ERR_INDEX_CRC: another size or CRC32 than recorded;
   * CCP_ERR_INDEX_FORMAT: unreadable JSON; CCP_ERR_STORE_ACCESS: the store failed while reading it.
   */
  code: 'CCP_ERR_INDEX_MISSING' | 'CCP_ERR_INDEX_CRC' | 'CCP_ERR_INDEX_FORMAT' | 'CCP_ERR_STORE_ACCESS';
  message: string;
}

/** What {@link verifyVersion} read and found. */
export interface VerifyResult {
  /** The version checked (null: no version published yet). */
  version: string | null;
  /** Files checked: the index files version.json lists, the lake files files.json lists, their row-group locators. */
  indexFiles: number;
  lakeFiles: number;
  locators: number;
  /** Secondary ordering files orderings.json lists (orderings.ts). */
  orderings: number;
  /** Link graph files links.json lists (links.ts). */
  links: number;
  /** Search shards search.json lists (search-index.ts). */
  searchShards: number;
  /** Bytes read. */
  bytes: number;
  /** Empty when every file is as recorded. */
  problems: VerifyProblem[];
}

/** Bytes read per request while checksumming. */
const CHUNK = 8 << 20;

/**
 * Reads every file of one index version whole and checks it against what the version recorded: version.json against
 * the manifest's CRC32, each index file against version.json, each lake file and row-group locator against files.json
 * (size and CRC32), each secondary ordering, link graph file and search shard against orderings.json, links.json and
 * search.json. The API checks index files when it loads a version but reads lake files only by the row groups a
 * page needs, so this is how a whole lake is checked — after copying it, or on a schedule. Memory is one chunk per
 * lane. `version` defaults to the current one. Never throws for what it finds: an unreadable or empty manifest, a
 * version the manifest does not keep, and a store failure on one file are problems too (the other files are still
 * checked), so a wrong `--data` or a copy that lost its manifest does not pass.
 */
export async function verifyVersion(
  store: ObjectStore, opts: { version?: string; concurrency?: number; onFile?: (key: string, bytes: number) => void } = {},
): Promise<VerifyResult> {
  const result: VerifyResult = { version: opts.version ?? null, indexFiles: 0, lakeFiles: 0, locators: 0, orderings: 0, links: 0, searchShards: 0, bytes: 0, problems: [] };
  const manifestKey = indexLayout.manifest();
  let manifest;
  try {
    manifest = await readManifest(store);
  } catch (err) {
    if (!(err instanceof IndexFormatError)) throw err;
    result.problems.push({ key: manifestKey, code: 'CCP_ERR_INDEX_FORMAT', message: err.message });
    return result;
  }
  const version = opts.version ?? manifest.current;
  result.version = version;
  if (version === null) {
    result.problems.push({ key: manifestKey, code: 'CCP_ERR_INDEX_MISSING', message: 'no index version is published here' });
    return result;
  }
  const meta = manifest.versions.find((v) => v.version === version);
  if (meta === undefined) {
    const kept = manifest.versions.map((v) => v.version).join(', ') || 'none';
    result.problems.push({ key: manifestKey, code: 'CCP_ERR_INDEX_MISSING', message: `the manifest does not keep ${version} (it keeps: ${kept})` });
    return result;
  }
  let toc;
  try {
    toc = await readVersionToc(store, version, meta.tocCrc32);
  } catch (err) {
    if (!(err instanceof IndexFormatError)) throw err;
    result.problems.push({ key: indexLayout.toc(version), code: err.code as VerifyProblem['code'], message: err.message });
    return result;
  }
  const checkAll = (files: readonly { key: string; size: number; crc32: number }[]): Promise<void> =>
    runLanes(files.length, opts.concurrency ?? 4, async (i) => check(store, files[i]!, result, opts.onFile));
  const index = Object.entries(toc.files).map(([name, f]) => ({ key: indexLayout.versionFile(version, name), size: f.size, crc32: f.crc32 }));
  result.indexFiles = index.length;
  await checkAll(index);
  const filesKey = indexLayout.versionFile(version, 'files.json');
  if (!result.problems.some((p) => p.key === filesKey)) {
    let lake: LakeFileEntry[];
    try {
      lake = parseJson<LakeFileEntry[]>((await store.get(filesKey)) ?? new Uint8Array(), 'files.json');
    } catch (err) {
      if (!(err instanceof IndexFormatError)) throw err;
      result.problems.push({ key: filesKey, code: 'CCP_ERR_INDEX_FORMAT', message: err.message });
      lake = [];
    }
    const locators = lake.flatMap((f) => (f.locator ? [{ key: f.locator.key, size: f.locator.bytes, crc32: f.locator.crc32 }] : []));
    result.lakeFiles = lake.length;
    result.locators = locators.length;
    await checkAll([...lake.map((f) => ({ key: f.key, size: f.bytes, crc32: f.crc32 })), ...locators]);
  }
  // the files each listing of the version names (one that is absent lists none; one that cannot be read is a problem)
  const listings: [string, keyof Pick<VerifyResult, 'orderings' | 'links' | 'searchShards'>, (b: Uint8Array) => { key: string; size: number; crc32: number }[]][] = [
    [ORDERINGS_FILE, 'orderings', (b) => parseJson<OrderingFile[]>(b, ORDERINGS_FILE).map((o) => ({ key: o.key, size: o.bytes, crc32: o.crc32 }))],
    [LINKS_FILE, 'links', (b) => parseJson<DatasetLinks[]>(b, LINKS_FILE).flatMap((d) => Object.values(d.files).map((f) => ({ key: f.key, size: f.bytes, crc32: f.crc32 })))],
    [SEARCH_FILE, 'searchShards', (b) => parseJson<SearchShardEntry[]>(b, SEARCH_FILE).map((e) => ({ key: e.key, size: e.bytes, crc32: e.crc32 }))],
  ];
  for (const [name, counter, filesOf] of listings) {
    const key = indexLayout.versionFile(version, name);
    if (toc.files[name] === undefined || result.problems.some((p) => p.key === key)) continue;
    try {
      const list = filesOf((await store.get(key)) ?? new Uint8Array());
      result[counter] = list.length;
      await checkAll(list);
    } catch (err) {
      if (!(err instanceof IndexFormatError)) throw err;
      result.problems.push({ key, code: 'CCP_ERR_INDEX_FORMAT', message: err.message });
    }
  }
  result.problems.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return result;
}

/**
 * Reads one file in chunks and records a problem when it is gone, not of the size and CRC32 recorded, or the store
 * fails on it (a file collected meanwhile, a network failure after the store's retries): the other files go on.
 */
async function check(
  store: ObjectStore, f: { key: string; size: number; crc32: number }, result: VerifyResult, onFile?: (key: string, bytes: number) => void,
): Promise<void> {
  try {
    await checkOne(store, f, result, onFile);
  } catch (err) {
    const code = err instanceof CcpError ? err.code : '';
    result.problems.push(
      code === 'CCP_ERR_STORE_NOT_FOUND'
        ? { key: f.key, code: 'CCP_ERR_INDEX_MISSING', message: 'file is missing' }
        : code === 'CCP_ERR_STORE_RANGE'
          ? { key: f.key, code: 'CCP_ERR_INDEX_CRC', message: 'file is shorter than recorded' }
          : { key: f.key, code: 'CCP_ERR_STORE_ACCESS', message: `the store failed reading it${code ? ` (${code})` : ''}` },
    );
  }
}

async function checkOne(
  store: ObjectStore, f: { key: string; size: number; crc32: number }, result: VerifyResult, onFile?: (key: string, bytes: number) => void,
): Promise<void> {
  const info = await store.head(f.key);
  if (info === null) {
    result.problems.push({ key: f.key, code: 'CCP_ERR_INDEX_MISSING', message: 'file is missing' });
    return;
  }
  if (info.size !== f.size) {
    result.problems.push({ key: f.key, code: 'CCP_ERR_INDEX_CRC', message: `size ${info.size}, recorded ${f.size}` });
    return;
  }
  let crc = 0;
  for (let at = 0; at < f.size; at += CHUNK) {
    const b = await store.getRange(f.key, at, Math.min(CHUNK, f.size - at));
    crc = crc32(b, crc);
    result.bytes += b.length;
  }
  if (crc >>> 0 !== f.crc32) result.problems.push({ key: f.key, code: 'CCP_ERR_INDEX_CRC', message: 'CRC32 mismatch' });
  onFile?.(f.key, f.size);
}
