import { constants, createGunzip, gunzipSync } from 'node:zlib';

// Inflating a block into memory that is already there (the WebAssembly line scan's, line-scan.ts) rather than into a
// new Buffer. gunzipSync writes each block into fresh memory: for a 1.6 MB block that is an allocation, ≈400 page faults
// and, past its 1 MB output chunk, a second chunk and a concatenation; inflating the bench's blocks into memory used
// again measured 430–560 ns a line against 690–1,300 for inflateCdxBlock under load, the difference mostly system
// time (docs/cdx.md, Figures). It also spares the copy of the block into the module's memory.
//
// Node's zlib has no API for an output buffer. Its sync path (processChunkSync in lib/zlib.js, the one gunzipSync
// takes) writes into the engine's `_outBuffer`, `_chunkSize` bytes, and returns a view of it when the output fits;
// `_processChunk(chunk, flush)` without a callback is that path (kept for backward compatibility). Those fields are
// Node's internals: when they are not there, or the output is elsewhere, the caller gets the inflated bytes all the
// same, only not in its memory ({@link gunzipInto} says which).

/** The Node internals used (lib/zlib.js; checked on Node 20, held by gunzip-into.test.ts). */
interface SyncEngine {
  _outBuffer?: Buffer;
  _outOffset?: number;
  _chunkSize?: number;
  _processChunk?: (chunk: Uint8Array, flushFlag: number) => Buffer;
  close(): void;
}

/** Largest output put in the caller's memory: a gzip trailer's size is a hint (a bad block could claim 4 GB). */
export const MAX_IN_PLACE = 1 << 26;

/**
 * gunzipSync's output chunk for `n` bytes of gzip: ≈10× the input, 16 KB–1 MB (zlib's default 16 KB chunks cost
 * 1.5–1.7× as much CPU on real-sized blocks, docs/cdx.md).
 */
export const gunzipChunkSize = (n: number): number => Math.min(1 << 20, Math.max(1 << 14, n * 10));

/**
 * Inflates `gz` (one gzip member or several) like `gunzipSync`, into `into(n)` when it can: `into` is asked once for a
 * Buffer of `n` bytes, `n` one more than the size the last member's trailer gives (all of a one-member block) or
 * {@link gunzipChunkSize} if more, and the result is then a view of its first bytes. The result is elsewhere — a
 * Buffer of its own — when the output does not fit (several members), when the trailer gives more than
 * {@link MAX_IN_PLACE}, or when Node's internals are not what this expects; `into` is then perhaps not asked. Either way
 * the bytes are gunzipSync's, and a block gunzipSync refuses throws its error.
 * @throws the zlib error gunzipSync throws for bytes that are not gzip, or whose trailer lies (the caller wraps it).
 */
export function gunzipInto(gz: Uint8Array, into: (n: number) => Buffer): Buffer {
  const n = gz.length;
  const size = n >= 18 ? (gz[n - 4]! | (gz[n - 3]! << 8) | (gz[n - 2]! << 16) | (gz[n - 1]! << 24)) : -1;
  if (size < 0 || size >= MAX_IN_PLACE) return gunzipSync(gz, { chunkSize: gunzipChunkSize(n) });
  // 64 bytes, the least chunk zlib takes: the engine's own first chunk is small, then replaced
  const engine = createGunzip({ chunkSize: 64 }) as unknown as SyncEngine;
  if (typeof engine._processChunk !== 'function' || !Buffer.isBuffer(engine._outBuffer) || engine._outOffset !== 0 || engine._chunkSize !== 64) {
    engine.close();
    return gunzipSync(gz, { chunkSize: gunzipChunkSize(n) });
  }
  // one byte spare (output that fills the chunk exactly makes zlib make another), and never less than gunzipSync's chunk:
  // past it, zlib goes on in chunks of this size (several members, the last one small)
  const out = into(Math.max(size + 1, gunzipChunkSize(n)));
  engine._outBuffer = out;
  engine._chunkSize = out.length;
  return engine._processChunk(gz, constants.Z_FINISH);
}
