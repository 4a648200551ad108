import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

/**
 * Every file a merge wrote into the directory store `dir` (lake, locators, index versions, orderings, links, search),
 * by path with its bytes: the inputs (batches, inbox, the registry), the lease, the merge tasks' folder and the files
 * that hold a time (status.json, version.json, the manifest) left out — what two merges of the same inputs must write
 * alike, byte for byte.
 */
export async function mergeOutputs(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.set(relative(dir, p), await readFile(p));
    }
  };
  await walk(dir);
  for (const k of [...out.keys()]) {
    if (/^(batches|inbox|datasets\.json|merge-tasks)/.test(k) || /lease/.test(k) || /(^|\/)(status|version|manifest)\.json$/.test(k)) out.delete(k);
  }
  return out;
}

/** The paths whose bytes differ between two {@link mergeOutputs}, and the paths only one has. */
export function outputDifferences(a: ReadonlyMap<string, Buffer>, b: ReadonlyMap<string, Buffer>): string[] {
  const keys = new Set([...a.keys(), ...b.keys()]);
  return [...keys].filter((k) => !(a.get(k)?.equals(b.get(k) ?? Buffer.alloc(0)) ?? false)).sort();
}
