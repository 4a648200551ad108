// The fuzz harness: seeded, reproducible inputs run through one target each, with the three properties every
// target must keep (#24): nothing thrown but ccpipe's typed errors (CcpError), no input over 2 s, bounded heap.
//
// Environment:
//   FUZZ_SEED   a number, or `random` (a fresh seed, printed). Default 24: `npm test` runs the same inputs each time.
//   FUZZ_SCALE  multiplies every target's input count (default 1; `npm run fuzz` uses 10).
//   FUZZ_CASE   run only this case number (with the seed a failure printed) to replay one input.
//   FUZZ_VERBOSE=1 prints each case number before running it (to find an input that hangs).
import { loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CcpError } from '@ccpipe/core';
import { rng, type Rng } from '../support/rng';

export { rng, type Rng };

function hash32(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** The run's seed: FUZZ_SEED, a fresh one for `random`, else 24. */
export const FUZZ_SEED: number = (() => {
  const v = process.env.FUZZ_SEED;
  if (v === 'random') return Math.floor(Math.random() * 2 ** 31);
  if (v !== undefined && v !== '') {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`FUZZ_SEED must be a non-negative integer or "random", not ${v}`);
    return n;
  }
  return 24;
})();
const SCALE = Number(process.env.FUZZ_SCALE ?? '1');
if (!(SCALE > 0)) throw new Error(`FUZZ_SCALE must be a positive number, not ${process.env.FUZZ_SCALE}`);

/** A jest timeout for a target that takes about `ms` at FUZZ_SCALE=1 on a busy box. */
export const fuzzTimeout = (ms: number): number => Math.ceil(ms * Math.max(1, SCALE));
const ONLY_CASE = process.env.FUZZ_CASE === undefined || process.env.FUZZ_CASE === '' ? undefined : Number(process.env.FUZZ_CASE);

/**
 * Longest a single input may take, in CPU time of this process: on a 2-core box shared with other jobs, wall time
 * stretched 5× (a run of 12 s of CPU took 69 s), which would fail inputs for the machine's sake.
 */
export const MAX_CASE_MS = 2_000;
/** Heap (after a full GC) may grow by this much over a target's run. */
export const MAX_HEAP_GROWTH_MB = 256;
/** A target stops after this many failures: one defect usually fails many inputs. */
const MAX_FAILURES = 5;

// A full GC between samples, so the heap figure is what is live, not garbage not yet collected.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** One fuzz target: how to make case `i`'s input, and what to do with it. */
export interface FuzzTarget<T> {
  name: string;
  /** Inputs at FUZZ_SCALE=1. */
  count: number;
  generate(r: Rng, i: number): T;
  /** Runs one input; throws (anything) to fail it, except a CcpError, which is a correct refusal. */
  run(input: T): void | Promise<void>;
  /** A short, printable excerpt of an input for the failure report. */
  describe(input: T): string;
  /** Sync targets yield to the event loop this often (jsdom frees closed windows only then). Default 0: never. */
  yieldEvery?: number;
  /** Run only the cases i with i % of === index (a costly target dealt to several test files, run in parallel). */
  shard?: { index: number; of: number };
}

/** What a failed input looked like. */
export interface FuzzFailure {
  case: number;
  kind: 'untyped-error' | 'slow' | 'heap';
  message: string;
  input: string;
}

/** The outcome of one target's run. */
export interface FuzzReport {
  target: string;
  seed: number;
  cases: number;
  /** Inputs that ended in a CcpError (a typed refusal). */
  refused: number;
  failures: FuzzFailure[];
  wallMs: number;
  cpuMs: number;
  /** CPU time of the slowest input. */
  slowestMs: number;
  heapGrowthMb: number;
}

/** The input of case `i` of `target` for `seed`: each case has its own generator, so one can be replayed alone. */
export function caseRng(seed: number, target: string, i: number): Rng {
  return rng((seed ^ hash32(target) ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0);
}

/** Runs a target and reports; never throws for a failing input (the caller asserts on `failures`). */
export async function fuzz<T>(target: FuzzTarget<T>): Promise<FuzzReport> {
  const total = Math.max(1, Math.round(target.count * SCALE));
  const { index: shard, of: shards } = target.shard ?? { index: 0, of: 1 };
  // this shard's case numbers: shard, shard + shards, …; a replayed case runs in the shard that holds it
  const cases = ONLY_CASE !== undefined ? (ONLY_CASE % shards === shard ? [ONLY_CASE] : [])
    : Array.from({ length: Math.ceil((total - shard) / shards) }, (_, k) => shard + k * shards);
  const count = cases.length;
  const name = shards > 1 ? `${target.name} [${shard + 1}/${shards}]` : target.name;
  const failures: FuzzFailure[] = [];
  let refused = 0;
  let slowestMs = 0;
  gc();
  const baseHeap = process.memoryUsage().heapUsed;
  let heapGrowthMb = 0;
  const sampleEvery = Math.max(50, Math.floor(count / 20));
  // printed before the run too, so that a run killed by a hang can be replayed
  process.stdout.write(`fuzz ${name}: seed=${FUZZ_SEED} cases=${count} starting\n`);
  const verbose = process.env.FUZZ_VERBOSE === '1';
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  for (let k = 0; k < count && failures.length < MAX_FAILURES; k++) {
    const i = cases[k]!;
    const input = target.generate(caseRng(FUZZ_SEED, target.name, i), i);
    if (verbose) process.stdout.write(`fuzz ${name}: case ${i}\n`);
    const started = process.cpuUsage();
    const wallStart = performance.now();
    try {
      await target.run(input);
    } catch (err) {
      if (err instanceof CcpError) refused++;
      else failures.push({ case: i, kind: 'untyped-error', message: describeError(err), input: target.describe(input) });
    }
    const ms = cpuOf(process.cpuUsage(started));
    if (ms > slowestMs) slowestMs = ms;
    if (ms > MAX_CASE_MS) {
      const wall = Math.round(performance.now() - wallStart);
      failures.push({ case: i, kind: 'slow', message: `took ${Math.round(ms)} ms of CPU (${wall} ms wall)`, input: target.describe(input) });
    }
    if (target.yieldEvery && k % target.yieldEvery === 0) await new Promise(setImmediate);
    if (k % sampleEvery === sampleEvery - 1 || k === count - 1) {
      await new Promise(setImmediate);
      gc();
      heapGrowthMb = Math.max(heapGrowthMb, (process.memoryUsage().heapUsed - baseHeap) / 2 ** 20);
      if (heapGrowthMb > MAX_HEAP_GROWTH_MB) {
        failures.push({ case: i, kind: 'heap', message: `heap grew ${Math.round(heapGrowthMb)} MB`, input: target.describe(input) });
        break;
      }
    }
  }
  const report: FuzzReport = {
    target: target.name, seed: FUZZ_SEED, cases: count, refused, failures,
    wallMs: Math.round(performance.now() - t0), cpuMs: Math.round(cpuOf(process.cpuUsage(cpu0))), slowestMs: Math.round(slowestMs), heapGrowthMb: Math.round(heapGrowthMb),
  };
  // One line per target, so a run's figures and its seed are in the log even when it passes.
  // The load average too: on a shared box it inflates CPU time as well as wall time.
  process.stdout.write(`fuzz ${name}: seed=${report.seed} cases=${report.cases} refused=${report.refused} `
    + `failures=${failures.length} wall=${report.wallMs}ms cpu=${report.cpuMs}ms slowest=${report.slowestMs}ms heap+${report.heapGrowthMb}MB `
    + `load=${loadavg().map((l) => l.toFixed(1)).join('/')}\n`);
  return report;
}

/** The failures of a report as one readable block, with the command that replays each. */
export function explain(report: FuzzReport, testFile: string): string {
  return report.failures
    .map((f) => `case ${f.case} (${f.kind}): ${f.message}\n  input: ${f.input}\n  replay: FUZZ_SEED=${report.seed} FUZZ_CASE=${f.case} npx jest ${testFile} -t '${report.target}'`)
    .join('\n');
}

const cpuOf = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1000;

function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message.slice(0, 300)}${err.stack ? `\n  ${err.stack.split('\n').slice(1, 4).join('\n  ')}` : ''}`;
  return String(err).slice(0, 300);
}

/** A printable excerpt: control and non-ASCII characters escaped, long inputs cut in the middle. */
export function excerpt(s: string | Uint8Array, max = 240): string {
  const t = typeof s === 'string' ? s : Buffer.from(s).toString('latin1');
  const cut = t.length > max ? `${t.slice(0, max / 2)}…[${t.length} chars]…${t.slice(-max / 2)}` : t;
  return JSON.stringify(cut);
}

// ---- mutations shared by the targets ----

/** Characters that break parsers: controls, quotes, separators, escapes, non-ASCII, lone surrogates. */
export const NASTY_CHARS = [
  '\u0000', '\u0001', '\u0007', '\t', '\n', '\r', '\u001f', '\u007f', '\u0085', '\u00a0', '\u00e9', '\u2028', '\ud800', '\udfff',
  '\ufeff', '\uffff', '😀', '"', "'", '\\', '{', '}', '[', ']', ':', ',', ' ', '%', '%2', '%zz', '<', '>', '&', '#', '?', '/', '=', '-', '0', '9',
];

/** Applies 1–4 random edits to `s`: replace/insert/delete characters, duplicate, repeat or cut a piece, splice another seed. */
export function mutateString(r: Rng, s: string, extra: readonly string[] = [], donors: readonly string[] = []): string {
  const tokens = extra.length > 0 ? extra : NASTY_CHARS;
  let out = s;
  for (let k = 1 + r.next(4); k > 0; k--) {
    const at = r.next(out.length + 1);
    switch (r.next(9)) {
      case 0: out = out.slice(0, at) + r.pick(NASTY_CHARS) + out.slice(at + 1); break;
      case 1: out = out.slice(0, at) + r.pick(tokens) + out.slice(at); break;
      case 2: out = out.slice(0, at) + out.slice(at + 1 + r.next(16)); break;
      case 3: out = out.slice(0, at); break; // truncate
      case 4: { const len = 1 + r.next(32); out = out.slice(0, at) + out.slice(at, at + len).repeat(2) + out.slice(at); break; }
      case 5: { const len = 1 + r.next(8); out = out.slice(0, at) + out.slice(at, at + len).repeat(1 + r.next(200)) + out.slice(at); break; }
      case 6: if (donors.length > 0) { const d = r.pick(donors); const from = r.next(d.length + 1); out = out.slice(0, at) + d.slice(from, from + r.next(64)) + out.slice(at); } break;
      case 7: out = out.slice(0, at) + String.fromCharCode(r.next(0x80)) + out.slice(at + 1); break;
      default: out = out.slice(0, at) + r.pick(tokens) + out.slice(at + r.next(4)); break;
    }
  }
  return out;
}

/** Applies 1–4 random edits to a copy of `b`: bit flips, byte sets, inserts, deletes, cuts, repeats. */
export function mutateBytes(r: Rng, b: Uint8Array): Uint8Array {
  let out = Buffer.from(b);
  for (let k = 1 + r.next(4); k > 0; k--) {
    const at = r.next(out.length + 1);
    switch (r.next(6)) {
      case 0: if (at < out.length) out[at]! ^= 1 << r.next(8); break;
      case 1: if (at < out.length) out[at] = r.pick([0, 0xff, 0x0a, 0x0d, 0x20, 0x7f, 0x80, r.next(256)]); break;
      case 2: out = Buffer.concat([out.subarray(0, at), Buffer.from(Array.from({ length: 1 + r.next(8) }, () => r.next(256))), out.subarray(at)]); break;
      case 3: out = Buffer.concat([out.subarray(0, at), out.subarray(at + 1 + r.next(64))]); break;
      case 4: out = out.subarray(0, at); break;
      default: { const len = 1 + r.next(64); out = Buffer.concat([out.subarray(0, at), out.subarray(at, at + len), out.subarray(at)]); break; }
    }
  }
  return out;
}
