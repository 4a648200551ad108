import { HeaderList } from './header-list';
import type { HttpResponse } from './http-response';
import { DEFAULT_MAX_PAYLOAD_BYTES, type ReadWarcOptions, type WarcRecord } from './warc-record';
import { WarcError } from './warc-error';

// The few parts of warcio 2.4 used here, typed locally so @ccpipe/core does not pull warcio's typings.
interface WarcioHeaders extends Iterable<[string, string]> {
  get(name: string): string | null | undefined;
}
interface WarcioStatusAndHeaders {
  statusline: string;
  headers: WarcioHeaders;
  readonly protocol: string | undefined;
  readonly statusCode: string | number | undefined;
  readonly statusText: string | undefined;
}
interface WarcioRecord {
  warcHeaders: WarcioStatusAndHeaders;
  httpHeaders: WarcioStatusAndHeaders | null;
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
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  warcio ??= require('warcio') as WarcioModule;
  return warcio;
}

/**
 * The same contract as `readWarcRecord`, read by warcio.js (`WARCParser`, pure-JS pako inflate), kept
 * selectable for comparison and as a second opinion on odd files. Differences: `block` is empty for
 * records whose HTTP head warcio parsed (warcio consumes the stream and does not keep it);
 * `http.decoding` only lists the header tokens (warcio undoes chunked/gzip/deflate/br itself and does
 * not say whether it succeeded); no header size caps. See docs/warc.md for why it is not the default.
 * Throws WarcError CCP_ERR_WARC_GZIP/CCP_ERR_WARC_HEADER (wrapping warcio's error) or
 * CCP_ERR_WARC_TRUNCATED when no record is found.
 */
export async function readWarcRecordWithWarcio(bytes: Uint8Array, opts: ReadWarcOptions = {}): Promise<WarcRecord> {
  const { WARCParser } = loadWarcio();
  let rec: WarcioRecord | null;
  let content: Uint8Array;
  try {
    rec = await new WARCParser([bytes], { keepHeadersCase: true }).parse();
    content = rec ? await rec.readFully(rec.httpHeaders !== null) : new Uint8Array(0);
  } catch (err) {
    throw new WarcError(bytes[0] === 0x1f ? 'CCP_ERR_WARC_GZIP' : 'CCP_ERR_WARC_HEADER', 'warcio could not read the record', {
      cause: err,
      detail: { warcio: (err as Error).message },
    });
  }
  if (!rec) throw new WarcError('CCP_ERR_WARC_TRUNCATED', 'no WARC record in the bytes', { detail: { length: bytes.length } });
  const headers = new HeaderList([...rec.warcHeaders.headers]);
  const cl = Number(headers.get('content-length') ?? NaN);
  if (!Number.isFinite(cl)) throw new WarcError('CCP_ERR_WARC_HEADER', 'missing or invalid Content-Length');
  let http: HttpResponse | undefined;
  if (rec.httpHeaders) {
    const hh = new HeaderList([...rec.httpHeaders.headers]);
    const max = opts.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
    const list = (n: string): string[] => hh.getAll(n).flatMap((v) => v.split(',').map((t) => t.trim().toLowerCase()).filter((t) => t && t !== 'identity'));
    http = {
      httpVersion: rec.httpHeaders.protocol ?? '',
      status: Number(rec.httpHeaders.statusCode),
      reason: rec.httpHeaders.statusText ?? '',
      headers: hh,
      headLength: -1,
      payload: content.length > max ? content.subarray(0, max) : content,
      decoding: {
        transferEncoding: list('transfer-encoding'),
        contentEncoding: list('content-encoding'),
        applied: [],
        storedDecoded: hh.has('x-crawler-transfer-encoding') || hh.has('x-crawler-content-encoding'),
      },
      payloadClipped: content.length > max,
    };
  }
  const uri = headers.get('warc-target-uri')?.trim();
  return {
    version: rec.warcHeaders.statusline.trim(),
    headers,
    type: headers.get('warc-type') ?? '',
    targetUri: uri && uri.startsWith('<') && uri.endsWith('>') ? uri.slice(1, -1) : uri,
    date: headers.get('warc-date'),
    recordId: headers.get('warc-record-id'),
    contentType: headers.get('content-type'),
    contentLength: cl,
    truncated: headers.get('warc-truncated'),
    block: http ? new Uint8Array(0) : content,
    http,
    httpError: undefined,
  };
}
