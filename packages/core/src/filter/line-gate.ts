import type { CdxLineGate } from '../cdx/cdx-block';
import { CDX_FIELD_ORDER } from '../cdx/cdx-line';
import type { DropReason } from './compile-filter';
import type { FilterSpec } from './filter-spec';

/** A rule over a line's raw value bytes; `at` as in {@link CdxLineGate.drop}. */
type ByteRule = (u8: Uint8Array, at: Int32Array) => boolean;

const slot = (key: (typeof CDX_FIELD_ORDER)[number]): number => 2 * CDX_FIELD_ORDER.indexOf(key);

/** True when bytes `[a, b)` of `u8` are exactly `v`. */
function bytesAre(u8: Uint8Array, a: number, b: number, v: Uint8Array): boolean {
  if (b - a !== v.length) return false;
  for (let i = 0; i < v.length; i++) if (u8[a + i] !== v[i]) return false;
  return true;
}

function isOneOf(u8: Uint8Array, a: number, b: number, values: readonly Uint8Array[]): boolean {
  for (const v of values) if (bytesAre(u8, a, b, v)) return true;
  return false;
}

/**
 * The bytes a string value is equal to. UTF-8: a value with a character above U+007F has a byte ≥ 0x80 and so never
 * equals the bytes of a line the gate is asked about (ASCII), as the string never equals the line's value.
 */
const bytesOf = (values: readonly string[]): Uint8Array[] => values.map((v) => Buffer.from(v, 'utf8'));

/** The list rule of compile-filter on the value of `key`: a line without that key fails it. */
function listRule(values: readonly string[], key: (typeof CDX_FIELD_ORDER)[number]): ByteRule {
  const vs = bytesOf(values);
  const k = slot(key);
  const only = vs.length === 1 ? vs[0]! : undefined;
  if (only !== undefined) {
    // one value (status 200): its length, then its bytes
    const n = only.length;
    return (u8, at) => {
      const a = at[k]!;
      if (a < 0 || at[k + 1]! - a !== n) return false;
      for (let i = 0; i < n; i++) if (u8[a + i] !== only[i]) return false;
      return true;
    };
  }
  return (u8, at) => {
    const a = at[k]!;
    return a >= 0 && isOneOf(u8, a, at[k + 1]!, vs);
  };
}

/**
 * The language rule of compile-filter on the raw `languages` value: the record's list is the value split on commas
 * (`[]` when absent or empty); `primary` looks at the first item only, `contains` at each.
 */
function languageRule(mode: 'contains' | 'primary', codes: readonly string[]): ByteRule {
  const vs = bytesOf(codes);
  const k = slot('languages');
  return (u8, at) => {
    const a = at[k]!;
    const b = at[k + 1]!;
    if (a < 0 || a === b) return false;
    for (let s = a, i = a; ; i++) {
      if (i === b || u8[i] === 44) {
        if (isOneOf(u8, s, i, vs)) return true;
        if (mode === 'primary' || i === b) return false;
        s = i + 1;
      }
    }
  };
}

/**
 * The gate of a filter spec (see {@link CdxLineGate}): its status, language, mime and mime-detected rules, in the
 * filter's order, over a line's raw values. The first that fails names the reason, exactly as the compiled filter
 * would, since every rule before it passed and those rules read nothing but these values; when all of them pass the
 * gate cannot decide (the URL and domain rules come after) and the record is made and judged by the filter. Undefined
 * when the spec has none of these rules. Allocation-free per line.
 */
export function lineGateOf(s: FilterSpec): CdxLineGate | undefined {
  const rules: ByteRule[] = [];
  const reasons: DropReason[] = [];
  if (s.status !== null) {
    rules.push(listRule(s.status, 'status'));
    reasons.push('status');
  }
  if (s.languages !== null) {
    rules.push(languageRule(s.languages.mode, s.languages.codes));
    reasons.push('language');
  }
  if (s.mimes) {
    rules.push(listRule(s.mimes, 'mime'));
    reasons.push('mime');
  }
  if (s.mimeDetected) {
    rules.push(listRule(s.mimeDetected, 'mime-detected'));
    reasons.push('mime_detected');
  }
  if (rules.length === 0) return undefined;
  // one call site per rule (the rules are at most four): each sees one function, which it can inline
  const pass: ByteRule = () => true;
  const [r0, r1 = pass, r2 = pass, r3 = pass] = rules;
  return Object.freeze({
    reasons: Object.freeze(reasons),
    drop(u8: Uint8Array, at: Int32Array): number {
      if (!r0!(u8, at)) return 0;
      if (!r1(u8, at)) return 1;
      if (!r2(u8, at)) return 2;
      if (!r3(u8, at)) return 3;
      return -1;
    },
  });
}
