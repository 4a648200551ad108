/**
 * The index format, one import for every reader and writer: the version's JSON files and keys (version-format.ts),
 * the shard files' binary layouts (shard-layout.ts), the domain index over them (domain-index.ts) and its writer
 * (index-writer.ts). docs/index-format.md describes the whole design.
 */
export * from './version-format';
export * from './shard-layout';
export * from './domain-index';
export * from './index-writer';
