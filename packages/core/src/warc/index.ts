export * from './warc-error';
export * from './header-list';
export { parseHeadBlock, type HeadBlock, type HeadFailure } from './head-block';
export { isGzipAt, gzipHeaderLength, inflateMember, type InflatedMember } from './gzip-member';
export { decodeHttpBody, dechunk, type PayloadDecoding } from './http-payload';
export { parseHttpResponse, type HttpResponse } from './http-response';
export {
  parseWarcRecordAt,
  skipBlank,
  DEFAULT_MAX_HEADER_BYTES,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_MAX_RECORD_BYTES,
  type ParsedRecord,
  type ReadWarcOptions,
  type WarcRecord,
} from './warc-record';
export { readWarcRecord } from './read-warc-record';
export { readWarcRecordWithWarcio } from './read-warc-record-warcio';
export { iterateWarcFile, type IterateWarcOptions, type WarcFileEntry } from './iterate-warc-file';
export { decodeHtml, decodeBytes, resolveCharset, charsetFromContentType, sniffMetaCharset, META_PRESCAN_BYTES, type CharsetSource, type DecodedHtml } from './decode-html';
