export * from './cluster-idx';
export * from './cdx-line';
export * from './cdx-format';
export * from './zipnum';
export * from './digest';
