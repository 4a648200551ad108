import * as zlib from 'node:zlib';
import { WarcError } from './warc-error';

const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;
const FRESERVED = 0xe0;

/** True when `bytes[at..]` starts with the gzip magic (1f 8b). */
export function isGzipAt(bytes: Uint8Array, at = 0): boolean {
  return bytes.length >= at + 2 && bytes[at] === 0x1f && bytes[at + 1] === 0x8b;
}

function truncated(what: string, at: number): WarcError {
  return new WarcError('CCP_ERR_WARC_TRUNCATED', `gzip member ends early (${what})`, { detail: { memberOffset: at } });
}

/**
 * Length of the gzip member header at `at` (RFC 1952: fixed 10 bytes plus FEXTRA, FNAME, FCOMMENT, FHCRC).
 * Throws WarcError CCP_ERR_WARC_GZIP (bad magic, method or reserved flags) or CCP_ERR_WARC_TRUNCATED.
 */
export function gzipHeaderLength(bytes: Uint8Array, at: number): number {
  if (!isGzipAt(bytes, at)) throw new WarcError('CCP_ERR_WARC_GZIP', 'not a gzip member (bad magic)', { detail: { memberOffset: at } });
  if (bytes.length < at + 10) throw truncated('header', at);
  const flg = bytes[at + 3]!;
  if (bytes[at + 2] !== 8 || (flg & FRESERVED) !== 0) {
    throw new WarcError('CCP_ERR_WARC_GZIP', 'unsupported gzip header (method or reserved flags)', { detail: { memberOffset: at, flags: flg } });
  }
  let p = at + 10;
  if (flg & FEXTRA) {
    if (bytes.length < p + 2) throw truncated('header', at);
    p += 2 + (bytes[p]! | (bytes[p + 1]! << 8));
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (flg & flag) {
      const z = bytes.indexOf(0, p);
      if (z < 0) throw truncated('header', at);
      p = z + 1;
    }
  }
  if (flg & FHCRC) p += 2;
  if (p > bytes.length) throw truncated('header', at);
  return p - at;
}

/** Maps a zlib failure to a WarcError (truncation, size cap, or corrupt data). */
export function zlibToWarcError(err: unknown, at: number, maxOutput: number): WarcError {
  const e = err as { code?: string; message?: string };
  if (e.code === 'Z_BUF_ERROR') return truncated('deflate data', at);
  if (e.code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
    return new WarcError('CCP_ERR_WARC_TOO_LARGE', 'gzip member inflates past the size cap', { cause: err, detail: { memberOffset: at, maxOutput } });
  }
  return new WarcError('CCP_ERR_WARC_GZIP', 'corrupt gzip data', { cause: err, detail: { memberOffset: at, zlib: e.message } });
}

/** One inflated gzip member. */
export interface InflatedMember {
  /** The member's uncompressed bytes. */
  data: Buffer;
  /** Compressed bytes the member occupies, header and 8-byte trailer included. */
  length: number;
}

/**
 * Inflates exactly one gzip member starting at `at` and says how many compressed bytes it spans.
 * zlib's raw inflate stops at the end of the deflate stream and reports the bytes it consumed
 * (`engine.bytesWritten`), which gives the member boundary; the trailer's CRC-32 and ISIZE are checked.
 * Bytes after the member are not read. Pure and idempotent.
 * Throws WarcError CCP_ERR_WARC_GZIP (corrupt, CRC/ISIZE mismatch), CCP_ERR_WARC_TRUNCATED, CCP_ERR_WARC_TOO_LARGE.
 */
export function inflateMember(bytes: Uint8Array, at: number, maxOutput: number): InflatedMember {
  const hl = gzipHeaderLength(bytes, at);
  const body = bytes.subarray(at + hl);
  let data: Buffer;
  let consumed: number;
  try {
    const r = zlib.inflateRawSync(body, { info: true, maxOutputLength: maxOutput }) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
    data = r.buffer;
    consumed = r.engine.bytesWritten;
  } catch (err) {
    throw zlibToWarcError(err, at, maxOutput);
  }
  const t = at + hl + consumed;
  if (bytes.length < t + 8) throw truncated('trailer', at);
  const view = new DataView(bytes.buffer, bytes.byteOffset + t, 8);
  if (view.getUint32(0, true) !== zlib.crc32(data) || view.getUint32(4, true) !== data.length % 0x1_0000_0000) {
    throw new WarcError('CCP_ERR_WARC_GZIP', 'gzip member fails its CRC-32/ISIZE check', { detail: { memberOffset: at } });
  }
  return { data, length: hl + consumed + 8 };
}
