export * from './retry-policy';
export * from './warc-path';
