import type { HeaderList } from './header-list';
import { parseHeadBlock } from './head-block';
import { decodeHttpBody, type PayloadDecoding } from './http-payload';
import { WarcError } from './warc-error';

/** The HTTP response inside a `response` (or `revisit`) record. */
export interface HttpResponse {
  /** e.g. `HTTP/1.1`, as written. */
  httpVersion: string;
  status: number;
  /** Reason phrase; empty when the producer left it out. */
  reason: string;
  /** HTTP header fields, order and duplicates kept; bytes decoded as latin1 (byte-preserving). */
  headers: HeaderList;
  /** Bytes of the head, status line and blank line included. */
  headLength: number;
  /** The body after undoing real transfer/content codings (see `decoding`), possibly clipped. */
  payload: Uint8Array;
  decoding: PayloadDecoding;
  /** True when `payload` was cut to `maxPayloadBytes`. */
  payloadClipped: boolean;
}

// Lenient like browsers: any case, HTTP/2-style versions, no reason, or a reason glued to the code ("200OK").
const STATUS_LINE = /^HTTP\/(\d{1,2}(?:\.\d{1,2})?)[ \t]+(\d{3})(?![0-9])[ \t]*(.*)$/i;

/**
 * Parses the HTTP response message that makes up a record block: status line, head (bare LF and
 * obs-fold tolerated; a head that runs to the end of the block without a blank line is accepted with an
 * empty body), then the payload via {@link decodeHttpBody}. Pure.
 * Throws WarcError CCP_ERR_HTTP_HEAD when the block does not start with an HTTP status line
 * (HTTP/0.9-style bodies, junk) or the head exceeds `maxHeadBytes`.
 */
export function parseHttpResponse(block: Uint8Array, maxHeadBytes: number, maxPayloadBytes: number): HttpResponse {
  let start = 0;
  // Some writers leave a stray line break before the status line.
  while (start < block.length && start < 4 && (block[start] === 0x0d || block[start] === 0x0a)) start++;
  const head = parseHeadBlock(block, start, block.length, maxHeadBytes, 'latin1', true);
  if (typeof head === 'string') {
    throw new WarcError('CCP_ERR_HTTP_HEAD', head === 'too-large' ? 'HTTP head exceeds the size cap' : 'HTTP head missing', {
      detail: { reason: head, blockLength: block.length },
    });
  }
  const m = STATUS_LINE.exec(head.firstLine);
  if (!m) {
    throw new WarcError('CCP_ERR_HTTP_HEAD', 'block does not start with an HTTP status line', {
      detail: { firstLine: head.firstLine.slice(0, 120) },
    });
  }
  const body = block.subarray(head.end);
  const { payload, decoding } = decodeHttpBody(body, head.headers, maxPayloadBytes);
  const clipped = payload.length > maxPayloadBytes;
  return {
    httpVersion: `HTTP/${m[1]!}`,
    status: Number(m[2]),
    reason: (m[3] ?? '').trim(),
    headers: head.headers,
    headLength: head.end,
    payload: clipped ? payload.subarray(0, maxPayloadBytes) : payload,
    decoding,
    payloadClipped: clipped,
  };
}
