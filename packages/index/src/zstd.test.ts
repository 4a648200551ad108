import { compress, init } from '@bokuweb/zstd-wasm';
import { initZstd, zstdCounters, zstdDecompress } from './zstd';

const text = (n: number): Uint8Array =>
  new TextEncoder().encode(Array.from({ length: n }, (_, i) => `https://www.example-${i % 97}.com/p/${(i * 7919) % 10007}?q=${i % 13}`).join('\n'));

beforeAll(async () => {
  await init();
  expect(await initZstd()).toBe(true);
});

describe('zstdDecompress', () => {
  it('decodes a frame to the same bytes with libzstd-wasm and with fzstd', () => {
    const raw = text(20_000);
    const frame = compress(raw, 3);
    expect(frame.length).toBeLessThan(raw.length / 4);
    const c0 = zstdCounters();
    expect(Buffer.from(zstdDecompress(frame, raw.length, 'wasm')).equals(Buffer.from(raw))).toBe(true);
    const c1 = zstdCounters();
    expect(c1).toEqual({ wasm: c0.wasm + 1, js: c0.js }); // really decoded by libzstd-wasm, no silent fallback
    expect(Buffer.from(zstdDecompress(frame, raw.length, 'js')).equals(Buffer.from(raw))).toBe(true);
    expect(zstdCounters()).toEqual({ wasm: c1.wasm, js: c1.js + 1 });
  });

  it('decodes 500 frames in a row, every one by libzstd-wasm (no fallback after the first calls)', () => {
    const raw = text(3_000);
    const frame = compress(raw, 3);
    const before = zstdCounters().wasm;
    for (let i = 0; i < 500; i++) expect(zstdDecompress(frame, raw.length).length).toBe(raw.length);
    expect(zstdCounters().wasm - before).toBe(500);
  });

  it('rejects a corrupt frame with an error instead of returning garbage', () => {
    const raw = text(2_000);
    const frame = compress(raw, 3);
    const bad = frame.slice();
    bad.fill(0x55, 8, 40);
    expect(() => zstdDecompress(bad, raw.length)).toThrow();
    expect(() => zstdDecompress(frame.subarray(0, frame.length - 10), raw.length)).toThrow();
  });
});
