export { FsObjectStore, fsyncPath, type FsObjectStoreOptions } from './fs-object-store';
export { MemoryObjectStore } from './memory-object-store';
export { S3ObjectStore, type S3ObjectStoreOptions } from './s3-object-store';
export { localStoreDir, openObjectStore, parseStoreSpec, type OpenedObjectStore, type OpenObjectStoreOptions, type StoreLocation } from './open-object-store';
export { StoreKeyError, StoreReadError, validateKey, validatePrefix } from './store-key';
export { ensureDataset } from './dataset-store';
