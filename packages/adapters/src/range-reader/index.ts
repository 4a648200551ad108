export * from './errors';
export * from './range-checks';
export * from './adaptive-limiter';
export * from './system-clock';
export * from './undici-range-reader';
export * from './fs-range-reader';
export * from './memory-range-reader';
