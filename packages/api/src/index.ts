export * from './api-error';
export * from './acl';
export * from './metrics';
export * from './memory-index-source';
export { DEFAULT_LIMIT, MAX_LIMIT, domainOfParam } from './handlers';
export * from './server';
export * from './main';
export { cachedFor, ingestStatusOf, ingestStatusProvider, readIngestFacts, readModeOf, type DatasetIngest, type IngestFact, type IngestStatus } from './ingest-status';
