export type * from './range-reader';
export type * from './batch-queue';
export type * from './object-store';
export type * from './clock';
export type * from './index-view';
export { TOP_DOMAINS_KEPT } from './index-view';
