export * from './process-record';
export * from './process-batch';
export * from './run-worker';
