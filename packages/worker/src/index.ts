export * from './process-record';
export * from './process-batch';
export * from './run-worker';
export * from './store-identity';
export * from './metrics';
export * from './main';
export * from './process-warc-job';
