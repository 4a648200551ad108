import { CcpError } from '../errors';

/** Bit widths of the four domain64 fields, most significant first. Sum ≤ 64, each ≥ 1. */
export interface Domain64Layout {
  tld: number;
  domain: number;
  sub: number;
  path: number;
}

/** tld(8):domain(24):subdomain(8):path(24). */
export const DEFAULT_DOMAIN64_LAYOUT: Readonly<Domain64Layout> = Object.freeze({ tld: 8, domain: 24, sub: 8, path: 24 });

/** The four field values of a key (each < 2^width). */
export interface Domain64Fields {
  tld: number;
  domain: number;
  sub: number;
  path: number;
}

/** Codes: CCP_ERR_DOMAIN64_FULL (no slot left: never a silent collision), CCP_ERR_DOMAIN64_INPUT. */
export class Domain64Error extends CcpError {
  constructor(code: 'CCP_ERR_DOMAIN64_FULL' | 'CCP_ERR_DOMAIN64_INPUT', message: string, detail?: Record<string, unknown>) {
    super(code, message, { retryable: false, detail });
  }
}

/** @throws Domain64Error CCP_ERR_DOMAIN64_INPUT for widths that are not integers ≥ 1 summing to ≤ 64 (or > 31 bits). */
export function checkLayout(l: Domain64Layout): void {
  const ws = [l.tld, l.domain, l.sub, l.path];
  if (ws.some((w) => !Number.isInteger(w) || w < 1 || w > 31) || ws.reduce((a, b) => a + b, 0) > 64) {
    throw new Domain64Error('CCP_ERR_DOMAIN64_INPUT', 'domain64 layout widths must be integers in 1..31 summing to at most 64', { layout: l });
  }
}

/** Packs fields into an unsigned key (bigint in [0, 2^(sum of widths))). No range check: callers own that. */
export function packDomain64(f: Domain64Fields, l: Domain64Layout = DEFAULT_DOMAIN64_LAYOUT): bigint {
  let k = BigInt(f.tld);
  k = (k << BigInt(l.domain)) | BigInt(f.domain);
  k = (k << BigInt(l.sub)) | BigInt(f.sub);
  return (k << BigInt(l.path)) | BigInt(f.path);
}

/** Splits an unsigned key into its fields. */
export function unpackDomain64(key: bigint, l: Domain64Layout = DEFAULT_DOMAIN64_LAYOUT): Domain64Fields {
  const mask = (w: number) => (1n << BigInt(w)) - 1n;
  const path = Number(key & mask(l.path));
  key >>= BigInt(l.path);
  const sub = Number(key & mask(l.sub));
  key >>= BigInt(l.sub);
  const domain = Number(key & mask(l.domain));
  key >>= BigInt(l.domain);
  return { tld: Number(key & mask(l.tld)), domain, sub, path };
}

const hexOf = (v: number, bits: number) => v.toString(16).padStart(Math.ceil(bits / 4), '0');

/** Text form `tld:domain:sub:path` in lower-case hex, each field zero-padded to its width (`01:000001:02:000002`). */
export function formatDomain64(key: bigint, l: Domain64Layout = DEFAULT_DOMAIN64_LAYOUT): string {
  const f = unpackDomain64(key, l);
  return `${hexOf(f.tld, l.tld)}:${hexOf(f.domain, l.domain)}:${hexOf(f.sub, l.sub)}:${hexOf(f.path, l.path)}`;
}

/**
 * Inverse of `formatDomain64`.
 * @throws Domain64Error CCP_ERR_DOMAIN64_INPUT when the text is not four hex fields within their widths.
 */
export function parseDomain64(text: string, l: Domain64Layout = DEFAULT_DOMAIN64_LAYOUT): bigint {
  const parts = text.split(':');
  const widths = [l.tld, l.domain, l.sub, l.path];
  if (parts.length !== 4 || parts.some((p) => !/^[0-9a-fA-F]{1,8}$/.test(p))) throw new Domain64Error('CCP_ERR_DOMAIN64_INPUT', 'domain64 text must be four hex fields', { text });
  const v = parts.map((p) => parseInt(p, 16));
  if (v.some((x, i) => x >= 2 ** (widths[i] as number))) throw new Domain64Error('CCP_ERR_DOMAIN64_INPUT', 'domain64 field exceeds its width', { text });
  return packDomain64({ tld: v[0] as number, domain: v[1] as number, sub: v[2] as number, path: v[3] as number }, l);
}

/**
 * A uint64 key as a signed INT64 that sorts the same way (top bit flipped), for Parquet INT64
 * columns and engines without unsigned types. Inverse: `domain64FromInt64`.
 */
export function domain64ToInt64(key: bigint): bigint {
  return BigInt.asIntN(64, key ^ (1n << 63n));
}

/** Inverse of `domain64ToInt64`. */
export function domain64FromInt64(v: bigint): bigint {
  return BigInt.asUintN(64, v) ^ (1n << 63n);
}
