import { randomBytes } from 'node:crypto';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { RoaringBitmap32 } from 'roaring';
import { Channel, CcpError, domain64FromInt64, domain64ToInt64, errorCode, foreignBatchReason, layout, parseDatasetRegistry, type DatasetRegistry, type ObjectStore } from '@ccpipe/core';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { PART_SQL_TYPES } from '@ccpipe/adapters';
import { BatchSet } from './batch-set';
import { resolveCollisions } from './collisions';
import { DomainIds, partitionSql } from './domain-ids';
import { appendTo, openDuck, queryRows, sqlList, streamColumns, streamSortedStrings } from './duck';
import {
  IndexFormatError, IndexWriter, type OnDemandDomainIndex, SHARD_TABLE, indexLayout, jsonBytes, shardFileNames,
  type IndexManifest, type IngestTotals, type LakeFileEntry, type Posting, type ShardBuild, type ShardLimits, type VersionStatus,
} from './format';
import { collectGarbage, versionSeq } from './gc';
import { FACTS_SELECT, NEW_FACTS, decodeFactsRecords, encodeFactsRecord, factsColumnsOf, factsFileName, factsRecordOf, type FactsRecord } from './domain-facts';
import { NEW_POSTINGS, dropSuperseded, existingLakeColumns, lakeColumnsOf, runsToFold, stageNewKeys, stageNewRows, stagedColumns, writeLake, type LakeColumnSet, type LakeTarget, type OldLakeFile } from './lake-write';
import { stageInTasks } from './merge-stage';
import { fencedStore } from './fenced-store';
import { openLocalInputs } from './local-inputs';
import { exportMergeTask, loadMergeTaskResult, mergeTaskLayout, type MergeTask, type MergeTaskRunner } from './merge-task';
import { clearInbox, listNewBatches, markerScanOf, nextInboxState, readMarkers, type Marker } from './merge-inbox';
import { MergeCache, type CachedObject } from './merge-cache';
import { acquireMergeLease, type MergeLease } from './merge-lease';
import { openStageRoot } from './stage-root';
import { assignPositions } from './orderings';
import { settleAll, stripRowsOf, writeDerived } from './merge-derived';
import { SEARCH_LAKE_COLUMNS, type SearchShardEntry } from './search-index';
import { TOP_DOMAINS_FILE, TopDomains } from './top-domains';
import { lakeFileId, markTextVersions } from './text-versions';
import { VersionWriter, loadVersionHead, loadVersionSummary, openIndexOnDemand, readManifest, type VersionBase } from './version-files';

/** Options of {@link runMerge}. */
export interface MergeOptions {
  store: ObjectStore;
  /**
   * Local directory holding the store's objects (the FsObjectStore root): DuckDB then reads batch parts and the
   * previous lake files there, in place. Without it (and without a store `localPath(key)`), the inputs a merge needs
   * are staged into its temp dir through `store.getRange` and deleted after use (S3, memory stores). Outputs always
   * go through `store`.
   */
  dataDir?: string;
  /** Rows per lake row group (rounded up to DuckDB's 2048). */
  rowGroupSize: number;
  /** Versions kept in the manifest (≥ 1); older ones are retired, then collected after `graceMs`. */
  keepVersions: number;
  graceMs: number;
  now?: () => Date;
  /**
   * ZSTD level of lake files (default 1: on the bench's lake 4 % smaller than level 3 and no slower, on real CDX
   * columns the same size; 9 saves another 1–9 % for ≈ 1.4× the write CPU; docs/index-format.md).
   */
  compressionLevel?: number;
  /** Write `text` as null in the lake (default false: keep what the parts hold). */
  dropText?: boolean;
  /**
   * Where the lake-writing tasks run (merge-task.ts, docs/merge-tasks.md): merge-workers through a queue
   * (`ccpipe merge --distribute`), or this process as a task runner. Default: written here directly. The files are
   * the same either way.
   */
  tasks?: MergeTaskRunner;
  /**
   * Bits of the domain id that pick the `domain_prefix=HH` partition (1..8, default 8 = 256 partitions per
   * dataset). Each lake file costs a fixed ~20 ms to write, so small lakes merge faster with fewer partitions; big
   * ones want 8 so one merge rewrites little. Fixed once the lake exists.
   */
  partitionBits?: number;
  /**
   * Lake columns (default 'all': every part column but dataset_id). 'api' keeps only what the API serves
   * (`LAKE_API_COLUMNS`), 'lean' the same without url_id (readers compute it; the collision check then hashes the
   * lake's url column). Fixed once the lake exists.
   */
  lakeColumns?: LakeColumnSet;
  /**
   * Most files (runs) a lake partition may hold after this merge (default 4; 1 = every merge rewrites each partition
   * it adds rows to whole). A merge writes each receiving partition's new rows as one new file and folds into it the
   * newest runs no bigger than what that file already holds (a binary counter: a row is rewritten ≈ log₂(merges)
   * times, not once per merge), any run holding rows the new ones supersede, and, beyond the cap, the newest others.
   */
  lakeMaxRuns?: number;
  /**
   * Fold every lake partition into one file (default false): the partitions receiving rows are rewritten whole (as
   * with `lakeMaxRuns: 1`) and so is every other partition holding more than one run, so each (domain, dataset) is
   * one run in (domain64, url) order again. Publishes a version even when no batch is new, if any partition has runs
   * to fold (`ccpipe merge --compact`, after a crawl's last merge). Costs a rewrite of those partitions.
   */
  compact?: boolean;
  /** Parquet format version of lake files (default 'V2': delta encodings for sorted ints and strings). */
  parquetVersion?: 'V1' | 'V2';
  /**
   * DuckDB memory limit (default '256MB'); it spills to a temp dir beyond it. Parquet readers, writers and the JS
   * side allocate outside it: 256 MB keeps a 10M-row merge under 1 GiB RSS (512 MB peaked at 1.3 GiB).
   */
  memoryLimit?: string;
  /**
   * Rows (old + new) of the partitions written per group (default 250 000): a group's files are uploaded and their
   * local copies deleted before the next group is written, which bounds the merge's local disk on S3. Each
   * partition is sorted on its own, so memory does not depend on it.
   */
  passRows?: number;
  /**
   * DuckDB threads of a distributed merge's coordinator while it works on the new rows' keys alone — reading them from
   * the parts, the collision check, de-duplication, the content-versions policy and the plan — where nothing it writes
   * depends on the order of rows (it is one thread elsewhere: COPY keeps ROW_GROUP_SIZE and row order only so). Those
   * phases run while the merge-workers wait for their tasks. Default: the machine's cores.
   */
  keyThreads?: number;
  /**
   * Directory under which the merge makes its temp dir (DuckDB spill, staged inputs of a remote store, files before
   * upload); default the OS temp dir (`TMPDIR`). Deleted when the merge ends, whatever the outcome; one a killed merge left
   * behind is deleted by a later merge once its heartbeat is 5 min old.
   */
  tmpDir?: string;
  /**
   * When the domain index starts a new shard (default 2²⁰ domains, 1 GiB per file): each shard is a dictionary range
   * with its own domains/bitmaps/postings files, so no file meets Node's 4 GiB Buffer limit at Common Crawl's scale.
   */
  indexShards?: ShardLimits;
  /**
   * A directory of this merger's own where the lake files and index shards it reads or writes are kept across
   * merges, for a store without local files (S3; ignored with `dataDir` or a local store): a merge then downloads
   * only what it has not seen — in steady state, the new batch parts — instead of every lake file (the collision
   * check reads them all) and the previous index. Holds one version's lake and index (the lake's size on local
   * disk); entries are checked against the version's CRC32s when they enter (merge-cache.ts). Default: none, each
   * merge stages its inputs in its temp dir and deletes them.
   */
  cacheDir?: string;
  /** Told of each temp dir a killed merge left under `tmpDir` that this one removed (stale for 5 min). */
  onStaleTemp?: (dir: string) => void;
  /**
   * Called after each phase with its wall time (metrics, benchmarks). `domains` stages the new rows (a distributed merge:
   * their keys); `stage` is de-duplication, the plan, and a distributed merge's stage tasks (merge-stage.ts). `index`
   * is the domain index and every file of the version; `orderings`, `links` and `search` are built beside the domain
   * index, so their times are inside `index`'s, and reported as well.
   */
  onPhase?: (phase: 'load' | 'read' | 'domains' | 'collisions' | 'stage' | 'lake' | 'index' | 'orderings' | 'links' | 'search' | 'publish', ms: number) => void;
  /**
   * Write the secondary orderings (time, size, status) of the datasets this merge writes to (default true; orderings.ts).
   * Off, a version has none and `/v1/pages` answers 404 for it; kept switchable so a benchmark measures their cost.
   */
  orderings?: boolean;
  /**
   * Write the link graph (inlinks, outlinks, linking pages of a domain) of the datasets this merge writes to (default
   * true; links.ts). Needs a lake holding `outlinks` and `outlink_domains` (lake columns 'all', begun since #21).
   */
  links?: boolean;
  /**
   * Write the full-text search shards (one SQLite FTS5 file per lake file; search-index.ts) of the lake files this
   * merge writes, carrying the others' over (default true). Needs a lake holding url_id, title and text ('all' or 'api').
   */
  search?: boolean;
  /**
   * Estimated bytes of new rows one staging sort may hold (lake-write.ts stageNewRows); default a quarter of
   * `memoryLimit`. Wider input is staged in passes of partitions. Tests set it low to force passes.
   */
  stagePassBytes?: number;
  /**
   * List every batch marker of the store besides the inbox (default false: the inbox alone, once the lake's merges
   * have settled into it, merge-inbox.ts). For markers written without an inbox entry: by workers of a ccpipe older
   * than the inbox, or put by hand. Costs a listing of every batch (≈ 8M keys per crawl).
   */
  rescan?: boolean;
  /** A merge lease whose heartbeat is older than this is taken over (merge-lease.ts). Default 30 min. */
  leaseTtlMs?: number;
  /**
   * Compute the per-(domain, dataset) facts (`DomainFacts`: hosts, status classes, languages, capture time range,
   * content-length median and p90) and write them beside the index shards (default true; domain-facts.ts). A merge
   * computes them for the partitions it writes and carries the previous version's over for the others; false writes
   * a version without facts (benchmarks measure their cost with it).
   */
  facts?: boolean;
  /**
   * The content-versions policy (text-versions.ts): only the newest N captures of a URL across datasets keep their
   * text; 'all' keeps every text. It stays with the lake: a merge without it applies the previous version's policy.
   * Tightening it (from 'all', or to a smaller N) ranks every URL of the lake once and rewrites the files holding
   * texts beyond it, even with no new batch; text already dropped does not come back when it is loosened.
   */
  textVersions?: number | 'all';
}

/** What one merge did. */
export interface MergeResult {
  /** The version now current (the previous one when nothing was new). */
  version: string | null;
  published: boolean;
  batches: number;
  rowsIn: number;
  urls: number;
  domains: number;
  /** Lake files this merge wrote (one per partition receiving rows). */
  rewrittenFiles: number;
  /** Rows written into them: the new rows plus those of the runs they fold in (÷ rowsIn = write amplification). */
  rowsWritten: number;
  /** Lake files of the version now current. */
  lakeFiles: number;
  newCollisions: number;
  /**
   * Completed batches not merged because their marker names another data store, or a dataset id that means another
   * dataset in this one (core foreignBatchReason); their inbox entries stay, so every merge reports them until they
   * are removed.
   */
  foreignBatches: number;
  /** Captures whose text this merge dropped under the content-versions policy: new rows, and lake rows (rewritten). */
  textDropped: number;
  /**
   * How this merge found its batches ('inbox', or 'full': every marker listed, merge-inbox.ts), and how many it found
   * with no inbox entry — after a lake's first merges, batches of a worker of an older ccpipe still running.
   */
  scan: 'inbox' | 'full';
  withoutInbox: number;
  collectedVersions: string[];
  /**
   * Why garbage collection failed (an error code), when it did. It runs after the flip, so the merge stands; what it
   * could not delete is deleted by a later merge (unlisted version directories and lake files are swept).
   */
  gcError?: string;
  ms: number;
}

/**
 * Garbage collection that never fails its merge: retired versions, and the inbox entries `inbox` of batches the
 * current version holds. What it could not delete now, a later merge deletes.
 */
async function collectQuietly(
  store: ObjectStore, manifest: IndexManifest, now: Date, graceMs: number, inbox: readonly string[],
): Promise<{ collectedVersions: string[]; gcError?: string }> {
  const inboxError = await clearInbox(store, inbox);
  try {
    const collectedVersions = await collectGarbage(store, manifest, now, graceMs);
    return { collectedVersions, ...(inboxError !== undefined && { gcError: inboxError }) };
  } catch (err) {
    return { collectedVersions: [], gcError: inboxError ?? errorCode(err) };
  }
}

/**
 * The content-versions policy of a merge: `opt` when given ('all' = none), else the lake's (`prev`, its previous
 * version's). @throws CcpError CCP_ERR_CONFIG when it is neither 'all' nor a whole number ≥ 1.
 */
function textVersionsOf(opt: number | 'all' | undefined, prev: number | undefined): number | undefined {
  if (opt === 'all') return undefined;
  if (opt === undefined) return prev;
  if (!Number.isInteger(opt) || opt < 1) throw new CcpError('CCP_ERR_CONFIG', "textVersions must be a whole number ≥ 1 or 'all'", { detail: { textVersions: opt } });
  return opt;
}

/** The store's dataset registry, or null when it has none. */
async function readRegistry(store: ObjectStore): Promise<DatasetRegistry | null> {
  const bytes = await store.get(layout.datasetRegistry());
  return bytes === null ? null : parseDatasetRegistry(bytes);
}

/**
 * Whether a marker names another data store, or a dataset id that means another dataset in this one (core
 * foreignBatchReason). Markers of workers older than store ids (no `dataset`) and stores without a registry pass.
 */
function isForeign(registry: DatasetRegistry | null, m: Marker): boolean {
  return registry !== null && m.dataset !== undefined && foreignBatchReason(registry, { store: m.store, dataset: m.dataset, datasetId: m.datasetId }) !== null;
}

/** A lake partition's map key. */
const partitionKey = (p: { datasetId: number; prefix: string }): string => `${p.datasetId}/${p.prefix}`;

/** A previous lake file as a merge reads it: where its copy sits, and its id in lose_old (negative). */
const oldLakeFile = (f: LakeFileEntry, path: string, fileId: number): OldLakeFile => ({ datasetId: f.datasetId, prefix: f.prefix, key: f.key, rows: f.rows, path, fileId });

/** ZSTD level of lake files by default ({@link MergeOptions.compressionLevel}). */
export const DEFAULT_LAKE_ZSTD_LEVEL = 1;

/** Runs per lake partition by default ({@link MergeOptions.lakeMaxRuns}). */
export const DEFAULT_MAX_RUNS = 4;

/** Share of a lake file's rows losing their text under the content-versions policy that makes a merge rewrite it. */
const STRIP_NOW_SHARE = 0.25;

/** Rows (old + new) per lake pass by default: keeps peak RSS under 1 GiB at 1M rows (docs/index-format.md). */
const DEFAULT_PASS_ROWS = 250_000;

/**
 * The ingest totals of the new version: the previous version's plus the new markers'. A previous version written
 * before the totals existed has its markers read once here (in pages of keys, 16 at a time), as `ccpipe status`
 * used to on every call; the caller leaves the totals out when that fails, and the next merge tries again.
 */
async function ingestTotalsOf(store: ObjectStore, prev: VersionStatus | null, merged: BatchSet, markers: readonly [string, Marker][]): Promise<IngestTotals[]> {
  const by = new Map<number, IngestTotals>();
  if (prev !== null && prev.ingested === undefined) {
    let page: string[] = [];
    const readPage = async (): Promise<void> => {
      for (const [key, m] of await readMarkers(store, page)) countMarker(by, m?.datasetId ?? layout.batchDatasetOf(key) ?? 0, m);
      page = [];
    };
    for (const key of merged.keys()) {
      page.push(key);
      if (page.length === 4096) await readPage();
    }
    await readPage();
  } else for (const t of prev?.ingested ?? []) by.set(t.datasetId, { ...t });
  for (const [, m] of markers) countMarker(by, m.datasetId, m);
  return [...by.values()].sort((a, b) => a.datasetId - b.datasetId);
}

/** Adds one completed batch of `datasetId` to `by`, with the rows and failed records its marker counts (none when unread). */
function countMarker(by: Map<number, IngestTotals>, datasetId: number, m: Marker | null): void {
  const t = by.get(datasetId) ?? { datasetId, batches: 0, rows: 0, failed: 0 };
  t.batches++;
  t.rows += m?.rows ?? 0;
  t.failed += m?.failed ?? 0;
  if (m?.finishedAt !== undefined && (t.updatedAt === undefined || m.finishedAt > t.updatedAt)) t.updatedAt = m.finishedAt;
  const failures = plusCounts(t.failures, m?.failures);
  if (failures !== undefined) t.failures = failures;
  const dropped = plusCounts(t.dropped, m?.dropped);
  if (dropped !== undefined) t.dropped = dropped;
  by.set(datasetId, t);
}

/**
 * `a` + `b`, key by key, as a new record (a previous version's totals are never changed in place; odd values are
 * skipped), or `a` itself when `b` adds nothing — so a dataset without failures keeps no empty record.
 */
function plusCounts(a: Readonly<Record<string, number>> | undefined, b: Readonly<Record<string, number>> | undefined): Record<string, number> | undefined {
  const add = Object.entries(b ?? {}).filter(([, n]) => Number.isSafeInteger(n));
  if (add.length === 0) return a;
  const out = { ...a };
  for (const [k, n] of add) out[k] = (out[k] ?? 0) + n;
  return out;
}

/**
 * Completed batches in the store per dataset, with their rows and failed records (as their markers count them): the
 * current version's totals (status.json `ingested`) plus the batches it does not hold yet — so a call reads the
 * inbox and the new markers, not one marker per batch of the whole lake. Over a version written before the totals
 * (or none), every marker is read. For `ccpipe status`.
 */
export async function ingestTotals(store: ObjectStore): Promise<IngestTotals[]> {
  const manifest = await readManifest(store);
  const meta = manifest.versions.find((v) => v.version === manifest.current) ?? null;
  const summary = meta ? await loadVersionSummary(store, meta.version, meta.tocCrc32) : null;
  const base = summary?.status.ingested !== undefined ? summary : null;
  const by = new Map<number, IngestTotals>((base?.status.ingested ?? []).map((t) => [t.datasetId, { ...t }]));
  const found = await listNewBatches(store, base?.batches ?? BatchSet.empty(), markerScanOf(base?.status));
  for (const m of (await readMarkers(store, found.pending)).values()) if (m !== null) countMarker(by, m.datasetId, m);
  return [...by.values()].sort((a, b) => a.datasetId - b.datasetId);
}

/** What the next merge would fold in, against what the current version holds. */
export interface PendingMerge {
  /** The current version (null before the first merge). */
  version: string | null;
  /** Completed batches not in the current version, and their rows (as their markers count them). */
  batches: number;
  rows: number;
  /** URLs of the current version (0 before the first merge). */
  lakeUrls: number;
  /**
   * Datasets (by name) whose crawl these batches complete: the batcher's checkpoint says it published its last batch
   * (`done`, with its count), and the batches merged before plus these are that many. The merger service merges them
   * at once, whatever its policy's ratio (the tail of a crawl would otherwise wait up to its max wait).
   */
  completes: string[];
}

/**
 * What a merge would fold in now, read cheaply (the manifest, the current version's batches.json and status.json,
 * a listing of the inbox — of every marker while a merge would make one, {@link markerScanOf} — and the markers not
 * read before; no dictionary, bitmaps, postings or lake): the merger
 * service uses it to decide whether a merge is due. `rowsOf` (marker key → rows) carries what earlier calls read —
 * a marker is written once, last, so a caller that asks every few minutes keeps it and GETs only new markers;
 * entries of markers no longer pending are dropped from it. @throws IndexFormatError when the current version is
 * corrupt; store errors as they come.
 */
export async function pendingMerge(store: ObjectStore, rowsOf: Map<string, number> = new Map()): Promise<PendingMerge> {
  const manifest = await readManifest(store);
  const meta = manifest.versions.find((v) => v.version === manifest.current) ?? null;
  const summary = meta ? await loadVersionSummary(store, meta.version, meta.tocCrc32) : null;
  const found = await listNewBatches(store, summary?.batches ?? BatchSet.empty(), markerScanOf(summary?.status));
  const unread = found.pending.filter((key) => !rowsOf.has(key));
  const registry = unread.length === 0 ? null : await readRegistry(store);
  // a batch of another store is never merged (mergeHolding leaves it out): it is not pending either (-1, remembered)
  for (const [key, m] of await readMarkers(store, unread)) if (m !== null) rowsOf.set(key, isForeign(registry, m) ? -1 : (m.rows ?? 0));
  const pending = new Set<string>();
  let rows = 0;
  for (const key of found.pending) {
    const n = rowsOf.get(key);
    if (n === undefined) continue; // gone since it was listed
    if (n < 0) continue; // another store's
    pending.add(key);
    rows += n;
  }
  const listed = new Set(found.pending);
  for (const key of rowsOf.keys()) if (!listed.has(key)) rowsOf.delete(key);
  const completes = pending.size === 0 ? [] : await crawlsCompleted(store, summary?.status.ingested, pending);
  return { version: manifest.current, batches: pending.size, rows, lakeUrls: summary?.status.urls ?? 0, completes };
}

/**
 * The datasets whose last batches are among `pending` (marker keys): the batcher's checkpoint is `done` with a count
 * of the batches it published, and those the current version holds (`ingested`) plus the pending ones reach it. One
 * GET of the registry and one per dataset with pending batches; a dataset whose checkpoint or totals are unknown (a
 * batcher or version older than the counts) is never said complete. A batch that was dead-lettered has no marker, so
 * its crawl is not complete until it is replayed.
 */
async function crawlsCompleted(store: ObjectStore, ingested: readonly IngestTotals[] | undefined, pending: ReadonlySet<string>): Promise<string[]> {
  const regBytes = await store.get(layout.datasetRegistry());
  if (regBytes === null) return [];
  const names = new Map(parseDatasetRegistry(regBytes).datasets.map((d) => [d.id, d.name]));
  const pendingBy = new Map<number, number>();
  for (const key of pending) {
    const d = layout.batchDatasetOf(key);
    if (d !== null) pendingBy.set(d, (pendingBy.get(d) ?? 0) + 1);
  }
  const out: string[] = [];
  for (const [datasetId, n] of pendingBy) {
    const name = names.get(datasetId);
    if (name === undefined) continue;
    const cp = await store.get(layout.batcherCheckpoint(name));
    if (cp === null) continue;
    let parsed: { done?: unknown; batchesPublished?: unknown };
    try {
      parsed = JSON.parse(Buffer.from(cp).toString('utf8')) as typeof parsed;
    } catch {
      continue; // the batcher's own business: it refuses a damaged checkpoint itself
    }
    const merged = ingested === undefined ? null : (ingested.find((t) => t.datasetId === datasetId)?.batches ?? 0);
    if (parsed.done === true && typeof parsed.batchesPublished === 'number' && merged !== null && merged + n >= parsed.batchesPublished) out.push(name);
  }
  return out.sort();
}

/**
 * Folds every completed batch (marker present) not yet in the current version into a new immutable version
 * `index/<v>/` and its lake files, then replaces `index/manifest.json` (atomic put) — last, after every file is
 * written and its CRC32 recorded. A crash anywhere before that leaves the previous version serving; rerunning
 * rebuilds the same version name over the leftovers. Then retires versions beyond `keepVersions` and deletes
 * retired ones older than `graceMs`. Single writer: run one merger at a time.
 * @throws IndexFormatError when the current version is corrupt; store and DuckDB errors as they come.
 */
export async function runMerge(opts: MergeOptions): Promise<MergeResult> {
  // single writer: the lease refuses a second merger (the service and a hand-run `ccpipe merge`, say) before it reads
  // anything, and stops one that lost it before it writes under a version name (merge-lease.ts)
  const lease = await acquireMergeLease(opts.store, opts.leaseTtlMs === undefined ? {} : { ttlMs: opts.leaseTtlMs });
  try {
    // writes first ask the lease whether this merge may still write
    return await mergeHolding({ ...opts, store: fencedStore(opts.store, () => lease.assertHeld()) }, lease);
  } finally {
    await lease.release();
  }
}

async function mergeHolding(opts: MergeOptions, lease: MergeLease): Promise<MergeResult> {
  const t0 = Date.now();
  let tp = t0;
  const phase = (name: Parameters<NonNullable<MergeOptions['onPhase']>>[0]): void => {
    const t = Date.now();
    opts.onPhase?.(name, t - tp);
    tp = t;
  };
  const now = opts.now ?? (() => new Date());
  const { store } = opts;
  const manifest = await readManifest(store);
  const prevMeta = manifest.versions.find((v) => v.version === manifest.current) ?? null;
  // the previous version's JSON files now; its domain index is read a shard at a time as the merge walks it
  const prev = prevMeta ? await loadVersionHead(store, prevMeta.version, prevMeta.tocCrc32) : null;
  const merged = prev?.batches ?? BatchSet.empty();
  const bits = opts.partitionBits ?? prev?.status.partitionBits ?? 8;
  if (!Number.isInteger(bits) || bits < 1 || bits > 8 || (prev !== null && prev.status.partitionBits !== bits)) {
    throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'partitionBits must be 1..8 and cannot change once the lake exists', { bits });
  }
  const prevColumns = prev === null ? null : (prev.status.lakeColumns ?? 'all');
  const columnSet = opts.lakeColumns ?? prevColumns ?? 'all';
  if (prevColumns !== null && prevColumns !== columnSet) {
    throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'lakeColumns cannot change once the lake exists', { lakeColumns: columnSet, lake: prevColumns });
  }
  // the lake's real columns: an 'api' or 'lean' lake begun before stop 20 keeps its narrower list
  const lakeCols = prev === null ? lakeColumnsOf(columnSet) : existingLakeColumns(columnSet, prev.status.lakeColumnList);
  const facts = opts.facts !== false;
  const compact = opts.compact === true;
  if ((opts.dropText ?? false) && opts.textVersions !== undefined) {
    // a merge that writes no text cannot apply a policy to the files it does not rewrite, nor record one it did not apply
    throw new CcpError('CCP_ERR_CONFIG', '--text-versions cannot be set by a --drop-text merge: set it in a merge without --drop-text', { detail: { textVersions: opts.textVersions } });
  }
  const textVersions = textVersionsOf(opts.textVersions, prev?.status.textVersions);
  const policy = textVersions !== undefined && !(opts.dropText ?? false);
  // a tighter policy than the lake's (or a first one) ranks every URL of the lake once, even with nothing new to merge;
  // so does a compaction under a policy (it drops the texts earlier merges left for it)
  const tightened = prev !== null && policy && (prev.status.textVersions ?? Infinity) > textVersions!;
  const rankAll = prev !== null && policy && (tightened || compact);
  const maxRuns = compact ? 1 : (opts.lakeMaxRuns ?? DEFAULT_MAX_RUNS);
  if (!Number.isInteger(maxRuns) || maxRuns < 1) throw new CcpError('CCP_ERR_CONFIG', 'lakeMaxRuns must be an integer ≥ 1', { detail: { lakeMaxRuns: maxRuns } });
  const zstdLevel = opts.compressionLevel ?? DEFAULT_LAKE_ZSTD_LEVEL;
  if (!Number.isInteger(zstdLevel) || zstdLevel < 1 || zstdLevel > 22) throw new CcpError('CCP_ERR_CONFIG', 'compressionLevel must be an integer from 1 to 22', { detail: { compressionLevel: zstdLevel } });
  const scanAt = now();
  const scan = markerScanOf(prev?.status, opts.rescan);
  const found = await listNewBatches(store, merged, scan);
  const read = [...(await readMarkers(store, found.pending))].flatMap(([key, m]) => (m === null ? [] : [[key, m] as [string, Marker]]));
  // A marker naming another data store, or a dataset id that means another dataset here (a worker over another store
  // than its batcher, older than the workers' own check): not merged, reported at every merge, its inbox entry kept.
  const registry = await readRegistry(store);
  const foreign = read.filter(([, m]) => isForeign(registry, m));
  const markers = foreign.length === 0 ? read : read.filter(([, m]) => !isForeign(registry, m));
  const foreignKeys = new Set(foreign.map(([k]) => k));
  const inboxDone = (): string[] => [...found.entries].filter(([, marker]) => !foreignKeys.has(marker)).map(([entry]) => entry);
  const withoutEntry = markers.filter(([key]) => found.withoutEntry.has(key)).length;
  // a partition's runs (its lake files, oldest first: file keys carry the version that wrote them)
  const runsOf = new Map<string, LakeFileEntry[]>();
  for (const f of prev?.files ?? []) runsOf.set(partitionKey(f), [...(runsOf.get(partitionKey(f)) ?? []), f]);
  const compactable = compact ? [...runsOf.values()].filter((runs) => runs.length > 1) : [];
  phase('load');
  if (markers.length === 0 && compactable.length === 0 && !rankAll) {
    // inbox entries of batches merged before (a redelivered batch writes its entry again) or gone go now
    const gc = await collectQuietly(store, manifest, now(), opts.graceMs, inboxDone());
    const s = prev?.status;
    return {
      version: manifest.current, published: false, batches: 0, rowsIn: 0, urls: s?.urls ?? 0, domains: s?.domains ?? 0, rewrittenFiles: 0, rowsWritten: 0,
      lakeFiles: prev?.files.length ?? 0, newCollisions: 0, textDropped: 0, foreignBatches: foreign.length, scan, withoutInbox: 0, ...gc, ms: Date.now() - t0,
    };
  }
  const seq = Math.max(0, ...manifest.versions.map((v) => versionSeq(v.version)), ...manifest.retired.map((v) => versionSeq(v.version))) + 1;
  const version = `v${String(seq).padStart(6, '0')}`;
  const createdAt = now().toISOString();
  // A temp dir of this merge's own, kept alive by a heartbeat: a merge that was killed (SIGKILL, OOM, a container
  // replaced) leaves its spill files and staged copies behind, and a later merge removes them once stale (stage-root.ts).
  const root = await openStageRoot(opts.tmpDir ?? tmpdir(), {
    prefix: 'ccpipe-merge-',
    onStale: (dir) => opts.onStaleTemp?.(dir),
    createError: (cause, base) => new CcpError('CCP_ERR_CONFIG', 'the merge cannot create its temp dir: check tmpDir (TMPDIR)', { cause, detail: { dir: base } }),
  });
  const tmp = root.dir;
  let db: DuckDBInstance | null = null;
  let opened: DuckDBConnection | null = null;
  let side: DuckDBConnection | null = null;
  /** The connection the derived structures are built on, beside the index build. */
  let derivedConn: DuckDBConnection | null = null;
  /** The merge cache, when one is configured and the store is not read in place. */
  let cache: MergeCache | undefined;
  /** The merge-task run of this merge (`<version>.<nonce>`, as decodeMergeTask checks): its folder goes when it ends. */
  const taskRun = opts.tasks === undefined ? null : `${version}.${randomBytes(4).toString('hex')}`;
  try {
    try {
      db = await openDuck({ memoryLimit: opts.memoryLimit ?? '256MB', tempDir: join(tmp, 'spill') });
    } catch (err) {
      throw new CcpError('CCP_ERR_CONFIG', 'the merge database cannot start: check --memory-limit (e.g. 256MB, 1GB)', { cause: err, detail: { memoryLimit: opts.memoryLimit } });
    }
    const conn = await db.connect();
    opened = conn;
    // streams read here while `conn` appends (a statement on a streaming connection ends its stream)
    const reader = await db.connect();
    side = reader;
    await conn.run(NEW_POSTINGS);
    await conn.run(NEW_FACTS);
    // what the previous version lists (size, CRC32) for each file a merge may read: the cache's check
    const listed = new Map<string, CachedObject>();
    for (const f of prev?.files ?? []) listed.set(f.key, { key: f.key, bytes: f.bytes, crc32: f.crc32 });
    for (const [name, e] of Object.entries(prev?.toc.files ?? {})) {
      const key = indexLayout.versionFile(prev!.toc.version, name);
      listed.set(key, { key, bytes: e.size, crc32: e.crc32 });
    }
    const cacheOf = opts.cacheDir === undefined ? undefined : new MergeCache(opts.cacheDir);
    const inputs = openLocalInputs(store, opts.dataDir, join(tmp, 'in'), cacheOf && { cache: { cache: cacheOf, expect: (k) => listed.get(k) } });
    cache = inputs.inPlace ? undefined : cacheOf;
    // what a failed merge left (its new version's files, never served: not listed) goes before this one adds its own
    await cache?.retain(listed.values());
    const partKeys = markers.flatMap(([, m]) => (m.part !== null ? [m.part] : []));
    const parts = await inputs.fetch(partKeys);
    let rowsIn = 0;
    // the previous dictionary's keys are checked against its allocator in the same pass that checks its shards
    const prevIndex = prev === null ? null : await openIndexOnDemand(prev, inputs, DomainIds.keyCheck(prev.domainIds));
    const ids = prev ? DomainIds.fromSnapshot(prev.domainIds, prevIndex!.index, true) : DomainIds.empty();
    const collisions = { ...(prev?.collisions ?? {}) };
    let newCollisions = 0;
    const replaced = new Set<string>();
    const newFiles: LakeFileEntry[] = [];
    /** Search shards of new lake files that merge tasks built. */
    const builtSearch: SearchShardEntry[] = [];
    const withSearch = opts.search !== false && !(opts.dropText ?? false) && SEARCH_LAKE_COLUMNS.every((c) => lakeCols.includes(c));
    /** Partitions to write: their new rows (counted after de-duplication) and the runs the new file folds in. */
    let plan: { a: { datasetId: number; prefix: string; rows: number }; fold: OldLakeFile[]; keep: OldLakeFile[] }[] = [];
    const lakeKeys = (prev?.files ?? []).map((f) => f.key);
    const fileNo = new Map(lakeKeys.map((k, i) => [k, i]));
    /** The previous lake files' local copies, once fetched (the collision check and the content-versions policy read them all). */
    let lakePaths: string[] | null = null;
    const oldFileOf = (f: LakeFileEntry): OldLakeFile => oldLakeFile(f, lakePaths![fileNo.get(f.key)!]!, lakeFileId(fileNo.get(f.key)!));
    let textDropped = 0;
    /** Ids (lakeFileId) of the lake files holding rows whose text the content-versions policy drops now. */
    let stripFiles = new Map<number, number>();
    // A distributed merge stages only the new rows' keys here; its stage tasks read the rows (merge-stage.ts).
    const stageKeysOnly = taskRun !== null;
    const keyThreads = opts.keyThreads ?? availableParallelism();
    if (!Number.isInteger(keyThreads) || keyThreads < 1) throw new CcpError('CCP_ERR_CONFIG', 'keyThreads must be an integer ≥ 1', { detail: { keyThreads } });
    /** The merge's parts (store key, local path) in the order that numbers them (`_f`), and their columns' SQL types. */
    let partList: { key: string; path: string }[] = [];
    let partTypes: Record<string, string> = {};
    const applyTextVersions = async (staged: boolean): Promise<void> => {
      if (!policy) return;
      const files = (prev?.files ?? []).map((f, i) => ({ path: lakePaths![i]!, datasetId: f.datasetId }));
      const tv = await markTextVersions(conn, {
        versions: textVersions!, files, scope: rankAll ? 'all' : 'hits', staged, key: lakeCols.includes('url_id') ? 'url_id' : 'url', ...(stageKeysOnly && { newText: 'list' as const }),
      });
      textDropped = tv.newRows + tv.oldRows;
      stripFiles = tv.files;
    };
    if (parts.length > 0) {
      // Parts are told apart by their rank in path order: DuckDB's file_index (the position in this sorted list), an
      // integer per row instead of a filename string joined back to a table (≈ 0.3 s CPU less per 1M rows).
      partList = partKeys.map((key, i) => ({ key, path: parts[i]! })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
      const sortedParts = partList.map((p) => p.path);
      // union_by_name: parts of older workers lack later columns (outlink_domains), which read as null beside newer
      // parts; a lake column no part has at all (every part from an older worker) is added as a typed null
      const readParts = `read_parquet(${sqlList(sortedParts)}, file_row_number = true, hive_partitioning = false, union_by_name = true)`;
      const have = new Set((await queryRows(conn, `DESCRIBE SELECT * FROM ${readParts}`)).map((r) => r['column_name'] as string));
      const absent = lakeCols.filter((c) => !have.has(c) && c in PART_SQL_TYPES);
      const partsSql = absent.length === 0 ? readParts
        : `(SELECT *, file_index, ${absent.map((c) => `NULL::${PART_SQL_TYPES[c as keyof typeof PART_SQL_TYPES]} AS ${c}`).join(', ')} FROM ${readParts})`;
      // The parts' distinct domains, streamed sorted: ids are assigned walking the previous dictionary alongside
      // (DomainIds.assignSorted), so no list or map of the domains is held in JS.
      await conn.run('CREATE TEMP TABLE dom (domain VARCHAR, domain64 BIGINT)');
      await appendTo(conn, 'dom', async (app) => {
        for await (const names of streamSortedStrings(reader, `SELECT DISTINCT domain AS v FROM ${partsSql}`)) {
          for (const d of names) {
            const key = ids.assignSorted(d);
            app.appendVarchar(d);
            app.appendBigInt(domain64ToInt64(key));
            app.endRow();
          }
        }
      });
      // each domain's partition, computed here once per domain (in the staging join it would be once per row)
      await conn.run(`CREATE OR REPLACE TEMP TABLE dom AS SELECT domain, domain64, ${partitionSql('domain64', ids.layout, bits)} AS prefix FROM dom`);
      phase('read');
      if (stageKeysOnly) await conn.run(`SET GLOBAL threads = ${keyThreads}`);
      // The new rows are read from their parts once, into `staged` in partition order; a distributed merge stages
      // their keys only, and its stage tasks read the rows.
      const newRows = `SELECT r.* EXCLUDE (file_row_number), (r.file_index + 1)::INTEGER AS _f, r.file_row_number AS _r, dom.domain64, dom.prefix FROM ${partsSql} r JOIN dom USING (domain)`;
      if (stageKeysOnly) {
        const types = new Map((await queryRows(conn, `DESCRIBE SELECT * FROM ${partsSql}`)).map((r) => [r['column_name'] as string, r['column_type'] as string]));
        partTypes = Object.fromEntries(['dataset_id', 'domain', ...stagedColumns(lakeCols)].filter((c, i, all) => all.indexOf(c) === i).map((c) => [c, types.get(c) ?? PART_SQL_TYPES[c as keyof typeof PART_SQL_TYPES]]));
        await stageNewKeys(conn, newRows);
      } else {
        await stageNewRows(conn, newRows, lakeCols, opts.dropText ?? false, { files: sortedParts, tmpDir: tmp, ...(opts.stagePassBytes !== undefined && { passBytes: opts.stagePassBytes }) });
      }
      rowsIn = Number((await (await conn.runAndReadAll(`SELECT sum(num_rows) FROM parquet_file_metadata(${sqlList(parts)})`)).getRowsJS())[0]![0]);
      // Nothing reads the parts after staging: local copies of a remote store's parts go now.
      await inputs.release(partKeys);
      phase('domains');
      lakePaths = await inputs.fetch(lakeKeys);
      newCollisions = await resolveCollisions(conn, lakePaths, collisions, lakeCols.includes('url_id'), reader);
      phase('collisions');
      const affected = (await queryRows(conn, 'SELECT dataset_id AS d, prefix AS p, count(*) AS n FROM staged GROUP BY 1, 2 ORDER BY 1, 2')).map((r) => ({
        datasetId: Number(r['d']), prefix: r['p'] as string, rows: Number(r['n']),
      }));
      // The collision check needed every lake file; only the runs of partitions receiving rows are read again
      // (superseded rows are found among them), and the files the content-versions policy rewrites: staged copies of
      // the others go once the plan is made (an S3 merge would otherwise hold the whole lake on local disk until the end).
      const candidates = affected.flatMap((a) => runsOf.get(partitionKey(a)) ?? []);
      const oldOf = new Map<string, OldLakeFile>(candidates.map((f) => [f.key, oldFileOf(f)]));
      await dropSuperseded(conn, [...oldOf.values()], lakeCols.includes('url_id') ? 'url_id' : 'url');
      await applyTextVersions(true);
      await conn.run('DROP TABLE IF EXISTS lake_hits');
      await conn.run('DROP TABLE IF EXISTS lake_hit_files');
      const losing = new Set((await queryRows(conn, 'SELECT DISTINCT _f FROM lose_old')).map((r) => Number(r['_f'])));
      // New rows per partition once de-duplication has deleted the losers: a partition whose new rows all lost (a
      // recapture older than the lake's row) gets no file, and the run policy weighs what is really written.
      const left = new Map((await queryRows(conn, 'SELECT dataset_id AS d, prefix AS p, count(*) AS n FROM staged GROUP BY 1, 2')).map((r) => [
        partitionKey({ datasetId: Number(r['d']), prefix: r['p'] as string }), Number(r['n']),
      ]));
      // Each partition's new rows become one new file; which of its runs that file folds in is the run policy's
      // (runsToFold). Runs left alone are carried over by key, their staged copies released now.
      plan = affected.map((p) => {
        const a = { ...p, rows: left.get(partitionKey(p)) ?? 0 };
        const runs = (runsOf.get(partitionKey(a)) ?? []).map((f) => oldOf.get(f.key)!);
        const fold = runsToFold(runs.map((r) => r.rows), a.rows, runs.flatMap((r, i) => (losing.has(r.fileId) ? [i] : [])), maxRuns);
        return { a, fold: runs.filter((_, i) => fold.has(i)), keep: runs.filter((_, i) => !fold.has(i)) };
      }).filter((p) => p.a.rows > 0 || p.fold.length > 0);
      if (stageKeysOnly) await conn.run('SET GLOBAL threads = 1');
    } else {
      // nothing staged: the folds below skip no old row
      await conn.run('CREATE TEMP TABLE lose_old (_f INTEGER, _r BIGINT)');
      if (rankAll) {
        lakePaths = await inputs.fetch(lakeKeys);
        await applyTextVersions(false);
      }
    }
    // The files holding rows whose text the policy drops: a file this merge rewrites anyway drops them, and so does one
    // where they are at least STRIP_NOW_SHARE of its rows (folded by its partition's new file, or by a file of its own
    // in a partition receiving no rows; the partition's other runs stay, unless compacting). Any other file keeps those
    // texts for now — readers hide them (core textKept), a compaction drops them — so a crawl merged in many passes
    // does not rewrite the older crawls' files at every pass.
    if (stripFiles.size > 0) {
      const folding = new Set(plan.flatMap((p) => p.fold.map((o) => o.fileId)));
      const byPartition = new Map<string, LakeFileEntry[]>();
      for (const [id, n] of stripFiles) {
        const f = prev!.files[-id - 1]!;
        if (!compact && !folding.has(id) && n < STRIP_NOW_SHARE * f.rows) continue;
        byPartition.set(partitionKey(f), [...(byPartition.get(partitionKey(f)) ?? []), f]);
      }
      for (const [pk, files] of byPartition) {
        const strip = new Set(files.map((f) => f.key));
        const p = plan.find((q) => partitionKey(q.a) === pk);
        if (p !== undefined) {
          p.fold.push(...p.keep.filter((o) => strip.has(o.key)));
          p.keep = p.keep.filter((o) => !strip.has(o.key));
        } else {
          const runs = (runsOf.get(pk) ?? []).map(oldFileOf);
          plan.push({ a: { datasetId: files[0]!.datasetId, prefix: files[0]!.prefix, rows: 0 }, fold: compact ? runs : runs.filter((o) => strip.has(o.key)), keep: [] });
        }
      }
    }
    if (lakePaths !== null) {
      // a written partition's facts read the runs it keeps too: those copies stay until its group is written
      const planned = new Set(plan.flatMap((p) => [...p.fold, ...(facts ? p.keep : [])].map((r) => r.key)));
      await inputs.release(lakeKeys.filter((k) => !planned.has(k)));
    }
    // Compaction: every other partition with more than one run is folded into one file too (no new rows).
    if (compact) {
      const written = new Set(plan.map((p) => partitionKey(p.a)));
      const extra = compactable.filter((runs) => !written.has(partitionKey(runs[0]!)));
      const paths = await inputs.fetch(extra.flat().map((f) => f.key));
      let k = 0;
      for (const runs of extra) {
        // their ids as strip_old names them (no lose_old row names a file of a partition receiving no rows)
        const fold = runs.map((f) => oldLakeFile(f, paths[k++]!, lakeFileId(fileNo.get(f.key)!)));
        plan.push({ a: { datasetId: runs[0]!.datasetId, prefix: runs[0]!.prefix, rows: 0 }, fold, keep: [] });
      }
    }
    for (const p of plan) for (const o of p.fold) o.stripText = stripFiles.has(o.fileId);
    if (plan.length > 0) {
      // Partitions are written in groups of about passRows rows (old + new): each group's files are uploaded and
      // their local copies (and staged inputs) deleted before the next, so local disk holds one group at a time.
      const passRows = opts.passRows ?? DEFAULT_PASS_ROWS;
      const groups: LakeTarget[][] = [];
      let groupRows = 0;
      for (const { a, fold, keep } of plan) {
        for (const o of fold) replaced.add(o.key);
        if (groups.length === 0 || groupRows >= passRows) {
          groups.push([]);
          groupRows = 0;
        }
        groups.at(-1)!.push({ datasetId: a.datasetId, prefix: a.prefix, key: indexLayout.lakeFile(a.datasetId, a.prefix, version), old: fold, fresh: a.rows > 0, keep: facts ? keep : [] });
        groupRows += a.rows + fold.reduce((s, o) => s + o.rows, 0);
      }
      // a distributed merge's stage tasks write each group's new rows (merge-stage.ts), before its lake tasks run
      let stagedFrom: Map<number, string[]> | null = null;
      if (stageKeysOnly && groups.some((g) => g.some((t) => t.fresh))) {
        await lease.check();
        stagedFrom = await stageInTasks(conn, store, opts.tasks!, taskRun!, {
          // stage tasks of twice a lake group's rows: half as many files (tasks × groups) for the lake tasks to read
          parts: partList, types: partTypes, columns: lakeCols, dropText: opts.dropText ?? false, rowsPerTask: 2 * passRows, tmpDir: tmp,
          groups: groups.flatMap((g, n) => g.filter((t) => t.fresh).map((t) => ({ datasetId: t.datasetId, prefix: t.prefix, n }))),
        });
      }
      // de-duplication, the plan and (distributed) the stage tasks
      phase('stage');
      let group: LakeTarget[] = [];
      const tasks: MergeTask[] = [];
      // the tasks build their files' search shards as well (search-index.ts): the coordinator builds the rest
      const searchInTasks = withSearch ? { languages: lakeCols.includes('languages') } : null;
      // each task goes to the runner once its inputs are in the store: the merge-workers start on it while the next
      // group is exported
      const feed = new Channel<MergeTask>();
      const running = taskRun === null ? null : opts.tasks!.run(feed);
      // a failure is taken when the results are awaited, below: not an unhandled rejection meanwhile
      running?.catch(() => undefined);
      const flush = async (): Promise<void> => {
        if (group.length === 0) return;
        await lease.check();
        if (taskRun !== null) {
          // the group goes to a merge-worker: its inputs into the store, its runs' local copies released here
          const task = await exportMergeTask(conn, store, taskRun, tasks.length, group, {
            columns: lakeCols, rowGroupSize: opts.rowGroupSize, compressionLevel: zstdLevel, parquetVersion: opts.parquetVersion ?? 'V2', dropText: opts.dropText ?? false,
            facts: facts ? factsColumnsOf(lakeCols) : undefined, search: searchInTasks,
            ...(stagedFrom !== null && { stagedFrom: stagedFrom.get(tasks.length) ?? [] }),
          }, tmp);
          tasks.push(task);
          feed.push(task);
          await inputs.release(group.flatMap((g) => [...g.old, ...(g.keep ?? [])].map((o) => o.key)));
          group = [];
          return;
        }
        const lake = await writeLake(conn, store, {
          targets: group, columns: lakeCols, rowGroupSize: opts.rowGroupSize,
          compressionLevel: zstdLevel, parquetVersion: opts.parquetVersion ?? 'V2', tmpDir: tmp, dropText: opts.dropText ?? false, ...(cache && { cache }),
          ...(facts && { facts: factsColumnsOf(lakeCols) }),
        });
        await inputs.release(group.flatMap((g) => [...g.old, ...(g.keep ?? [])].map((o) => o.key)));
        // the runs just folded are not in the new version: their cached copies go now, not after the publish, so the
        // cache never holds both the old and the rewritten lake
        for (const o of group.flatMap((g) => g.old)) {
          const e = listed.get(o.key);
          if (cache && e) await cache.drop(e);
        }
        // a loop, not push(...): one pass can hold hundreds of thousands of postings (one-URL domains), beyond the
        // engine's argument limit
        for (const e of lake.entries) newFiles.push(e);
        group = [];
      };
      try {
        for (const g of groups) {
          group = g;
          await flush();
        }
        feed.close();
      } catch (err) {
        feed.fail(err);
        throw err;
      }
      if (running !== null) {
        // every group's result, in group order: the files and postings are then what the in-process writes leave
        const byId = new Map((await running).flatMap((r) => ('kind' in r ? [] : [[r.id, r] as const])));
        for (const t of tasks) {
          const r = byId.get(t.id);
          if (r === undefined) throw new CcpError('CCP_ERR_MERGE_TASK', 'a merge task reported no result', { detail: { task: t.id } });
          for (const e of await loadMergeTaskResult(conn, inputs, r)) newFiles.push(e);
          for (const e of r.search ?? []) builtSearch.push(e);
        }
      }
      phase('lake');
    }
    // Shards are written as the index build completes them, the rest of the version's files after it.
    await lease.check();
    const out = new VersionWriter(store, version);
    let shardNo = 0;
    /** The shard files written, as the cache keeps them for the next merge. */
    const shardFiles: CachedObject[] = [];
    const writeShard = async (b: ShardBuild): Promise<void> => {
      const n = shardFileNames(shardNo++);
      // each file built, written and dropped before the next (one shard file in memory at a time)
      const files: [string, () => Buffer][] = [[n.domains, () => b.domains()], [n.bitmaps, () => b.bitmaps()], [n.postings, () => b.postings()]];
      if (b.facts !== undefined) files.push([factsFileName(shardNo - 1), b.facts]);
      for (const [name, build] of files) {
        const bytes = build();
        await out.put(name, bytes);
        if (cache) shardFiles.push(await cache.putBytes(indexLayout.versionFile(version, name), bytes));
      }
    };
    // each file written gets its positions (orderings.ts); a dataset of files from before positions gets them all anew
    const keptFiles = (prev?.files ?? []).filter((f) => !replaced.has(f.key)).map((f) => ({ ...f }));
    const renumbered = assignPositions(prev?.files ?? [], keptFiles, newFiles);
    // the new version's lake files in files.json order (by key)
    const files = [...keptFiles, ...newFiles].sort((a, b) => (a.key < b.key ? -1 : 1));
    // The secondary orderings, the link graph and the search shards (merge-derived.ts) are built beside the domain
    // index, on a connection of their own: they read the lake files, the index build streams `conn` in JS — two
    // cores where one waited for the other.
    derivedConn = await db!.connect();
    const derived = writeDerived({
      conn: derivedConn, db: db!, store, out, version, files, prev, newFiles, replaced, renumbered, listed, inputs, tmp, lakeCols, builtSearch,
      strip: await stripRowsOf(conn, prev, stripFiles, replaced, withSearch),
      orderings: opts.orderings !== false, links: opts.links !== false, search: withSearch, ...(opts.onPhase && { onPhase: opts.onPhase }),
    });
    const [built] = await settleAll([buildIndex(conn, prev, prevIndex?.index ?? null, replaced, files, newFiles, writeShard, facts, opts.indexShards), derived]);
    if (prevIndex !== null) await inputs.release(prevIndex.keys);
    for (const k of prevIndex?.keys ?? []) {
      const e = listed.get(k);
      if (cache && e) await cache.drop(e); // the previous shards, read: the new ones are cached
    }
    const status: VersionStatus = {
      version, parent: prev?.toc.version ?? null, createdAt, batchesMerged: markers.length, batchesTotal: merged.size + markers.length, rowsIn,
      urls: built.urls, domains: built.domains, lakeFiles: built.files.length, lakeBytes: built.files.reduce((s, f) => s + f.bytes, 0),
      rewrittenFiles: newFiles.length, collisions: Object.keys(collisions).length, partitionBits: bits, ...(textVersions !== undefined && { textVersions }), lakeColumns: columnSet, lakeColumnList: [...lakeCols], ...nextInboxState(prev?.status, scan, withoutEntry, scanAt), datasets: built.datasets,
      ...(await ingestTotalsOf(store, prev?.status ?? null, merged, markers).then((ingested) => ({ ingested }), () => ({}))), mergeMs: Date.now() - t0,
    };
    if (shardNo !== built.shardSizes.length) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'index shards written differ from the shards built', { written: shardNo, built: built.shardSizes.length });
    await out.put(SHARD_TABLE, jsonBytes({ v: 1, shards: built.shardSizes.map((domains) => ({ domains })) }));
    await out.put('files.json', jsonBytes(built.files));
    await out.put('domain-ids.json', jsonBytes(ids.snapshot()));
    await out.put('collisions.json', jsonBytes(collisions));
    await out.put('batches.json', merged.with(markers.map(([k]) => k)).toBytes());
    await out.put(TOP_DOMAINS_FILE, jsonBytes(built.top));
    await out.put('status.json', jsonBytes(status));
    const tocCrc32 = await out.finish(prev?.toc.version ?? null, createdAt);
    phase('index');
    const next: IndexManifest = { v: 1, current: version, versions: [...manifest.versions, { version, createdAt, tocCrc32 }], retired: [...manifest.retired] };
    // retired now, at the flip (not when this merge began): the grace period counts from when readers can see the
    // new version, however long the merge took
    const retiredAt = now().toISOString();
    while (next.versions.length > Math.max(1, opts.keepVersions)) next.retired.push({ version: next.versions.shift()!.version, retiredAt });
    await lease.check();
    await store.put(indexLayout.manifest(), jsonBytes(next));
    // the cache keeps what the next merge reads: this version's lake files and shards (best effort: what cannot be
    // deleted now is retried by the next merge; entries are never served for other bytes)
    await cache?.retain([...built.files.map((f) => ({ key: f.key, bytes: f.bytes, crc32: f.crc32 })), ...shardFiles]).catch(() => 0);
    // every entry listed names a batch this version holds (merged before or folded now) or one that is gone
    const gc = await collectQuietly(store, next, now(), opts.graceMs, inboxDone());
    phase('publish');
    return {
      version, published: true, batches: markers.length, rowsIn, urls: built.urls, domains: built.domains, rewrittenFiles: newFiles.length,
      rowsWritten: newFiles.reduce((n, f) => n + f.rows, 0), lakeFiles: built.files.length, newCollisions, textDropped, foreignBatches: foreign.length, scan, withoutInbox: withoutEntry, ...gc, ms: Date.now() - t0,
    };
  } catch (err) {
    // A damaged input (a CRC or format check, or DuckDB refusing a Parquet file) may be a cached copy gone bad on
    // local disk, which would fail every merge from now on: the cache is emptied, and the next merge downloads
    // afresh. Store and configuration errors keep it.
    const damaged = !(err instanceof CcpError) || err.code === 'CCP_ERR_INDEX_CRC' || err.code === 'CCP_ERR_INDEX_FORMAT';
    if (cache && damaged) await cache.retain([]).catch(() => 0);
    throw err;
  } finally {
    derivedConn?.closeSync();
    side?.closeSync();
    opened?.closeSync();
    db?.closeSync();
    await root.close();
    // the tasks' inputs and results (the lake files they wrote are the version's, or GC's if it never publishes)
    if (taskRun !== null) await deletePrefix(store, mergeTaskLayout.prefix(taskRun)).catch(() => undefined);
  }
}

async function deletePrefix(store: ObjectStore, prefix: string): Promise<void> {
  const keys: string[] = [];
  for await (const o of store.list(prefix)) keys.push(o.key);
  for (const k of keys) await store.delete(k);
}

/**
 * Dictionary, bitmaps, postings, files registry and per-dataset counts of the new version: the entries of `prev`
 * whose lake files are kept, merged in dictionary order with the runs of the files just written (table
 * new_postings, streamed sorted by domain). The previous dictionary is walked in place and the new runs come one
 * DuckDB chunk at a time; each shard of the new index is handed to `writeShard` as soon as the next one starts, so
 * memory is one shard's growing files (IndexWriter), not the index's, nor an object per domain; the last one when
 * the walk ends. Returns the shards' sizes for shards.json. With `facts`, each shard gets its facts file: a domain's
 * datasets in table new_facts (the partitions this merge wrote) take those, the others keep the previous version's
 * records byte for byte (none when it had no facts).
 * @throws IndexFormatError when a domain's key differs between the previous version and the new runs
 */
async function buildIndex(
  conn: DuckDBConnection, prev: VersionBase | null, dict: OnDemandDomainIndex | null, replaced: ReadonlySet<string>, files: readonly LakeFileEntry[],
  newFiles: readonly LakeFileEntry[], writeShard: (b: ShardBuild) => Promise<void>, facts: boolean, limits?: ShardLimits,
) {
  const fileIdx = new Map(files.map((f, i) => [f.key, i]));
  const w = new IndexWriter((ids) => new RoaringBitmap32(ids).serialize('portable'), limits, { facts });
  const ds = new Map<number, { urlCount: number; domainCount: number }>();
  const top = new TopDomains();
  let urls = 0;
  const drain = async (): Promise<void> => {
    for (const b of w.takeClosed()) await writeShard(b);
  };
  const emit = (name: Uint8Array, d64: bigint, list: Posting[], fresh: readonly FactsRecord[], old: Buffer | null): void => {
    if (list.length === 0) return; // every row of the domain was in replaced files and none came back (cannot happen: rows are only superseded)
    // a dataset's runs in file-key order (older versions first): the order its URLs are paged in
    list.sort((a, b) => a.datasetId - b.datasetId || a.file - b.file);
    // an entry without new facts keeps its records as they are (no decoding: most entries, in a small merge)
    w.add(name, d64, list, !facts ? undefined : fresh.length === 0 ? (old ?? undefined) : factsOfEntry(list, fresh, old));
    let inDataset = 0;
    list.forEach((p, k) => {
      const d = ds.get(p.datasetId) ?? { urlCount: 0, domainCount: 0 };
      d.urlCount += p.rows;
      if (k === 0 || list[k - 1]!.datasetId !== p.datasetId) d.domainCount += 1;
      ds.set(p.datasetId, d);
      urls += p.rows;
      inDataset += p.rows;
      // the domain's count in this dataset is complete at its last run: a candidate for the largest domains
      if (k === list.length - 1 || list[k + 1]!.datasetId !== p.datasetId) {
        top.add(p.datasetId, () => Buffer.from(name).toString('utf8'), inDataset);
        inDataset = 0;
      }
    });
  };
  const kept = (i: number): Posting[] =>
    dict!.postings(i).flatMap((p) => {
      const key = prev!.files[p.file]!.key;
      return replaced.has(key) ? [] : [{ ...p, file: fileIdx.get(key)! }];
    });
  let i = 0;
  // the previous entries before `name` (all that are left with null); a walk can pass whole shards (new domains far
  // apart, or none), so completed ones are written as it goes
  const upTo = async (name: Buffer | null): Promise<void> => {
    for (; dict !== null && i < dict.size && (name === null || Buffer.compare(dict.nameBytes(i), name) < 0); i++) {
      emit(dict.nameBytes(i), dict.d64(i), kept(i), [], facts ? dict.facts(i) : null);
      if (w.closedPending) await drain();
    }
  };
  const flush = async (name: Buffer, d64: bigint | null, list: Posting[], fresh: FactsRecord[]): Promise<void> => {
    await upTo(name);
    let old: Buffer | null = null;
    if (dict !== null && i < dict.size && Buffer.compare(dict.nameBytes(i), name) === 0) {
      // a domain with new facts and no new run (its partition was written, its runs kept) takes the previous key
      if (d64 !== null && dict.d64(i) !== d64) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'a domain changed its key between versions', { domain: name.toString('utf8') });
      d64 = dict.d64(i);
      list.push(...kept(i));
      if (facts) old = dict.facts(i);
      i++;
    }
    if (d64 === null) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'a domain has facts but no rows', { domain: name.toString('utf8') });
    emit(name, d64, list, fresh, old);
    if (w.closedPending) await drain();
  };
  // the new runs name their file by its number in `files` (a join here), not by its key: a string per run crossing
  // from DuckDB to JS cost ≈ 1 µs
  await conn.run('CREATE OR REPLACE TEMP TABLE index_files (file_key VARCHAR, file INTEGER)');
  await appendTo(conn, 'index_files', (app) => {
    for (const f of newFiles) {
      app.appendVarchar(f.key);
      app.appendInteger(fileIdx.get(f.key)!);
      app.endRow();
    }
  });
  let group: { domain: string; d64: bigint | null; list: Posting[]; fresh: FactsRecord[] } | null = null;
  // the new runs and the new facts (kind 1) in one stream, by domain then dataset
  const nulls = FACTS_SELECT.split(',').map(() => 'NULL').join(', ');
  const runs = `SELECT domain, domain64, dataset_id, 0 AS kind, file, first, rows, ${nulls} FROM new_postings LEFT JOIN index_files USING (file_key)
    ${facts ? `UNION ALL SELECT domain, NULL, dataset_id, 1, NULL, NULL, NULL, ${FACTS_SELECT} FROM new_facts` : ''} ORDER BY domain, dataset_id, kind`;
  for await (const [domains, d64s, datasets, kinds, fileNos, firsts, rows, ...factCols] of streamColumns(conn, runs)) {
    for (let k = 0; k < domains!.length; k++) {
      const domain = domains![k] as string;
      if (group === null || group.domain !== domain) {
        if (group !== null) await flush(Buffer.from(group.domain, 'utf8'), group.d64, group.list, group.fresh);
        group = { domain, d64: null, list: [], fresh: [] };
      }
      if (Number(kinds![k]) === 1) {
        group.fresh.push(factsRecordOf(Number(datasets![k]), factCols.map((c) => c[k])));
        continue;
      }
      group.d64 ??= domain64FromInt64(d64s![k] as bigint);
      const file = fileNos![k] as number | null;
      if (file === null) throw new IndexFormatError('CCP_ERR_INDEX_FORMAT', 'a new posting names a lake file this merge did not write', { domain });
      group.list.push({ datasetId: Number(datasets![k]), file, first: Number(firsts![k]), rows: Number(rows![k]) });
    }
  }
  if (group !== null) await flush(Buffer.from(group.domain, 'utf8'), group.d64, group.list, group.fresh);
  await upTo(null);
  for (const b of w.shards()) await writeShard(b); // what is left: the shard in progress (and any not drained)
  return {
    files, urls, domains: w.size, shardSizes: w.shardSizes(), top: top.toFile(),
    datasets: [...ds].sort((a, b) => a[0] - b[0]).map(([datasetId, c]) => ({ datasetId, ...c })),
  };
}

/**
 * A domain's facts records for the new version, in dataset order, for the datasets of its postings `list`: the fresh
 * one where this merge computed it (its partition was written), else the previous version's record copied byte for
 * byte (`old`: the entry's records there; none when it had no facts, so that dataset has none).
 */
function factsOfEntry(list: readonly Posting[], fresh: readonly FactsRecord[], old: Buffer | null): Buffer {
  // nothing to carry over (a domain new to the index, or a version before facts): the fresh records, already in dataset order
  if (old === null || old.length === 0) return fresh.length === 1 ? encodeFactsRecord(fresh[0]!) : Buffer.concat(fresh.map(encodeFactsRecord));
  const byFresh = new Map(fresh.map((r) => [r.datasetId, r]));
  const byOld = new Map(old === null || old.length === 0 ? [] : decodeFactsRecords(old).map((x) => [x.record.datasetId, old.subarray(x.start, x.end)]));
  const parts: Buffer[] = [];
  let prevDataset = -1;
  for (const p of list) {
    if (p.datasetId === prevDataset) continue;
    prevDataset = p.datasetId;
    const f = byFresh.get(p.datasetId);
    const b = f !== undefined ? encodeFactsRecord(f) : byOld.get(p.datasetId);
    if (b !== undefined) parts.push(b);
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}
