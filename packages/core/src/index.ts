export * from './errors';
export * from './cdx';
export * from './filter';
export * from './warc';
export * from './url';
export * from './keys';
export * from './extract';
export * from './ingest';
