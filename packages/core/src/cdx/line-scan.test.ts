import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { rng } from '../../../../tests/support/rng';
import { CDX_FIELD_ORDER, parseCdxLine } from './cdx-line';
import { BlockLineScan, usesWebAssembly } from './line-scan';

const CORPUS = join(resolve(__dirname, '../../../..'), '../shared/corpus');
const REAL = readFileSync(join(CORPUS, 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'), 'utf8').split('\n').filter((l) => l.length > 0);

/** Each line of `bytes` as the scan answers it: [start, end, taken]. */
function scanLines(bytes: Buffer, useWasm = true): Array<[number, number, boolean]> {
  const scan = BlockLineScan.of(bytes, useWasm);
  const out: Array<[number, number, boolean]> = [];
  for (let s = 0; s < bytes.length; ) {
    const r = scan.line(s);
    out.push([s, r >> 1, (r & 1) === 1]);
    s = (r >> 1) + 1;
  }
  return out;
}

describe('BlockLineScan (the block fast path\'s WebAssembly line scan)', () => {
  test('the WebAssembly SIMD module compiles on Node 20 (else every line would take the line parser)', () => {
    expect(usesWebAssembly()).toBe(true);
  });

  test('every real line is taken, and its values are where the line parser finds them', () => {
    const bytes = Buffer.from(`${REAL.join('\n')}\n`, 'latin1');
    const scan = BlockLineScan.of(bytes);
    let s = 0;
    for (const line of REAL) {
      const r = scan.line(s);
      expect([r & 1, r >> 1]).toEqual([1, s + line.length]);
      const rec = parseCdxLine(line);
      const v = scan.values;
      expect(bytes.toString('latin1', s, v[0])).toBe(rec.surt);
      const json = JSON.parse(line.slice(line.indexOf('{'))) as Record<string, string>;
      CDX_FIELD_ORDER.forEach((key, k) => {
        const got = v[1 + 2 * k]! < 0 ? undefined : bytes.toString('latin1', v[1 + 2 * k], v[2 + 2 * k]);
        expect([key, got]).toEqual([key, json[key]]);
      });
      s += line.length + 1;
    }
  });

  test('a backslash, a control byte or a byte above 0x7f anywhere in a line (never a `\\n`) makes it not taken, it alone', () => {
    const line = REAL[7]!;
    const plain = Buffer.from(`${line}\n${line}\n${line}`, 'latin1');
    for (const b of [0x00, 0x09, 0x0d, 0x1f, 0x5c, 0x80, 0xc3, 0xff]) {
      for (let at = line.length + 1; at < 2 * line.length + 1; at++) {
        const bytes = Buffer.from(plain);
        bytes[at] = b;
        const lines = scanLines(bytes);
        const n = line.length;
        expect(lines).toEqual([[0, n, true], [n + 1, 2 * n + 1, false], [2 * n + 2, 3 * n + 2, true]]);
      }
    }
  });

  test('a short block after a long one does not see the long one\'s bytes left in the module\'s memory', () => {
    const long = Buffer.from(`${REAL.slice(0, 500).join('\n')}\n`, 'latin1');
    expect(scanLines(long).every(([, , taken]) => taken)).toBe(true);
    // the same line cut short: what followed it in memory must not complete it
    const cut = REAL[0]!.slice(0, -2);
    expect(scanLines(Buffer.from(cut, 'latin1'))).toEqual([[0, cut.length, false]]);
    expect(scanLines(Buffer.from(`${cut}\n`, 'latin1'))).toEqual([[0, cut.length, false]]);
  });

  test('a gzip block inflated by BlockLineScan.inflate is read where it lands, in the module\'s memory: the same lines as a copy', () => {
    const text = Buffer.from(`${REAL.join('\n')}\n`, 'latin1');
    const want = scanLines(text);
    for (const bytes of [text, text.subarray(0, 20000), text]) {
      const scan = BlockLineScan.inflate(gzipSync(bytes))!;
      // the module's memory: whole 64 KiB pages, the block at 1024 (else the inflated block was copied there)
      expect([scan.bytes.byteOffset, scan.bytes.buffer.byteLength % 65536, scan.bytes.equals(bytes)]).toEqual([1024, 0, true]);
      const got: Array<[number, number, boolean]> = [];
      for (let s = 0; s < bytes.length; ) {
        const r = scan.line(s);
        got.push([s, r >> 1, (r & 1) === 1]);
        s = (r >> 1) + 1;
      }
      expect(got).toEqual(want.filter(([s]) => s < bytes.length).map(([s, e, taken]) => (e < bytes.length ? [s, e, taken] : [s, bytes.length, false])));
    }
  });

  test('line ends: empty lines, a last line without `\\n`, CRLF, lines of random bytes; without WebAssembly none is taken', () => {
    const r = rng(2501);
    for (let round = 0; round < 200; round++) {
      const parts: string[] = [];
      for (let i = r.next(8); i > 0; i--) parts.push(r.pick(['', '\r', r.pick(REAL), `${r.pick(REAL)}\r`, String.fromCharCode(...Array.from({ length: r.next(90) }, () => 32 + r.next(95)))]));
      const text = parts.join('\n') + (r.chance(0.5) ? '\n' : '');
      const bytes = Buffer.from(text, 'latin1');
      const ends = [...text.matchAll(/\n/g)].map((m) => m.index);
      const want = [...ends, text.length].map((e, i, all) => [i === 0 ? 0 : all[i - 1]! + 1, e]).filter(([s]) => s! < text.length);
      const got = scanLines(bytes);
      expect(got.map(([s, e]) => [s, e])).toEqual(want);
      expect(got.filter(([, , taken]) => taken).length).toBe(parts.filter((p) => REAL.includes(p)).length);
      expect(scanLines(bytes, false)).toEqual(want.map(([s, e]) => [s, e, false]));
    }
  });
});
