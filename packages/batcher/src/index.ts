export * from './batcher';
export * from './checkpoint';
export * from './cluster-idx-source';
export * from './datasets';
export * from './lines';
export * from './main';
export * from './plan-blocks';
export * from './targets';
