import type { ObjectStore } from '@ccpipe/core';
import { indexLayout, jsonBytes, parseJson, type IndexManifest, type LakeFileEntry } from './format';
import { LINKS_FILE, LINK_PREFIX, LINK_FILE_KINDS, type DatasetLinks } from './links';
import { ORDERINGS_FILE, ORDERING_PREFIX, type OrderingFile } from './orderings';
import { SEARCH_FILE, SEARCH_PREFIX, type SearchShardEntry } from './search-index';

/** The sequence number of a version name `v000042` (0 for anything else). */
export function versionSeq(v: string): number {
  const m = /^v(\d+)$/.exec(v);
  return m ? Number(m[1]) : 0;
}

const LAKE_TAG = /\/part-(v\d+)\.(?:parquet|rgx)$/;
const ORDERING_TAG = /\/(?:ts|size|status)(?:-delta)?-(v\d+)\.parquet$/;
const LINK_TAG = new RegExp(`/(?:${LINK_FILE_KINDS.join('|')})-(v\\d+)\\.parquet$`);
const SEARCH_TAG = /\/part-v\d+-(v\d+)\.sqlite$/;

/**
 * Deletes retired versions whose grace period is over (`retiredAt + graceMs <= now`): their `index/<v>/` files,
 * then every lake file under `urls/` (and row-group locator under `lakeidx/`, ordering under `order/`, link file under `links/`, search shard under `search/`) that no version still listed in the manifest (kept or retired) references
 * and whose version tag is not newer than the current version — which also sweeps lake files a crashed merge left
 * behind — and the same for `index/<v>/` directories (a version whose deletion was cut short, or a merge that
 * crashed before its flip). Rewrites the manifest when it dropped a version. Returns the versions deleted.
 * Idempotent; single writer.
 */
export async function collectGarbage(store: ObjectStore, manifest: IndexManifest, now: Date, graceMs: number): Promise<string[]> {
  const expired = manifest.retired.filter((r) => Date.parse(r.retiredAt) + graceMs <= now.getTime()).map((r) => r.version);
  const keep: IndexManifest = { ...manifest, retired: manifest.retired.filter((r) => !expired.includes(r.version)) };
  if (expired.length > 0) await store.put(indexLayout.manifest(), jsonBytes(keep));
  const listed = new Set([...keep.versions.map((x) => x.version), ...keep.retired.map((x) => x.version)]);
  const current = versionSeq(keep.current ?? '');
  // the expired versions, and any other version directory the manifest no longer lists, up to the current one
  const dropped = new Map<string, string[]>(expired.map((v) => [v, []]));
  for await (const o of store.list('index/')) {
    const v = /^index\/(v\d+)\//.exec(o.key)?.[1];
    if (v === undefined || listed.has(v) || versionSeq(v) > current) continue;
    dropped.set(v, [...(dropped.get(v) ?? []), o.key]);
  }
  for (const keys of dropped.values()) {
    // version.json first: a half-deleted version can no longer be loaded as if whole.
    keys.sort((a, b) => (a.endsWith('/version.json') ? -1 : b.endsWith('/version.json') ? 1 : 0));
    for (const k of keys) await store.delete(k);
  }
  const referenced = new Set<string>();
  for (const v of listed) {
    const b = await store.get(indexLayout.versionFile(v, 'files.json'));
    if (b === null) return expired; // a version we cannot read: delete nothing of the lake
    for (const f of parseJson<LakeFileEntry[]>(b, 'files.json')) {
      referenced.add(f.key);
      if (f.locator !== undefined) referenced.add(f.locator.key);
    }
    // orderings (orderings.ts): a version without the file has none; one that cannot be parsed stops the sweep too
    const o = await store.get(indexLayout.versionFile(v, ORDERINGS_FILE));
    if (o !== null) for (const e of parseJson<OrderingFile[]>(o, ORDERINGS_FILE)) referenced.add(e.key);
    // link graphs (links.ts), the same way
    const l = await store.get(indexLayout.versionFile(v, LINKS_FILE));
    if (l !== null) for (const d of parseJson<DatasetLinks[]>(l, LINKS_FILE)) for (const f of Object.values(d.files)) referenced.add(f.key);
    // search shards (search-index.ts), the same way
    const s = await store.get(indexLayout.versionFile(v, SEARCH_FILE));
    if (s !== null) for (const e of parseJson<SearchShardEntry[]>(s, SEARCH_FILE)) referenced.add(e.key);
  }
  const orphans: string[] = [];
  for (const prefix of [indexLayout.lakePrefix(), indexLayout.locatorPrefix(), ORDERING_PREFIX, LINK_PREFIX, SEARCH_PREFIX]) {
    for await (const o of store.list(prefix)) {
      const tag = (LAKE_TAG.exec(o.key) ?? ORDERING_TAG.exec(o.key) ?? LINK_TAG.exec(o.key) ?? SEARCH_TAG.exec(o.key))?.[1];
      if (tag !== undefined && versionSeq(tag) <= current && !referenced.has(o.key)) orphans.push(o.key);
    }
  }
  for (const k of orphans) await store.delete(k);
  return expired;
}
