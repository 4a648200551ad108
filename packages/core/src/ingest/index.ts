export * from './batch';
export * from './dataset-registry';
export * from './layout';
export * from './part-order';
export * from './queue-action';
export * from './retry-policy';
export * from './warc-path';
export * from './warc-job';
