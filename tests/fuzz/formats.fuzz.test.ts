// Fuzz (#24): CDX lines and blocks, cluster.idx lines and indexes, URLs. Seeded from the real corpus, mutated and
// generated; see harness.ts for the seed and replay variables. Besides "typed errors only, ≤ 2 s, bounded heap",
// each target checks what the parser promises on the inputs it accepts.
import {
  blocksForSurtPrefix,
  canonicalizeUrl,
  CcpError,
  formatCdxLine,
  formatClusterIdxLine,
  parseCdxLine,
  parseCdxText,
  parseClusterIdx,
  parseClusterIdxLine,
  registeredDomainOf,
  surtOf,
  type CdxRecord,
} from '@ccpipe/core';
import { excerpt, explain, fuzz, fuzzTimeout, mutateString, type Rng } from './harness';
import { cdxLines, clusterIdxLines, urlSeeds } from './seeds';

const FILE = 'tests/fuzz/formats.fuzz.test.ts';
const CDX_KEYS = ['url', 'mime', 'mime-detected', 'status', 'digest', 'length', 'offset', 'filename', 'redirect', 'charset', 'languages', 'encoding', 'truncated', 'x-new', '__proto__', 'constructor', ''];
const CDX_TOKENS = ['", "', '": "', '"', '\\"', '\\\\', '\\u0001', '\\ud800', '\\n', '{', '}', ' ', '\r', '\u0001', '\u001f', '\t', '-1', '1e3', '0x10', '999999999999999999', ...CDX_KEYS.map((k) => `"${k}"`)];

/** The JSON part of a CDX line, as Common Crawl writes it, from key/value pairs in the given order. */
const ccJson = (pairs: Array<[string, unknown]>, compact: boolean): string =>
  `{${pairs.map(([k, v]) => `${JSON.stringify(k)}${compact ? ':' : ': '}${typeof v === 'string' && !compact ? `"${v}"` : JSON.stringify(v)}`).join(compact ? ',' : ', ')}}`;

/** A real line with its JSON part rebuilt: keys shuffled, dropped or added, values retyped or given odd characters. */
function restructureCdx(r: Rng, line: string): string {
  const brace = line.indexOf('{');
  const head = line.slice(0, brace);
  const pairs = Object.entries(JSON.parse(line.slice(brace)) as Record<string, unknown>);
  for (let k = 1 + r.next(3); k > 0; k--) {
    const i = r.next(pairs.length);
    switch (r.next(6)) {
      case 0: pairs.sort(() => r.float() - 0.5); break; // any key order
      case 1: if (pairs.length > 1) { const [p] = pairs.splice(i, 1); pairs.splice(r.next(pairs.length + 1), 0, p!); } break;
      case 2: pairs.splice(i, 1); break;
      case 3: pairs.splice(r.next(pairs.length + 1), 0, [r.pick(CDX_KEYS), r.pick(['', 'x', '1', 'eng,fra', '\u0001'])]); break;
      case 4: if (pairs[i]) pairs[i]![1] = r.pick([1, null, true, ['a'], { a: 'b' }, '', '-5', '12a']); break;
      default: if (pairs[i] && typeof pairs[i]![1] === 'string') {
        const v = pairs[i]![1] as string;
        const at = r.next(v.length + 1);
        pairs[i]![1] = v.slice(0, at) + r.pick(['\u0001', '\u0000', '\u001f', '\t', '\r', '\u007f', 'é', '\u2028', '\ud800']) + v.slice(at);
      }
    }
  }
  // CC's spacing without escapes (the fast scanners), or JSON.stringify's escapes and compact spacing (JSON.parse)
  return head + ccJson(pairs, r.chance(0.25));
}

/** What a record must hold when parseCdxLine accepts a line: what JSON.parse reads from its JSON part. */
function checkAgainstJsonParse(line: string, rec: CdxRecord): void {
  const second = line.indexOf(' ', line.indexOf(' ') + 1);
  const json = line.slice(second + 1).replace(/\r$/, '');
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(json) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`parseCdxLine accepted a line whose JSON part JSON.parse refuses (${(err as Error).message})`);
  }
  for (const [field, key] of [['url', 'url'], ['filename', 'filename'], ['mime', 'mime'], ['status', 'status'], ['digest', 'digest']] as const) {
    if (rec[field] !== obj[key]) throw new Error(`${field} is ${JSON.stringify(rec[field])}, JSON.parse reads ${JSON.stringify(obj[key])}`);
  }
  if (rec.length !== Number(obj.length) || rec.offset !== Number(obj.offset)) throw new Error('length/offset differ from JSON.parse');
}

type CdxInput = { block: boolean; text: string };

describe('fuzz: formats', () => {
  it('CDX lines and blocks', async () => {
    const report = await fuzz<CdxInput>({
      name: 'cdx-line',
      count: 10_000,
      generate(r) {
        const real = cdxLines();
        const line = r.pick(real);
        switch (r.next(8)) {
          case 0: case 1: case 2: return { block: false, text: restructureCdx(r, line) };
          case 3: return { block: false, text: mutateString(r, restructureCdx(r, line), CDX_TOKENS, real) };
          case 4: return { block: true, text: Array.from({ length: 1 + r.next(20) }, () => (r.chance(0.3) ? restructureCdx(r, r.pick(real)) : r.pick(real))).join(r.chance(0.2) ? '\r\n' : '\n') };
          case 5: return { block: true, text: mutateString(r, Array.from({ length: 2 + r.next(8) }, () => r.pick(real)).join('\n'), CDX_TOKENS, real) };
          default: return { block: false, text: mutateString(r, line, CDX_TOKENS, real) };
        }
      },
      run({ block, text }) {
        if (block) {
          const out = parseCdxText(text); // never throws: bad lines are collected
          for (const e of out.errors) if (!(e.error instanceof CcpError)) throw e.error;
          return;
        }
        const rec = parseCdxLine(text, 1);
        checkAgainstJsonParse(text, rec);
        const again = parseCdxLine(formatCdxLine(rec));
        for (const k of ['url', 'filename', 'length', 'offset', 'mime', 'status', 'languages', 'extra'] as const) {
          if (JSON.stringify(again[k]) !== JSON.stringify(rec[k])) throw new Error(`format → parse changed ${k}`);
        }
      },
      describe: (i) => `${i.block ? 'block ' : ''}${excerpt(i.text, 400)}`,
    });
    expect(explain(report, FILE)).toBe('');
  }, fuzzTimeout(120_000));

  it('cluster.idx lines and indexes', async () => {
    const report = await fuzz<{ text: string; prefix: string }>({
      name: 'cluster-idx',
      count: 10_000,
      generate(r) {
        const real = clusterIdxLines();
        const tokens = ['\t', ' ', '\r', '\n', '-', '0', '99999999999999999', ')', ',', '/', '\u0000', 'cdx-00000.gz'];
        const n = r.chance(0.5) ? 1 : 2 + r.next(30);
        const start = r.next(real.length);
        let text = Array.from({ length: n }, (_, k) => real[(start + k) % real.length]!).join('\n');
        if (r.chance(0.9)) text = mutateString(r, text, tokens, real);
        const key = r.pick(real);
        return { text, prefix: key.slice(0, r.next(key.indexOf(' ') + 2)) };
      },
      run({ text, prefix }) {
        if (!text.includes('\n')) {
          const e = parseClusterIdxLine(text, 1);
          const again = parseClusterIdxLine(formatClusterIdxLine(e));
          if (JSON.stringify(again) !== JSON.stringify(e)) throw new Error('format → parse changed the entry');
          return;
        }
        const entries = parseClusterIdx(text);
        const range = blocksForSurtPrefix(entries, prefix);
        if (!(range.start >= 0 && range.start <= range.end && range.end <= entries.length)) throw new Error(`bad range ${JSON.stringify(range)}`);
      },
      describe: (i) => `${excerpt(i.text, 400)} prefix=${excerpt(i.prefix)}`,
    });
    expect(explain(report, FILE)).toBe('');
  }, fuzzTimeout(120_000));

  it('URLs (canonicalizeUrl, surtOf, registeredDomainOf)', async () => {
    const report = await fuzz<{ input: string; base?: string }>({
      name: 'url',
      count: 10_000,
      generate(r) {
        const seeds = urlSeeds();
        const seed = r.pick(seeds);
        const tokens = ['%', '%25', '%2e', '%2E%2e', '%00', '%ff', '%C3%A9', '..', './', '//', '\\', '@', ':', ':65536', ':0', '[', ']', '[::1]', '#', '?', '&', '=', ';jsessionid=1', 'xn--', 'xn--zz', '\u00e9', '\u3002', '\uff0e', '\u0000', ' ', '\t', '\n', 'HTTP://', 'https://', 'file:'];
        const input = r.chance(0.95) ? mutateString(r, seed.input, tokens, seeds.map((s) => s.input)) : seed.input;
        return seed.base === undefined || r.chance(0.5) ? { input } : { input, base: seed.base };
      },
      run({ input, base }) {
        registeredDomainOf(input);
        const c = canonicalizeUrl(input, base);
        const again = canonicalizeUrl(c.url);
        if (again.url !== c.url) throw new Error(`not idempotent: ${JSON.stringify(c.url)} → ${JSON.stringify(again.url)}`);
        surtOf(c.url);
      },
      describe: (i) => `${excerpt(i.input)}${i.base === undefined ? '' : ` base=${excerpt(i.base)}`}`,
    });
    expect(explain(report, FILE)).toBe('');
  }, fuzzTimeout(120_000));
});
