import type { ObjectStore } from '@ccpipe/core';
import { IndexFormatError, crcOf, indexLayout, parseJson, type VersionToc } from './format';

/**
 * A list file of a version (`index/<v>/<name>`: orderings.json, links.json, search.json), checked against the size and
 * CRC32 its version.json records; an empty list for a version that lists no such file (written before it existed, or
 * with the structure off). @throws IndexFormatError CCP_ERR_INDEX_CRC when the bytes differ or are gone
 */
export async function readVersionList<T>(store: ObjectStore, version: string, toc: VersionToc, name: string): Promise<T[]> {
  const e = toc.files[name];
  if (e === undefined) return [];
  const b = await store.get(indexLayout.versionFile(version, name));
  if (b === null || b.length !== e.size || crcOf(b) !== e.crc32) {
    throw new IndexFormatError('CCP_ERR_INDEX_CRC', `${name} does not match its checksum`, { version });
  }
  return parseJson<T[]>(b, name);
}
