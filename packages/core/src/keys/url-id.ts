import { xxh3 } from '@node-rs/xxhash';

/**
 * The url_id of a canonical URL (`canonicalizeUrl(...).url`): XXH3-64 (seed 0) of its UTF-8 bytes,
 * as a SIGNED 64-bit value so it fits a Parquet INT64 column as is. Deterministic, pure. Two
 * different URLs can share an id (p ≈ n²/2⁶⁵: ~0.5 collisions at 4.3 billion URLs): the merger keeps
 * a collision map (docs/keys.md); never use url_id alone as proof that two URLs are equal.
 */
export function urlId(canonicalUrl: string): bigint {
  return BigInt.asIntN(64, xxh3.xxh64(canonicalUrl));
}

/** Same as `urlId` for URL bytes already in a Buffer (about 1.7× faster than a string input). */
export function urlIdOfBytes(canonicalUrlBytes: Uint8Array): bigint {
  return BigInt.asIntN(64, xxh3.xxh64(canonicalUrlBytes));
}

/** 16 lower-case hex digits of the unsigned value of a url_id (`-1n` → `ffffffffffffffff`). */
export function urlIdHex(id: bigint): string {
  return BigInt.asUintN(64, id).toString(16).padStart(16, '0');
}

/**
 * Inverse of `urlIdHex`: the signed url_id of 1–16 hex digits.
 * @throws RangeError when `hex` is not 1–16 hex digits.
 */
export function urlIdFromHex(hex: string): bigint {
  if (!/^[0-9a-fA-F]{1,16}$/.test(hex)) throw new RangeError('url_id hex must be 1-16 hex digits');
  return BigInt.asIntN(64, BigInt(`0x${hex}`));
}
