import * as zlib from 'node:zlib';
import type { HeaderList } from './header-list';

/** What was done to turn the stored HTTP body into the payload. */
export interface PayloadDecoding {
  /** Tokens of the real `Transfer-Encoding` header(s), lower-case, in header order (empty when absent). */
  transferEncoding: string[];
  /** Tokens of the real `Content-Encoding` header(s), lower-case, `identity` dropped. */
  contentEncoding: string[];
  /** Encodings actually undone, in the order applied (e.g. `['chunked', 'gzip']`). */
  applied: string[];
  /**
   * The first encoding named by a real header that could not be undone. `payload` then holds the bytes
   * as they were before that step (raw when the first step failed), except for `truncated`, where it
   * holds what could be recovered. A body that is not chunked despite `Transfer-Encoding: chunked` is
   * `{chunked, invalid}` and its content coding is still undone.
   */
  failed?: { encoding: string; reason: 'invalid' | 'truncated' | 'unsupported' | 'too-large' };
  /**
   * True when the crawler renamed the original headers (`X-Crawler-Transfer-Encoding`,
   * `X-Crawler-Content-Encoding`, Common Crawl's practice): the body was stored already decoded and
   * those headers are never acted upon.
   */
  storedDecoded: boolean;
}

function tokens(values: string[]): string[] {
  const out: string[] = [];
  for (const v of values) for (const t of v.split(',')) {
    const k = t.trim().toLowerCase();
    if (k && k !== 'identity') out.push(k);
  }
  return out;
}

type StepResult = { ok: true; data: Uint8Array } | { ok: false; reason: 'invalid' | 'truncated' | 'unsupported' | 'too-large'; partial?: Uint8Array };

/**
 * Undoes HTTP/1.1 chunked framing. Tolerates bare-LF line ends and chunk extensions; trailers are dropped.
 * A body that does not start with a hex size line is `invalid` (producers that keep the header but store
 * the body unchunked); one that ends before the last-chunk is `truncated` with what was recovered.
 */
export function dechunk(body: Uint8Array): StepResult {
  const parts: Uint8Array[] = [];
  let total = 0;
  let pos = 0;
  for (;;) {
    const nl = body.indexOf(0x0a, pos);
    if (nl < 0 || nl - pos > 1024) {
      return parts.length === 0 ? { ok: false, reason: 'invalid' } : { ok: false, reason: 'truncated', partial: concat(parts, total) };
    }
    const line = Buffer.from(body.buffer, body.byteOffset + pos, nl - pos).toString('latin1');
    const m = /^\s*([0-9a-fA-F]{1,12})\s*(?:;.*)?\r?$/.exec(line);
    if (!m) return parts.length === 0 ? { ok: false, reason: 'invalid' } : { ok: false, reason: 'truncated', partial: concat(parts, total) };
    const size = parseInt(m[1]!, 16);
    pos = nl + 1;
    if (size === 0) return { ok: true, data: concat(parts, total) };
    const end = pos + size;
    if (end > body.length) {
      parts.push(body.subarray(pos));
      total += body.length - pos;
      return { ok: false, reason: 'truncated', partial: concat(parts, total) };
    }
    parts.push(body.subarray(pos, end));
    total += size;
    pos = end;
    if (body[pos] === 0x0d) pos++;
    if (body[pos] === 0x0a) pos++;
  }
}

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  return Buffer.concat(parts, total);
}

function decompress(encoding: string, data: Uint8Array, max: number): StepResult {
  const opts = { maxOutputLength: max };
  const attempt = (fn: () => Buffer, partialFn?: () => Buffer): StepResult => {
    try {
      return { ok: true, data: fn() };
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) return { ok: false, reason: 'too-large' };
      if (code === 'Z_BUF_ERROR' && partialFn) {
        try {
          return { ok: false, reason: 'truncated', partial: partialFn() };
        } catch {
          return { ok: false, reason: 'truncated' };
        }
      }
      return { ok: false, reason: code === 'Z_BUF_ERROR' ? 'truncated' : 'invalid' };
    }
  };
  const sync = { ...opts, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return attempt(() => zlib.gunzipSync(data, opts), () => zlib.gunzipSync(data, sync));
    case 'deflate': {
      // Servers send both zlib-wrapped (RFC 1950, correct) and raw deflate; browsers accept both.
      const wrapped = data.length >= 2 && (data[0]! & 0x0f) === 8 && ((data[0]! << 8) | data[1]!) % 31 === 0;
      return wrapped
        ? attempt(() => zlib.inflateSync(data, opts), () => zlib.inflateSync(data, sync))
        : attempt(() => zlib.inflateRawSync(data, opts), () => zlib.inflateRawSync(data, sync));
    }
    case 'br':
      return attempt(() => zlib.brotliDecompressSync(data, opts));
    default:
      return { ok: false, reason: 'unsupported' };
  }
}

/**
 * Turns a stored HTTP body into the payload, acting ONLY on the real `Transfer-Encoding` and
 * `Content-Encoding` headers: a body stored already decoded (Common Crawl renames those headers to
 * `X-Crawler-*`) is never decoded twice. Failures never throw: the best bytes are kept and
 * `decoding.failed` says what went wrong. Decoded output is capped at `maxBytes` (`too-large` keeps the
 * encoded bytes). Pure and idempotent.
 */
export function decodeHttpBody(body: Uint8Array, headers: HeaderList, maxBytes: number): { payload: Uint8Array; decoding: PayloadDecoding } {
  const te = tokens(headers.getAll('transfer-encoding'));
  const ce = tokens(headers.getAll('content-encoding'));
  const decoding: PayloadDecoding = {
    transferEncoding: te,
    contentEncoding: ce,
    applied: [],
    storedDecoded: headers.has('x-crawler-transfer-encoding') || headers.has('x-crawler-content-encoding'),
  };
  // Transfer codings are applied after content codings by the sender: undo TE (last first), then CE.
  const steps = [...te.slice().reverse(), ...ce.slice().reverse()];
  let data = body;
  for (const enc of steps) {
    if (data.length === 0) break;
    const r = enc === 'chunked' ? dechunk(data) : decompress(enc, data, maxBytes);
    if (r.ok) {
      data = r.data;
      decoding.applied.push(enc);
      continue;
    }
    decoding.failed ??= { encoding: enc, reason: r.reason };
    if (r.partial) data = r.partial;
    // A body that was never chunked (header kept, framing removed) may still be content-encoded.
    if (enc === 'chunked' && r.reason === 'invalid') continue;
    break;
  }
  return { payload: data, decoding };
}
