export * from './batch';
export * from './queue-action';
export * from './retry-policy';
export * from './warc-path';
