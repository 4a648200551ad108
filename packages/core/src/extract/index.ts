export {
  extractDocument,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_ELEMENTS,
  DEFAULT_MAX_OUTLINKS,
  type ExtractOptions,
  type Extracted,
} from './extract-document';
export { ExtractError, isStackOverflow, wireErrorOf, type ExtractErrorCode } from './extract-error';
export type { DomImpl } from './parse-dom';
export { blockText, normalizeText } from './block-text';
export { collectOutlinks, MAX_OUTLINK_CHARS, type Outlinks } from './outlinks';
export { truncateUtf8, stripInert } from './html-prep';
