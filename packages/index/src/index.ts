export { DEFAULT_LAKE_ZSTD_LEVEL, DEFAULT_MAX_RUNS, ingestTotals, pendingMerge, runMerge, type MergeOptions, type MergeResult, type PendingMerge } from './run-merge';
export { openIndexSource, type IndexSourceOptions, type LakeIndexSource } from './index-source';
export { LakeIndexView } from './lake-index-view';
export { collectGarbage, versionSeq } from './gc';
export { DomainIds, partitionOf, type DomainIdsSnapshot } from './domain-ids';
export { LAKE_COLUMNS, LAKE_API_COLUMNS, LAKE_LEAN_COLUMNS, lakeColumnsOf, type LakeColumnSet } from './lake-write';
export { hasLocalPath, type LocalPathStore } from './local-inputs';
export { loadVersion, readManifest, type LoadedVersion } from './version-files';
export {
  IndexFormatError, indexLayout, INDEX_FILES, DomainDictionary, DomainIndex, crcOf,
  type IndexManifest, type VersionToc, type LakeFileEntry, type VersionStatus, type IngestTotals, type Posting, type IndexFileName, type ShardLimits,
} from './format';
export { ParquetLakeReader, type ParquetLakeReaderOptions, type LakeReads, type LakeUrlRow, type LakeCaptureRow } from './lake-reader';
export { buildLocator, decodeLocator, type LakeLocator } from './lake-locator';
export { BatchSet } from './batch-set';
export { verifyVersion, type VerifyProblem, type VerifyResult } from './verify';
export { initZstd, type ZstdDecoder } from './zstd';
export { mergeTaskLayout, runMergeTask, type AnyMergeTask, type AnyMergeTaskResult, type MergeTask, type MergeTaskResult, type MergeTaskRunner } from './merge-task';
export { runStageTask, type StageTask, type StageTaskResult } from './merge-stage';
export { decodeMergeTask, inProcessTaskRunner, queueTaskRunner, runAnyMergeTask, startMergeWorker, type MergeTaskPublisher, type MergeWorkerEvents, type RunningMergeWorker } from './merge-task-queue';
