import { createHash } from 'node:crypto';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding, the alphabet of Common Crawl's CDX `digest` and `sha1:` WARC digests. Pure. */
export function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

/** The CDX `digest` of a payload: base32 of its SHA-1. Pure. */
export function sha1Base32(bytes: Uint8Array): string {
  return base32(createHash('sha1').update(bytes).digest());
}
