import { HeaderList } from './header-list';
import { parseHttpResponse, type HttpResponse } from './http-response';
import { DEFAULT_MAX_HEADER_BYTES, DEFAULT_MAX_PAYLOAD_BYTES, type ReadWarcOptions, type WarcRecord } from './warc-record';
import { WarcError } from './warc-error';

// The few parts of warcio 2.4 used here, typed locally so @ccpipe/core does not pull warcio's typings.
interface WarcioRecord {
  warcHeaders: { statusline: string; headers: Iterable<[string, string]> };
  readFully(isContent?: boolean): Promise<Uint8Array>;
}
interface WarcioModule {
  WARCParser: new (source: Iterable<Uint8Array>, opts?: { keepHeadersCase?: boolean; parseHttp?: boolean }) => {
    parse(): Promise<WarcioRecord | null>;
  };
}

let warcio: WarcioModule | undefined;
function loadWarcio(): WarcioModule {
  // Loaded on first use: importing @ccpipe/core must not load warcio, pako and hash-wasm.
  warcio ??= require('warcio') as WarcioModule;
  return warcio;
}

/**
 * The same contract and result as `readWarcRecord`, but the gzip member and the WARC head are read by
 * warcio.js (`WARCParser`, pure-JS pako inflate). Kept selectable for comparison and as a second
 * opinion on odd files; see docs/warc.md for why it is not the default (about 3-4x slower here).
 * The HTTP head and payload are parsed by ccpipe's parser from the raw block warcio returns, because
 * warcio's own HTTP path drops the block and silently returns a short payload for a truncated member.
 * Throws WarcError: CCP_ERR_WARC_GZIP / CCP_ERR_WARC_HEADER (wrapping warcio's error),
 * CCP_ERR_WARC_TRUNCATED (no record, or a block shorter than its Content-Length), CCP_ERR_HTTP_HEAD
 * unless `opts.lenientHttp`. Idempotent.
 */
export async function readWarcRecordWithWarcio(bytes: Uint8Array, opts: ReadWarcOptions = {}): Promise<WarcRecord> {
  const { WARCParser } = loadWarcio();
  let rec: WarcioRecord | null;
  let block: Uint8Array;
  try {
    rec = await new WARCParser([bytes], { keepHeadersCase: true, parseHttp: false }).parse();
    block = rec ? await rec.readFully(false) : new Uint8Array(0);
  } catch (err) {
    throw new WarcError(bytes[0] === 0x1f ? 'CCP_ERR_WARC_GZIP' : 'CCP_ERR_WARC_HEADER', 'warcio could not read the record', {
      cause: err,
      detail: { warcio: (err as Error).message },
    });
  }
  if (!rec) throw new WarcError('CCP_ERR_WARC_TRUNCATED', 'no WARC record in the bytes', { detail: { length: bytes.length } });
  const headers = new HeaderList([...rec.warcHeaders.headers]);
  const cl = headers.get('content-length');
  if (cl === undefined || !/^\d{1,15}$/.test(cl)) throw new WarcError('CCP_ERR_WARC_HEADER', 'missing or invalid Content-Length');
  const contentLength = Number(cl);
  if (block.length < contentLength) {
    throw new WarcError('CCP_ERR_WARC_TRUNCATED', 'record block shorter than its Content-Length', { detail: { contentLength, available: block.length } });
  }
  const type = headers.get('warc-type') ?? '';
  const contentType = headers.get('content-type');
  let http: HttpResponse | undefined;
  let httpError: WarcError | undefined;
  if (/^(response|revisit)$/i.test(type) && contentType !== undefined && /^application\/http\b/i.test(contentType)) {
    try {
      http = parseHttpResponse(block, opts.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES, opts.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES);
    } catch (err) {
      if (!opts.lenientHttp || !(err instanceof WarcError)) throw err;
      httpError = err;
    }
  }
  const uri = headers.get('warc-target-uri')?.trim();
  return {
    version: rec.warcHeaders.statusline.trim(),
    headers,
    type,
    targetUri: uri && uri.length >= 2 && uri.startsWith('<') && uri.endsWith('>') ? uri.slice(1, -1).trim() : uri,
    date: headers.get('warc-date'),
    recordId: headers.get('warc-record-id'),
    contentType,
    contentLength,
    truncated: headers.get('warc-truncated'),
    block,
    http,
    httpError,
  };
}
