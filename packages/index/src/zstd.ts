import * as wasm from '@bokuweb/zstd-wasm';
import { decompress as fzstdDecompress } from 'fzstd';

/** Which ZSTD decoder lake reads use: `wasm` (libzstd compiled to WebAssembly) or `js` (fzstd, pure JavaScript). */
export type ZstdDecoder = 'wasm' | 'js';

let wasmReady: Promise<boolean> | null = null;
let wasmOk = false;
const counters = { wasm: 0, js: 0 };

/** Pages decoded by each decoder since the process started (benchmarks, tests). */
export function zstdCounters(): Readonly<{ wasm: number; js: number }> {
  return { ...counters };
}

/**
 * Loads the WebAssembly decoder once (idempotent; concurrent callers share the load). Resolves to whether it is
 * usable; when it is not, {@link zstdDecompress} uses fzstd. Cold lake pages are dominated by ZSTD decoding: on a
 * 1.9 MB URL column libzstd-wasm decodes ~4.5× faster than fzstd here (bench/api.bench.js reports both).
 */
export function initZstd(): Promise<boolean> {
  wasmReady ??= wasm.init().then(
    () => (wasmOk = true),
    () => (wasmOk = false),
  );
  return wasmReady;
}

/**
 * Decompresses one ZSTD frame (a Parquet page) of known decompressed size. Uses the WebAssembly decoder when
 * {@link initZstd} has loaded it and `decoder` is not `js`; falls back to fzstd when it is not loaded or returns
 * another size than the page header promises. @throws Error on corrupt input (from fzstd).
 */
export function zstdDecompress(input: Uint8Array, outputLength: number, decoder: ZstdDecoder = 'wasm'): Uint8Array {
  if (decoder === 'wasm' && wasmOk) {
    try {
      const out = wasm.decompress(input, { defaultHeapSize: Math.max(1, outputLength) });
      if (out.length === outputLength) {
        counters.wasm++;
        return out;
      }
    } catch {
      // fall through: fzstd reports corrupt input with a clear message
    }
  }
  const out = fzstdDecompress(input, new Uint8Array(outputLength));
  counters.js++;
  return out;
}
