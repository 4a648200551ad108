import { CDX_FIELD_ORDER } from './cdx-line';
import { gunzipInto } from './gunzip-into';

// The block fast path's line scan (cdx-block.ts), in WebAssembly. Real CC lines are ASCII, escape-free and in one
// layout, and once the filter's gate spares making most records, finding where their values are is most of a block's
// parse: in JS (string indexOf for the value ends, 8-byte key compares, a separate SIMD pass for special bytes) it
// measured 340–440 ns a line, and a JS byte loop costs ≈1.2 ns a byte, as much as inflating the bytes; here, with
// 16-byte SIMD searches that also check for backslashes, control and non-ASCII bytes, ≈75–100 ns a line, plus
// ≈20 ns for the block's copy into the module's memory (docs/cdx.md). WebAssembly is part of the JS engine (no I/O, nothing loaded at
// run time): the module is assembled below from its listing. Where it cannot be compiled (no SIMD), no line is taken
// and all go through the line parser, which gives the same records (slower).

/** The module, as WebAssembly text (the bytes are assembled from it by {@link lineModule}):
 * ```wat
 * (module
 *   (memory (export "mem") 1)
 *   ;; Memory: the key table at 0 (per key k of CDX_FIELD_ORDER: what precedes its value at 64k — `{"url": "`,
 *   ;; `, "mime": "`, … —, its length at 64k+32, and the offsets of the 2nd and 3rd 8-byte words compared, 64k+36 and
 *   ;; 64k+40); a line's values at 896; the block from 1024 on, then 48 bytes of `\n` that end every search.
 *
 *   ;; First offset from $p of byte $a.
 *   (func $find (param $p i32) (param $a i32) (result i32)
 *     (local $va v128) (local $m i32)
 *     (local.set $va (i8x16.splat (local.get $a)))
 *     (loop $next
 *       (if (local.tee $m (i8x16.bitmask (i8x16.eq (v128.load (local.get $p)) (local.get $va))))
 *         (then (return (i32.add (local.get $p) (i32.ctz (local.get $m))))))
 *       (local.set $p (i32.add (local.get $p) (i32.const 16)))
 *       (br $next))
 *     (unreachable))
 *
 *   ;; First offset from $p of byte $a, a backslash, a control byte (`\n` too) or a byte ≥ 0x80 (lt_s: < 0). Written
 *   ;; out in $line at both its uses, with the splats as constants (a call per value measured ≈5% of the parse).
 *   (func $stop (param $p i32) (param $a i32) (result i32)
 *     (local $va v128) (local $v v128) (local $m i32)
 *     (local.set $va (i8x16.splat (local.get $a)))
 *     (loop $next
 *       (local.set $v (v128.load (local.get $p)))
 *       (if (local.tee $m (i8x16.bitmask (v128.or (v128.or (i8x16.eq (local.get $v) (local.get $va))
 *             (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c)))) (i8x16.lt_s (local.get $v) (i8x16.splat (i32.const 0x20))))))
 *         (then (return (i32.add (local.get $p) (i32.ctz (local.get $m))))))
 *       (local.set $p (i32.add (local.get $p) (i32.const 16)))
 *       (br $next))
 *     (unreachable))
 *
 *   ;; The line from $s (an offset in the block): ((its `\n` − 1024) << 1) | 1 when it is in Common Crawl's layout and
 *   ;; holds no backslash, control or non-ASCII byte — 896 then holds its first space and, per key k, its value's start
 *   ;; and end at 900+8k and 904+8k, or −1 at 900+8k for a key it lacks, all less 1024 —; else (its `\n` − 1024) << 1.
 *   (func $line (export "line") (param $s i32) (result i32)
 *     (local $sp1 i32) (local $p i32) (local $k i32) (local $vs i32) (local $ve i32) (local $t i32)
 *     (block $fail
 *       ;; the SURT ends at the first space; 14 digits and a space follow
 *       (br_if $fail (i32.ne (i32.load8_u (local.tee $sp1 (call $stop (local.get $s) (i32.const 0x20)))) (i32.const 0x20)))
 *       (br_if $fail (i32.eq (local.get $sp1) (local.get $s)))
 *       (local.set $t (i32.const 1))
 *       (loop $digit
 *         (br_if $fail (i32.ge_u (i32.sub (i32.load8_u (i32.add (local.get $sp1) (local.get $t))) (i32.const 48)) (i32.const 10)))
 *         (br_if $digit (i32.lt_u (local.tee $t (i32.add (local.get $t) (i32.const 1))) (i32.const 15))))
 *       (br_if $fail (i32.ne (i32.load8_u offset=15 (local.get $sp1)) (i32.const 0x20)))
 *       (local.set $p (i32.add (local.get $sp1) (i32.const 16)))
 *       (loop $keys
 *         ;; the next key whose pattern is at $p (three 8-byte compares); the keys before it are absent
 *         (loop $skip
 *           (br_if $fail (i32.ge_u (local.get $k) (i32.const 13)))
 *           (if (i32.eqz (i32.and (i32.and
 *                 (i64.eq (i64.load (local.get $p)) (i64.load (local.tee $t (i32.shl (local.get $k) (i32.const 6)))))
 *                 (i64.eq (i64.load (i32.add (local.get $p) (i32.load offset=36 (local.get $t))))
 *                         (i64.load (i32.add (local.get $t) (i32.load offset=36 (local.get $t))))))
 *                 (i64.eq (i64.load (i32.add (local.get $p) (i32.load offset=40 (local.get $t))))
 *                         (i64.load (i32.add (local.get $t) (i32.load offset=40 (local.get $t)))))))
 *             (then
 *               (i32.store offset=900 (i32.shl (local.get $k) (i32.const 3)) (i32.const -1))
 *               (local.set $k (i32.add (local.get $k) (i32.const 1)))
 *               (br $skip))))
 *         (local.set $vs (i32.add (local.get $p) (i32.load offset=32 (local.get $t))))
 *         (if (i32.lt_u (i32.sub (local.get $k) (i32.const 5)) (i32.const 2))
 *           (then ;; length, offset: 1 to 15 digits
 *             (local.set $ve (local.get $vs))
 *             (loop $num
 *               (if (i32.lt_u (i32.sub (i32.load8_u (local.get $ve)) (i32.const 48)) (i32.const 10))
 *                 (then (local.set $ve (i32.add (local.get $ve) (i32.const 1))) (br $num))))
 *             (br_if $fail (i32.eq (local.get $ve) (local.get $vs)))
 *             (br_if $fail (i32.gt_u (i32.sub (local.get $ve) (local.get $vs)) (i32.const 15))))
 *           (else (local.set $ve (call $stop (local.get $vs) (i32.const 0x22)))))
 *         (br_if $fail (i32.ne (i32.load8_u (local.get $ve)) (i32.const 0x22)))
 *         (i32.store offset=900 (i32.shl (local.get $k) (i32.const 3)) (i32.sub (local.get $vs) (i32.const 1024)))
 *         (i32.store offset=904 (i32.shl (local.get $k) (i32.const 3)) (i32.sub (local.get $ve) (i32.const 1024)))
 *         (local.set $k (i32.add (local.get $k) (i32.const 1)))
 *         ;; the line ends with `}` right after a value
 *         (br_if $keys (i32.eqz (i32.and
 *           (i32.eq (i32.load8_u (local.tee $p (i32.add (local.get $ve) (i32.const 1)))) (i32.const 0x7d))
 *           (i32.eq (i32.load8_u offset=1 (local.get $p)) (i32.const 0x0a))))))
 *       (loop $rest
 *         (if (i32.lt_u (local.get $k) (i32.const 13))
 *           (then
 *             (i32.store offset=900 (i32.shl (local.get $k) (i32.const 3)) (i32.const -1))
 *             (local.set $k (i32.add (local.get $k) (i32.const 1)))
 *             (br $rest))))
 *       ;; url and filename (k = 7) present and not empty, length (5) and offset (6) present
 *       (br_if $fail (i32.eq (i32.load offset=900 (i32.const 0)) (i32.const -1)))
 *       (br_if $fail (i32.eq (i32.load offset=900 (i32.const 0)) (i32.load offset=904 (i32.const 0))))
 *       (br_if $fail (i32.eq (i32.load offset=956 (i32.const 0)) (i32.const -1)))
 *       (br_if $fail (i32.eq (i32.load offset=956 (i32.const 0)) (i32.load offset=960 (i32.const 0))))
 *       (br_if $fail (i32.eq (i32.load offset=940 (i32.const 0)) (i32.const -1)))
 *       (br_if $fail (i32.eq (i32.load offset=948 (i32.const 0)) (i32.const -1)))
 *       (i32.store offset=896 (i32.const 0) (i32.sub (local.get $sp1) (i32.const 1024)))
 *       (return (i32.or (i32.shl (i32.sub (i32.add (local.get $p) (i32.const 1)) (i32.const 1024)) (i32.const 1)) (i32.const 1))))
 *     (i32.shl (i32.sub (call $find (local.get $s) (i32.const 0x0a)) (i32.const 1024)) (i32.const 1))))
 * ```
 * Reads past a line's `\n` never let a line in: no key pattern, digit, space, quote or `}` is a `\n`, and every byte
 * of a line taken was checked (SURT and values by $stop, the rest by exact compares). cdx-block.test.ts holds the
 * records it leads to to the line parser's, on every real corpus line and thousands of randomly edited ones.
 */
function lineModule(): Uint8Array {
  const leb = (n: number): number[] => {
    const out: number[] = [];
    do {
      const b = n & 0x7f;
      n >>>= 7;
      out.push(n !== 0 ? b | 0x80 : b);
    } while (n !== 0);
    return out;
  };
  const sleb = (n: number): number[] => {
    const out: number[] = [];
    for (;;) {
      const b = n & 0x7f;
      n >>= 7;
      if ((n === 0 && (b & 0x40) === 0) || (n === -1 && (b & 0x40) !== 0)) return [...out, b];
      out.push(b | 0x80);
    }
  };
  const section = (id: number, body: number[]): number[] => [id, ...leb(body.length), ...body];
  const name = (s: string): number[] => [s.length, ...Array.from(s, (ch) => ch.charCodeAt(0))];
  const simd = (op: number): number[] => [0xfd, ...leb(op)];
  const [I32, V128, BLOCK, LOOP, IF, ELSE, END, BR, BR_IF, RETURN, CALL, VOID, UNREACHABLE] = [0x7f, 0x7b, 0x02, 0x03, 0x04, 0x05, 0x0b, 0x0c, 0x0d, 0x0f, 0x10, 0x40, 0x00];
  const [GET, SET, TEE] = [0x20, 0x21, 0x22];
  const [EQZ, EQ, NE, LT_U, GT_U, GE_U, I64EQ, CTZ, ADD, SUB, AND, OR, SHL] = [0x45, 0x46, 0x47, 0x49, 0x4b, 0x4f, 0x51, 0x68, 0x6a, 0x6b, 0x71, 0x72, 0x74];
  const [V_LOAD, V_SPLAT, V_EQ, V_LT_S, V_OR, V_BITMASK] = [0x00, 0x0f, 0x23, 0x25, 0x50, 0x64];
  const c = (n: number): number[] => [0x41, ...sleb(n)];
  const load8 = (offset = 0): number[] => [0x2d, 0, ...leb(offset)];
  const load32 = (offset = 0): number[] => [0x28, 2, ...leb(offset)];
  const load64 = [0x29, 0, 0];
  const store32 = (offset: number): number[] => [0x36, 2, ...leb(offset)];
  const FIND = 0;
  // $find: params p 0, a 1; locals va 2 (v128), m 3
  const find = [
    2, 1, V128, 1, I32,
    GET, 1, ...simd(V_SPLAT), SET, 2,
    LOOP, VOID,
    GET, 0, ...simd(V_LOAD), 0, 0, GET, 2, ...simd(V_EQ), ...simd(V_BITMASK), TEE, 3,
    IF, VOID, GET, 0, GET, 3, CTZ, ADD, RETURN, END,
    GET, 0, ...c(16), ADD, SET, 0,
    BR, 0,
    END,
    UNREACHABLE,
    END,
  ];
  // $line: param s 0; locals sp1 1, p 2, k 3, vs 4, ve 5, t 6, m 7, v 8 (v128)
  const [S, SP1, P, K, VS, VE, T, M, V] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  const constSplat = (byte: number): number[] => [...simd(0x0c), ...new Array<number>(16).fill(byte)];
  // $stop written out: local r, from where it is, to the first byte a, `\`, control or non-ASCII
  const stopAt = (r: number, a: number): number[] => [
    BLOCK, VOID,
    LOOP, VOID,
    GET, r, ...simd(V_LOAD), 0, 0, SET, V,
    GET, V, ...constSplat(a), ...simd(V_EQ), GET, V, ...constSplat(0x5c), ...simd(V_EQ), ...simd(V_OR),
    GET, V, ...constSplat(0x20), ...simd(V_LT_S), ...simd(V_OR), ...simd(V_BITMASK), TEE, M,
    IF, VOID, GET, r, GET, M, CTZ, ADD, SET, r, BR, 2, END,
    GET, r, ...c(16), ADD, SET, r,
    BR, 0,
    END,
    END,
  ];
  const storeKey = (end: boolean, value: number[]): number[] => [GET, K, ...c(3), SHL, ...value, ...store32(SLOT + 4 + (end ? 4 : 0))];
  const valueAt = (k: number, end: boolean): number[] => [...c(0), ...load32(SLOT + 4 + 8 * k + (end ? 4 : 0))];
  const word = (off: number): number[] => [GET, P, GET, T, ...load32(off), ADD, ...load64, GET, T, GET, T, ...load32(off), ADD, ...load64, I64EQ];
  const nextKey = [GET, K, ...c(1), ADD, SET, K];
  const line = [
    2, 7, I32, 1, V128,
    BLOCK, VOID, // $fail
    GET, S, SET, SP1, ...stopAt(SP1, 0x20),
    GET, SP1, ...load8(), ...c(0x20), NE, BR_IF, 0,
    GET, SP1, GET, S, EQ, BR_IF, 0,
    ...c(1), SET, T,
    LOOP, VOID, // $digit
    GET, SP1, GET, T, ADD, ...load8(), ...c(48), SUB, ...c(10), GE_U, BR_IF, 1,
    GET, T, ...c(1), ADD, TEE, T, ...c(15), LT_U, BR_IF, 0,
    END,
    GET, SP1, ...load8(15), ...c(0x20), NE, BR_IF, 0,
    GET, SP1, ...c(16), ADD, SET, P,
    LOOP, VOID, // $keys
    LOOP, VOID, // $skip
    GET, K, ...c(13), GE_U, BR_IF, 2,
    GET, P, ...load64, GET, K, ...c(6), SHL, TEE, T, ...load64, I64EQ,
    ...word(36), AND, ...word(40), AND,
    EQZ, IF, VOID,
    ...storeKey(false, c(-1)), ...nextKey, BR, 1,
    END,
    END, // $skip
    GET, P, GET, T, ...load32(32), ADD, SET, VS,
    GET, K, ...c(5), SUB, ...c(2), LT_U, IF, VOID,
    GET, VS, SET, VE,
    LOOP, VOID, // $num
    GET, VE, ...load8(), ...c(48), SUB, ...c(10), LT_U, IF, VOID, GET, VE, ...c(1), ADD, SET, VE, BR, 1, END,
    END,
    GET, VE, GET, VS, EQ, BR_IF, 2,
    GET, VE, GET, VS, SUB, ...c(15), GT_U, BR_IF, 2,
    ELSE,
    GET, VS, SET, VE, ...stopAt(VE, 0x22),
    END,
    GET, VE, ...load8(), ...c(0x22), NE, BR_IF, 1,
    ...storeKey(false, [GET, VS, ...c(BASE), SUB]),
    ...storeKey(true, [GET, VE, ...c(BASE), SUB]),
    ...nextKey,
    GET, VE, ...c(1), ADD, TEE, P, ...load8(), ...c(0x7d), EQ, GET, P, ...load8(1), ...c(0x0a), EQ, AND, EQZ, BR_IF, 0,
    END, // $keys
    LOOP, VOID, // $rest
    GET, K, ...c(13), LT_U, IF, VOID, ...storeKey(false, c(-1)), ...nextKey, BR, 1, END,
    END,
    ...valueAt(0, false), ...c(-1), EQ, BR_IF, 0,
    ...valueAt(0, false), ...valueAt(0, true), EQ, BR_IF, 0,
    ...valueAt(7, false), ...c(-1), EQ, BR_IF, 0,
    ...valueAt(7, false), ...valueAt(7, true), EQ, BR_IF, 0,
    ...valueAt(5, false), ...c(-1), EQ, BR_IF, 0,
    ...valueAt(6, false), ...c(-1), EQ, BR_IF, 0,
    ...c(0), GET, SP1, ...c(BASE), SUB, ...store32(SLOT),
    GET, P, ...c(1), ADD, ...c(BASE), SUB, ...c(1), SHL, ...c(1), OR, RETURN,
    END, // $fail
    GET, S, ...c(0x0a), CALL, FIND, ...c(BASE), SUB, ...c(1), SHL,
    END,
  ];
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [2, 0x60, 2, I32, I32, 1, I32, 0x60, 1, I32, 1, I32]), // type 0: (i32, i32) -> i32; type 1: (i32) -> i32
    ...section(3, [2, 0, 1]), // find: type 0; line: type 1
    ...section(5, [1, 0x00, 1]), // memory 0: 1 page, no maximum
    ...section(7, [2, ...name('line'), 0x00, 1, ...name('mem'), 0x02, 0]),
    ...section(10, [2, ...leb(find.length), ...find, ...leb(line.length), ...line]),
  ]);
}

/** Where a line's values are written in the module's memory, and where the block starts. */
const SLOT = 896;
const BASE = 1024;
/** `\n`s after the block: the searches read 16 bytes at a time, the key compares up to 24 bytes past a line. */
const PAD = 48;
const PAGE = 65536;

interface LineExports {
  mem: { buffer: ArrayBuffer; grow(pages: number): number };
  line(s: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
}

function instantiate(): LineExports | null {
  const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (api === undefined) return null;
  let exports: LineExports;
  try {
    exports = new api.Instance(new api.Module(lineModule())).exports as LineExports;
  } catch {
    return null; // an engine without WebAssembly SIMD
  }
  const mem = Buffer.from(exports.mem.buffer);
  for (const [k, key] of CDX_FIELD_ORDER.entries()) {
    const len = mem.write(`${k === 0 ? '{' : ', '}"${key}": "`, 64 * k, 'latin1'); // 9 to 20 bytes
    mem.writeInt32LE(len, 64 * k + 32);
    mem.writeInt32LE(Math.min(8, len - 8), 64 * k + 36);
    mem.writeInt32LE(len - 8, 64 * k + 40);
  }
  return exports;
}

let wasm: LineExports | null | undefined;

/** The module's memory for a block of `n` bytes, from {@link BASE} (grown when short: views of it made before are then empty). */
function blockMemory(w: LineExports, n: number): Buffer {
  const have = w.mem.buffer.byteLength;
  if (have < BASE + n + PAD) w.mem.grow(Math.ceil((BASE + n + PAD - have) / PAGE));
  return Buffer.from(w.mem.buffer, BASE, n);
}

/** Whether the WebAssembly scan is in use (false: every line takes the line parser). */
export function usesWebAssembly(): boolean {
  if (wasm === undefined) wasm = instantiate();
  return wasm !== null;
}

/**
 * The lines of one block for the fast path: the block is in the module's memory (copied there, or inflated there by
 * {@link BlockLineScan.inflate}), which grows to the largest block scanned (≈1.6 MB for CC's 3,000 lines) and stays.
 * One at a time: a scan's answers, and the bytes of a block inflated into the memory, are good until the next scan is
 * made. Not exported from the package.
 */
export class BlockLineScan {
  /** `[0]`: the first space of the last line taken; `[1 + 2k]`, `[2 + 2k]`: see {@link CdxLineGate.drop}'s `at`. */
  readonly values: Int32Array;

  private constructor(readonly bytes: Buffer, private readonly wasm: LineExports | null) {
    this.values = wasm === null ? new Int32Array(1 + 2 * CDX_FIELD_ORDER.length) : new Int32Array(wasm.mem.buffer, SLOT, 1 + 2 * CDX_FIELD_ORDER.length);
  }

  /** @param useWasm false takes no line (tests: the line parser alone). */
  static of(bytes: Buffer, useWasm = true): BlockLineScan {
    if (wasm === undefined) wasm = instantiate();
    if (!useWasm || wasm === null) return new BlockLineScan(bytes, null);
    const n = bytes.length;
    if (bytes.buffer !== wasm.mem.buffer || bytes.byteOffset !== BASE) {
      blockMemory(wasm, n).set(bytes);
    }
    new Uint8Array(wasm.mem.buffer, BASE + n, PAD).fill(0x0a);
    return new BlockLineScan(bytes, wasm);
  }

  /**
   * The scan of a gzip block inflated straight into the module's memory ({@link gunzipInto}: no new Buffer for the block,
   * no copy), or of its bytes copied there when they did not land there; null without WebAssembly (the caller inflates).
   * {@link bytes} is then a view of the module's memory: good until the next scan.
   * @throws the zlib error when `gz` is not gzip.
   */
  static inflate(gz: Uint8Array): BlockLineScan | null {
    if (wasm === undefined) wasm = instantiate();
    if (wasm === null) return null;
    const w = wasm;
    return BlockLineScan.of(gunzipInto(gz, (n) => blockMemory(w, n)));
  }

  /**
   * The line that starts at offset `s`: `(end << 1) | 1` when it is in Common Crawl's layout (the keys of
   * CDX_FIELD_ORDER in that order, `", "` and `": "` separators, 1–15 digit length/offset, url and filename not empty,
   * nothing after `}`) and holds no backslash, control or non-ASCII byte — {@link values} then says where its values
   * are —, else `end << 1`; `end` is the offset of its `\n`, or of the block's end.
   */
  line(s: number): number {
    if (this.wasm !== null) return this.wasm.line(BASE + s);
    const nl = this.bytes.indexOf(0x0a, s);
    return (nl < 0 ? this.bytes.length : nl) << 1;
  }
}
