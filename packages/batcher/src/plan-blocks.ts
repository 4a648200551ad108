import { blocksForSurtPrefix, type ClusterIdxEntry } from '@ccpipe/core';
import type { TargetSet } from './targets';

/** A CDX block to read: its position in cluster.idx (`ordinal`, 0-based, the batch-id block number) and entry. */
export interface PlannedBlock {
  ordinal: number;
  entry: ClusterIdxEntry;
}

/**
 * The blocks a run reads, in cluster.idx order: every block, or with `targets` only the blocks that can hold keys in
 * a target range (binary search per range; untouched blocks are never fetched), cut to the first `maxBlocks`.
 * The plan depends only on its inputs, so a resumed run plans the same blocks. Pure.
 */
export function planBlocks(entries: readonly ClusterIdxEntry[], opts: { targets?: TargetSet | null; maxBlocks?: number | null }): PlannedBlock[] {
  let ordinals: number[];
  if (opts.targets) {
    const picked = new Set<number>();
    for (const prefix of opts.targets.prefixes()) {
      const { start, end } = blocksForSurtPrefix(entries, prefix);
      for (let i = start; i < end; i++) picked.add(i);
    }
    ordinals = [...picked].sort((a, b) => a - b);
  } else {
    ordinals = entries.map((_, i) => i);
  }
  if (opts.maxBlocks != null) ordinals = ordinals.slice(0, opts.maxBlocks);
  return ordinals.map((ordinal) => ({ ordinal, entry: entries[ordinal]! }));
}

/** The plan's blocks by CDX file, in plan order (a file's blocks are consecutive in cluster.idx). */
export function byShard(plan: readonly PlannedBlock[]): PlannedBlock[][] {
  const out: PlannedBlock[][] = [];
  for (const b of plan) {
    const last = out[out.length - 1];
    if (last !== undefined && last[0]!.entry.shard === b.entry.shard) last.push(b);
    else out.push([b]);
  }
  return out;
}
