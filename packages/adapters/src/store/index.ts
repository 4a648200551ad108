export { FsObjectStore, type FsObjectStoreOptions } from './fs-object-store';
export { MemoryObjectStore } from './memory-object-store';
export { StoreKeyError, StoreReadError, validateKey, validatePrefix } from './store-key';
