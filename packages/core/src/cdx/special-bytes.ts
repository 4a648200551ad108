import { isAscii } from 'node:buffer';

// Finding the lines of a block that must leave the fast path: those holding a backslash (a JSON escape) or a control
// byte other than `\n` (invalid raw in JSON; `\r` of a CRLF line too, which the general path then places outside the
// JSON part), and the pieces that are not ASCII. Real CC blocks have none, so what matters is how fast a clean block
// is shown clean.
//
// Searching the 32 byte values one `indexOf` (memchr) at a time costs ≈0.3 ns per byte, ≈170 ns per 540-byte CDX
// line, and an ASCII check (isAscii) ≈25 ns more. A regex character class measured 0.9 ns per byte, SWAR over a
// Uint32Array in JS 0.35. A 16-bytes-at-a-time WebAssembly SIMD loop that finds both, copy into its memory included,
// measured 0.1–0.15 ns per byte (docs/cdx.md). Its memory grows to the largest piece scanned (≈64 KB) and stays.
// WebAssembly is part of the JS engine (no I/O, nothing loaded at run time): the module below is its whole source.
// Where it cannot be compiled (no SIMD), the memchr search is used; both give the same answers (special-bytes.test.ts).

/** The module, as WebAssembly text (the bytes are assembled from it by {@link scanModule}):
 * ```wat
 * (module
 *   (memory (export "mem") 1)
 *   ;; First offset in [from, end) of a byte < 0x20 other than 0x0a, of 0x5c, or of a byte ≥ 0x80; -1 if none.
 *   ;; Reads 16 bytes at a time: the 16 bytes after `end` must be inside the memory.
 *   (func (export "scan") (param $from i32) (param $end i32) (result i32)
 *     (local $p i32) (local $v v128)
 *     (local.set $p (local.get $from))
 *     (block $done
 *       (loop $next
 *         (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
 *         (local.set $v (v128.load (local.get $p)))
 *         (local.tee $v (v128.or
 *           (v128.and (i8x16.lt_s (local.get $v) (i8x16.splat 0x20)) (i8x16.ne (local.get $v) (i8x16.splat 0x0a)))
 *           (i8x16.eq (local.get $v) (i8x16.splat 0x5c))))
 *         (if (v128.any_true)
 *           (then
 *             (local.set $p (i32.add (local.get $p) (i32.ctz (i8x16.bitmask (local.get $v)))))
 *             (return (if (result i32) (i32.lt_u (local.get $p) (local.get $end))
 *               (then (local.get $p)) (else (i32.const -1))))))
 *         (local.set $p (i32.add (local.get $p) (i32.const 16)))
 *         (br $next)))
 *     (i32.const -1)))
 * ```
 * (`i8x16.splat c` is written as a `v128.const` of 16 bytes `c`; `lt_s` takes the bytes as signed, so ≥ 0x80 is < 0.)
 */
function scanModule(): Uint8Array {
  const leb = (n: number): number[] => {
    const out: number[] = [];
    do {
      const b = n & 0x7f;
      n >>>= 7;
      out.push(n !== 0 ? b | 0x80 : b);
    } while (n !== 0);
    return out;
  };
  const section = (id: number, body: number[]): number[] => [id, ...leb(body.length), ...body];
  const name = (s: string): number[] => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];
  const simd = (op: number): number[] => [0xfd, ...leb(op)];
  const splat = (byte: number): number[] => [...simd(0x0c), ...new Array<number>(16).fill(byte)];
  const [I32, V128, BLOCK, LOOP, IF, ELSE, END, BR, BR_IF, RETURN] = [0x7f, 0x7b, 0x02, 0x03, 0x04, 0x05, 0x0b, 0x0c, 0x0d, 0x0f];
  const [GET, SET, TEE, CONST, LT_U, GE_U, ADD, CTZ, VOID] = [0x20, 0x21, 0x22, 0x41, 0x49, 0x4f, 0x6a, 0x68, 0x40];
  const [LOAD, EQ, NE, LT_S8, AND, OR, ANY_TRUE, BITMASK] = [0x00, 0x23, 0x24, 0x25, 0x4e, 0x50, 0x53, 0x64];
  const [FROM, END_, P, V] = [0, 1, 2, 3];
  const body = [
    2, 1, I32, 1, V128, // locals $p, $v
    GET, FROM, SET, P,
    BLOCK, VOID,
    LOOP, VOID,
    GET, P, GET, END_, GE_U, BR_IF, 1,
    GET, P, ...simd(LOAD), 0, 0, SET, V,
    GET, V, ...splat(0x20), ...simd(LT_S8), GET, V, ...splat(0x0a), ...simd(NE), ...simd(AND),
    GET, V, ...splat(0x5c), ...simd(EQ), ...simd(OR),
    TEE, V, ...simd(ANY_TRUE),
    IF, VOID,
    GET, P, GET, V, ...simd(BITMASK), CTZ, ADD, SET, P,
    GET, P, GET, END_, LT_U, IF, I32, GET, P, ELSE, CONST, 0x7f, END, RETURN,
    END,
    GET, P, CONST, 16, ADD, SET, P,
    BR, 0,
    END,
    END,
    CONST, 0x7f, // -1
    END,
  ];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 2, I32, I32, 1, I32]), // type 0: (i32, i32) -> i32
    ...section(3, [1, 0]), // func 0: type 0
    ...section(5, [1, 0x00, 1]), // memory 0: 1 page, no maximum
    ...section(7, [2, ...name('scan'), 0x00, 0, ...name('mem'), 0x02, 0]),
    ...section(10, [1, ...leb(body.length), ...body]),
  ]);
}

interface ScanExports {
  mem: { buffer: ArrayBuffer; grow(pages: number): number };
  scan(from: number, end: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
}

function instantiate(): ScanExports | null {
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) return null;
  try {
    return new api.Instance(new api.Module(scanModule())).exports as ScanExports;
  } catch {
    return null; // an engine without WebAssembly SIMD
  }
}

let wasm: ScanExports | null | undefined;

/** Whether the WebAssembly scan is in use (false: the memchr fallback). */
export function usesWebAssembly(): boolean {
  if (wasm === undefined) wasm = instantiate();
  return wasm !== null;
}

const PAGE = 65536;

/** Bytes searched by the fallback: `\` and the control bytes other than `\n`. */
const SPECIAL_BYTES: readonly number[] = [0x5c, ...Array.from({ length: 32 }, (_, c) => c).filter((c) => c !== 0x0a)];

/**
 * Tells, line after line, whether a stretch of ASCII bytes holds a backslash or a control byte other than `\n`.
 * All such positions are found when it is made (real CC has none, so the list is empty), so finders of several
 * pieces can be held at once. `start` must not go back between calls. Not exported from the package.
 */
export class SpecialByteFinder {
  private i = 0;

  private constructor(private readonly at: readonly number[]) {}

  /**
   * A finder over `bytes`, or null when they are not all ASCII (the caller then decodes them as UTF-8). The scan
   * that finds the special bytes finds the non-ASCII ones in the same pass, so the ASCII check costs nothing more.
   * @param useWasm false forces the memchr fallback (tests compare the two).
   */
  static of(bytes: Uint8Array, useWasm = true): SpecialByteFinder | null {
    if (wasm === undefined) wasm = instantiate();
    const at: number[] = [];
    if (!useWasm || wasm === null) {
      if (!isAscii(bytes)) return null;
      for (const b of SPECIAL_BYTES) for (let q = indexOfByte(bytes, b, 0); q >= 0; q = indexOfByte(bytes, b, q + 1)) at.push(q);
      return new SpecialByteFinder(at.sort((x, y) => x - y));
    }
    const n = bytes.length;
    const have = wasm.mem.buffer.byteLength;
    if (have < n + 16) wasm.mem.grow(Math.ceil((n + 16 - have) / PAGE));
    const mem = new Uint8Array(wasm.mem.buffer, 0, n + 16);
    mem.set(bytes);
    mem.fill(0x20, n); // the loop reads up to 15 bytes past the end
    for (let q = wasm.scan(0, n); q >= 0; q = wasm.scan(q + 1, n)) {
      if (bytes[q]! >= 0x80) return null;
      at.push(q);
    }
    return new SpecialByteFinder(at);
  }

  /** True when `[start, end)` holds a special byte. */
  within(start: number, end: number): boolean {
    const at = this.at;
    let i = this.i;
    while (i < at.length && at[i]! < start) i++;
    this.i = i;
    return i < at.length && at[i]! < end;
  }
}

/** Buffer's indexOf is memchr; a plain Uint8Array's is a JS loop (same answer, slower). */
function indexOfByte(bytes: Uint8Array, b: number, from: number): number {
  return bytes.indexOf(b, from);
}
