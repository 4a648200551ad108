import { z } from 'zod';
import { CcpError } from '../errors';

/** What fills a dataset: a crawl's captures (the batcher) or rows imported from files (`ccpipe import`). */
export const DATASET_KINDS = ['crawl', 'import'] as const;
export type DatasetKind = (typeof DATASET_KINDS)[number];

const DatasetEntrySchema = z.object({
  id: z.number().int().min(0).max(0xffffffff),
  name: z.string().regex(/^[A-Za-z0-9._-]+$/),
  crawl: z.string().nullable(),
  createdAt: z.string(),
  /** Absent in entries written before imports: a crawl. */
  kind: z.enum(DATASET_KINDS).optional(),
  /** An import's input file names (base names, in the order first imported), each once. */
  sources: z.array(z.string()).optional(),
});
/** One dataset: a named selection of captures (by default a crawl under the default filter), or an import. */
export type DatasetEntry = z.infer<typeof DatasetEntrySchema>;

/** A dataset's kind (entries written before imports are crawls). */
export const kindOf = (d: DatasetEntry): DatasetKind => d.kind ?? 'crawl';

/** A data store's identity: written once into its registry, named by every batch published for the store. */
const StoreIdSchema = z.string().regex(/^[A-Za-z0-9-]{8,64}$/);

const RegistrySchema = z.object({
  v: z.literal(1),
  /**
   * The store's identity, written once by the first batcher (registries written before it have none until a batcher
   * adds it): a batch names it, so a worker or merge over another store refuses the batch instead of filing its rows
   * under whatever dataset has the same id there.
   */
  storeId: StoreIdSchema.optional(),
  datasets: z.array(DatasetEntrySchema),
});
/** The dataset registry as stored (`datasets.json`). Ids are stable forever once given. */
export type DatasetRegistry = z.infer<typeof RegistrySchema>;

/** An empty registry. */
export const emptyDatasetRegistry = (): DatasetRegistry => ({ v: 1, datasets: [] });

/** Parses a stored registry. Throws CcpError CCP_ERR_DATASET_REGISTRY when it is corrupt (never guess ids). */
export function parseDatasetRegistry(bytes: Uint8Array): DatasetRegistry {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (cause) {
    throw new CcpError('CCP_ERR_DATASET_REGISTRY', 'dataset registry is not JSON', { cause });
  }
  const parsed = RegistrySchema.safeParse(json);
  if (!parsed.success) throw new CcpError('CCP_ERR_DATASET_REGISTRY', 'dataset registry does not match its schema');
  const ids = new Set(parsed.data.datasets.map((d) => d.id));
  const names = new Set(parsed.data.datasets.map((d) => d.name));
  if (ids.size !== parsed.data.datasets.length || names.size !== parsed.data.datasets.length) {
    throw new CcpError('CCP_ERR_DATASET_REGISTRY', 'dataset registry has a duplicate id or name');
  }
  return parsed.data;
}

/**
 * The registry with a store id (`makeId()` when it has none yet). Pure but for `makeId`; the batcher, the registry's
 * one writer, stores the result when `added`.
 */
export function withStoreId(reg: DatasetRegistry, makeId: () => string): { registry: DatasetRegistry; storeId: string; added: boolean } {
  if (reg.storeId !== undefined) return { registry: reg, storeId: reg.storeId, added: false };
  const storeId = StoreIdSchema.parse(makeId());
  return { registry: { v: 1, storeId, datasets: reg.datasets }, storeId, added: true };
}

/** What a batch says of where its rows belong: the store it was published for and its dataset, by name and id. */
export interface BatchIdentity {
  /** The store id (absent in batches of a batcher older than store ids). */
  store?: string | undefined;
  dataset: string;
  datasetId: number;
}

/** Why a batch does not belong in a store: its code (a DLQ reason, a metric label) and a message for the log. */
export interface ForeignBatch {
  /** `CCP_ERR_BATCH_FOREIGN_STORE`: published for another store; `CCP_ERR_BATCH_FOREIGN_DATASET`: its dataset id means another dataset (or none) here. */
  code: 'CCP_ERR_BATCH_FOREIGN_STORE' | 'CCP_ERR_BATCH_FOREIGN_DATASET';
  message: string;
}

/**
 * Why the rows of a batch (or a batch marker) do not belong in the store whose registry is `reg` (null: the store has
 * none), or null when they do: the batch names another store, or its dataset id means another dataset here (or
 * nothing). A batch without a store id is checked on its dataset alone. Pure.
 */
export function foreignBatchReason(reg: DatasetRegistry | null, b: BatchIdentity): ForeignBatch | null {
  const check = 'the batcher and this process use different data stores (check --data / CCPIPE_DATA of both)';
  if (reg === null) {
    return { code: 'CCP_ERR_BATCH_FOREIGN_STORE', message: `this data store has no dataset registry, so no batcher published for it: ${check}` };
  }
  if (b.store !== undefined && reg.storeId !== undefined && b.store !== reg.storeId) {
    return { code: 'CCP_ERR_BATCH_FOREIGN_STORE', message: `the batch was published for data store ${b.store}, this is ${reg.storeId}: ${check}` };
  }
  const here = reg.datasets.find((d) => d.id === b.datasetId);
  if (here === undefined) {
    return { code: 'CCP_ERR_BATCH_FOREIGN_DATASET', message: `dataset id ${b.datasetId} (${b.dataset}) is not in this data store's registry: ${check}` };
  }
  if (here.name !== b.dataset) {
    return { code: 'CCP_ERR_BATCH_FOREIGN_DATASET', message: `dataset id ${b.datasetId} is ${here.name} in this data store, the batch says ${b.dataset}: ${check}` };
  }
  return null;
}

/** Serializes a registry for storage. */
export function serializeDatasetRegistry(reg: DatasetRegistry): Uint8Array {
  return Buffer.from(JSON.stringify(reg, null, 1) + '\n', 'utf8');
}

/**
 * The dataset named `name`, adding it with the next free id (1, 2, …) when absent. Returns a new registry when one
 * was added, or when an import names files its entry does not list yet (`added` then says whether the entry is new,
 * `changed` whether the registry is). Never changes an id, a name or a kind. Pure; idempotent for the same arguments.
 * @throws CcpError CCP_ERR_DATASET_KIND when the dataset exists as the other kind (an import into a crawl's dataset,
 * or a crawl into an import's): its rows would mix what the API describes as one source
 */
export function ensureDatasetIn(
  reg: DatasetRegistry,
  name: string,
  crawl: string | null,
  nowIso: string,
  opts: { kind?: DatasetKind; sources?: readonly string[] } = {},
): { registry: DatasetRegistry; entry: DatasetEntry; added: boolean; changed: boolean } {
  const kind = opts.kind ?? 'crawl';
  const found = reg.datasets.find((d) => d.name === name);
  if (found) {
    if (kindOf(found) !== kind) {
      throw new CcpError('CCP_ERR_DATASET_KIND', `dataset ${name} is ${kindOf(found) === 'crawl' ? 'a crawl' : 'an import'}: ${kind === 'import' ? 'import into another dataset name' : 'index the crawl under another dataset name'}`);
    }
    const more = (opts.sources ?? []).filter((s) => !(found.sources ?? []).includes(s));
    if (more.length === 0) return { registry: reg, entry: found, added: false, changed: false };
    const entry = { ...found, sources: [...(found.sources ?? []), ...more] };
    return { registry: { ...reg, datasets: reg.datasets.map((d) => (d.id === found.id ? entry : d)) }, entry, added: false, changed: true };
  }
  const id = reg.datasets.reduce((m, d) => Math.max(m, d.id), 0) + 1;
  const entry = DatasetEntrySchema.parse({
    id, name, crawl, createdAt: nowIso, ...(kind === 'import' && { kind, sources: [...new Set(opts.sources ?? [])] }),
  });
  return { registry: { ...reg, datasets: [...reg.datasets, entry] }, entry, added: true, changed: true };
}
