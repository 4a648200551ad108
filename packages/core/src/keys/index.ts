export { urlId, urlIdOfBytes, urlIdHex, urlIdFromHex } from './url-id';
export {
  DEFAULT_DOMAIN64_LAYOUT, Domain64Error, checkLayout, packDomain64, unpackDomain64, formatDomain64, parseDomain64, domain64ToInt64, domain64FromInt64,
} from './domain64';
export type { Domain64Layout, Domain64Fields } from './domain64';
export { Domain64Registry } from './domain64-registry';
export type { Domain64Item, Domain64Range, Domain64Snapshot, Domain64RegistryOptions } from './domain64-registry';
export { SlotSpace } from './slot-space';
export type { SlotSpaceSnapshot } from './slot-space';
export { domain64ItemOf } from './domain64-item';
