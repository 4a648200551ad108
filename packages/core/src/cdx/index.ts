export * from './cluster-idx';
export * from './cdx-line';
export * from './zipnum';
