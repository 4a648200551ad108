export * from './service';
export * from './range-reader';
export * from './store';
export * from './queue';
export * from './parquet';
export {
  ExtractionPool,
  defaultExtractWorkerPath,
  type ExtractionPoolOptions,
  type ExtractionPoolStats,
} from './extract-pool';
export type { ExtractReady, ExtractReply, ExtractWorkerConfig, WireError } from './extract-messages';
