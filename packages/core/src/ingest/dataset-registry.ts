import { z } from 'zod';
import { CcpError } from '../errors';

const DatasetEntrySchema = z.object({
  id: z.number().int().min(0).max(0xffffffff),
  name: z.string().regex(/^[A-Za-z0-9._-]+$/),
  crawl: z.string().nullable(),
  createdAt: z.string(),
});
/** One dataset: a named selection of captures (by default a crawl under the default filter). */
export type DatasetEntry = z.infer<typeof DatasetEntrySchema>;

const RegistrySchema = z.object({ v: z.literal(1), datasets: z.array(DatasetEntrySchema) });
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

/** Serializes a registry for storage. */
export function serializeDatasetRegistry(reg: DatasetRegistry): Uint8Array {
  return Buffer.from(JSON.stringify(reg, null, 1) + '\n', 'utf8');
}

/**
 * The dataset named `name`, adding it with the next free id (1, 2, …) when absent. Returns a new registry when one
 * was added; never changes an existing entry. Pure; idempotent for a given name.
 */
export function ensureDatasetIn(
  reg: DatasetRegistry,
  name: string,
  crawl: string | null,
  nowIso: string,
): { registry: DatasetRegistry; entry: DatasetEntry; added: boolean } {
  const found = reg.datasets.find((d) => d.name === name);
  if (found) return { registry: reg, entry: found, added: false };
  const id = reg.datasets.reduce((m, d) => Math.max(m, d.id), 0) + 1;
  const entry = DatasetEntrySchema.parse({ id, name, crawl, createdAt: nowIso });
  return { registry: { v: 1, datasets: [...reg.datasets, entry] }, entry, added: true };
}
