export * from './batch';
export * from './layout';
export * from './postings';
export * from './queue-action';
export * from './retry-policy';
export * from './warc-path';
