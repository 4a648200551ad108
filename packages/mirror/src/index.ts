export { serveMirror, type ServeMirrorOptions, type MirrorServer } from './serve/serve-mirror';
export { decideRange, type RangeDecision } from './serve/byte-range';
export { requestTargetToSegments } from './serve/safe-path';
export { slowDownBody, SLOW_DOWN_RETRY_AFTER_SECONDS, type MirrorFaults } from './serve/faults';
export { buildMirror, type BuildMirrorOptions, type BuildMirrorSummary } from './build/build-mirror';
export { cdxRecordFor, sniffMime, base32, type CdxSkipReason, type RecordLocation } from './build/cdx-fields';
export { detectLanguages, type LanguageDetectionOptions } from './build/detect-languages';
export { visibleTextBlocks } from './build/visible-text';
export { mergeCollInfo, shardRanges, type CollInfoEntry } from './build/layout';
