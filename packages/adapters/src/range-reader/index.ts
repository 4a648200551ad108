export { FetchError, FetchStatusError, AbortedError, ReaderClosedError, type FetchErrorCode } from './errors';
export { DEFAULT_MAX_READ_BYTES, parseContentRange, type ContentRange } from './range-checks';
export { AdaptiveLimiter, type AdaptiveLimiterOptions, type Permit } from './adaptive-limiter';
export { systemClock } from './system-clock';
export { UndiciRangeReader, type UndiciRangeReaderOptions, type RangeReaderObserver } from './undici-range-reader';
export { FsRangeReader, type FsRangeReaderOptions } from './fs-range-reader';
export { MemoryRangeReader, type MemoryRangeReaderOptions } from './memory-range-reader';
